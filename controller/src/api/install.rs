//! One-line agent installation: `GET /install.sh` (the POSIX script in `deploy/`),
//! `GET /download/vigil-agent?arch=…` (an agent binary with its SHA-256 in
//! `X-Vigil-Sha256`) and [`InstallSite`], which writes the install line that
//! `POST /api/join-tokens` returns. The site reaches handlers as a request extension.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Extension;
use axum::body::Body;
use axum::extract::Query;
use axum::http::HeaderName;
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use tokio::io::AsyncReadExt;
use tokio_util::io::ReaderStream;

use crate::{Error, Result};

/// The install script, served as is.
pub const INSTALL_SH: &str = include_str!("../../../deploy/install.sh");
/// The header carrying the lowercase hex SHA-256 of a download.
pub const SHA256_HEADER: &str = "x-vigil-sha256";
/// The architectures the download endpoint knows (`uname -m` names).
pub const ARCHES: [&str; 2] = ["x86_64", "aarch64"];
/// The agent binary.
pub const AGENT: &str = "vigil-agent";

/// What install lines and downloads need to know about this controller.
#[derive(Debug, Clone)]
pub struct InstallSite {
    /// Where agent binaries are read from.
    pub agent_dir: PathBuf,
    /// The HTTP API's base URL as hosts reach it (no trailing slash).
    pub base_url: String,
    /// The gateway URL agents join (`https://HOST:PORT`).
    pub gateway_url: String,
    /// `sha256:<hex>` of the CA.
    pub ca_fingerprint: String,
    /// `sha256//<base64>` of the HTTP certificate's public key, when curl must pin it.
    pub pin: Option<String>,
}

impl InstallSite {
    /// The site of a controller serving HTTP on `http_addr` and the gateway on
    /// `grpc_addr`; `pin` is set when curl must pin the HTTP certificate's key.
    pub fn new(
        config: &crate::config::Config,
        http_addr: std::net::SocketAddr,
        grpc_addr: std::net::SocketAddr,
        ca_fingerprint: String,
        pin: Option<String>,
    ) -> InstallSite {
        let reachable = |addr: std::net::SocketAddr| -> String {
            match addr.ip() {
                ip if ip.is_unspecified() => "127.0.0.1".to_owned(),
                std::net::IpAddr::V6(ip) => format!("[{ip}]"),
                ip => ip.to_string(),
            }
        };
        let (base_url, host) = match &config.public_url {
            Some(url) => (
                url.as_str().trim_end_matches('/').to_owned(),
                url.host_str().unwrap_or("127.0.0.1").to_owned(),
            ),
            None => {
                let scheme = if config.http_tls.is_some() {
                    "https"
                } else {
                    "http"
                };
                let host = reachable(http_addr);
                (format!("{scheme}://{host}:{}", http_addr.port()), host)
            }
        };
        let pin = pin.filter(|_| {
            !(config.install_trust_system_roots
                && matches!(config.http_tls, Some(crate::config::HttpTls::Files { .. })))
        });
        InstallSite {
            agent_dir: config.agent_dir.clone(),
            gateway_url: format!("https://{host}:{}", grpc_addr.port()),
            base_url,
            ca_fingerprint,
            pin,
        }
    }

    /// The ready-to-paste install line for `token`.
    pub fn install_line(&self, token: &str) -> String {
        let base = &self.base_url;
        let (curl_flags, script_flags) = match &self.pin {
            // curl refuses a chain it cannot verify even when the key matches the pin; with
            // --insecure the pin (checked regardless) is what authenticates the server.
            Some(pin) => (
                format!(" --insecure --pinnedpubkey {pin}"),
                format!(" --pinnedpubkey {pin}"),
            ),
            None if base.starts_with("http://") => {
                (String::new(), " --insecure-http-ok".to_owned())
            }
            None => (String::new(), String::new()),
        };
        format!(
            "curl -fsSL{curl_flags} {base}/install.sh | sh -s -- --controller {base}{script_flags} \
             --url {} --token {token} --ca-fingerprint {}",
            self.gateway_url, self.ca_fingerprint
        )
    }
}

/// `GET /install.sh`.
pub async fn script() -> Response {
    (
        [(CONTENT_TYPE, "text/x-shellscript; charset=utf-8")],
        INSTALL_SH,
    )
        .into_response()
}

/// The query of `GET /download/vigil-agent`.
#[derive(Debug, Deserialize)]
pub struct DownloadQuery {
    /// `x86_64` or `aarch64`; this host's architecture when absent.
    pub arch: Option<String>,
}

/// The agent binary for `arch` in `dir` ([`binary`] of [`AGENT`]).
pub fn agent_binary(dir: &Path, arch: &str) -> Result<PathBuf> {
    binary(dir, AGENT, arch)
}

/// The binary `name` (such as [`AGENT`]) for `arch` in `dir`: `<name>-<arch>`, or
/// `<name>` when `arch` is this host's architecture.
pub fn binary(dir: &Path, name: &str, arch: &str) -> Result<PathBuf> {
    if !ARCHES.contains(&arch) {
        return Err(Error::NotFound(format!(
            "unknown architecture {arch:?}; known: {}",
            ARCHES.join(", ")
        )));
    }
    let specific = dir.join(format!("{name}-{arch}"));
    if specific.is_file() {
        return Ok(specific);
    }
    let native = dir.join(name);
    if arch == std::env::consts::ARCH && native.is_file() {
        return Ok(native);
    }
    Err(Error::NotFound(format!(
        "no {name} binary for {arch} in the controller's agent directory"
    )))
}

/// Lowercase hex SHA-256 of a file, read in chunks.
async fn sha256_file(path: &Path) -> Result<(String, u64)> {
    let mut file = tokio::fs::File::open(path)
        .await
        .map_err(Error::file("reading", path))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut len = 0u64;
    loop {
        let n = file
            .read(&mut buf)
            .await
            .map_err(Error::file("reading", path))?;
        if n == 0 {
            return Ok((hex::encode(hasher.finalize()), len));
        }
        hasher.update(&buf[..n]);
        len += n as u64;
    }
}

/// `GET /download/vigil-agent?arch=…`: streams the agent binary ([`serve`]).
pub async fn download(
    Extension(site): Extension<Arc<InstallSite>>,
    Query(query): Query<DownloadQuery>,
) -> Result<Response> {
    serve(&site, AGENT, query).await
}

/// Streams the binary `name` for the query's architecture; `X-Vigil-Sha256` is the hash of
/// the bytes of the file being served.
async fn serve(site: &InstallSite, name: &str, query: DownloadQuery) -> Result<Response> {
    let arch = query.arch.as_deref().unwrap_or(std::env::consts::ARCH);
    let path = binary(&site.agent_dir, name, arch)?;
    let (sha256, len) = sha256_file(&path).await?;
    let file = tokio::fs::File::open(&path)
        .await
        .map_err(Error::file("reading", &path))?;
    tracing::info!(binary = name, arch, path = %path.display(), %sha256, bytes = len, "serving an agent binary");
    Ok((
        [
            (CONTENT_TYPE, "application/octet-stream".to_owned()),
            (CONTENT_LENGTH, len.to_string()),
            (HeaderName::from_static(SHA256_HEADER), sha256),
        ],
        Body::from_stream(ReaderStream::new(file.take(len))),
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(pin: Option<&str>, base: &str) -> InstallSite {
        InstallSite {
            agent_dir: PathBuf::from("/nonexistent"),
            base_url: base.into(),
            gateway_url: "https://ctrl.lan:8641".into(),
            ca_fingerprint: "sha256:ab".into(),
            pin: pin.map(str::to_owned),
        }
    }

    #[test]
    fn install_lines_pin_when_they_must() {
        let line = site(Some("sha256//K="), "https://ctrl.lan:8640").install_line("vjt_1");
        assert_eq!(
            line,
            "curl -fsSL --insecure --pinnedpubkey sha256//K= https://ctrl.lan:8640/install.sh \
             | sh -s -- --controller https://ctrl.lan:8640 --pinnedpubkey sha256//K= \
             --url https://ctrl.lan:8641 --token vjt_1 --ca-fingerprint sha256:ab"
        );
        let line = site(None, "http://127.0.0.1:8640").install_line("vjt_1");
        assert!(
            line.starts_with("curl -fsSL http://127.0.0.1:8640/install.sh"),
            "{line}"
        );
        assert!(line.contains("--insecure-http-ok"), "{line}");
        let line = site(None, "https://public.example").install_line("vjt_1");
        assert!(
            !line.contains("insecure") && !line.contains("pinned"),
            "{line}"
        );
    }

    #[test]
    fn binaries_are_found_by_arch() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("vigil-agent"), b"native").unwrap();
        std::fs::write(tmp.path().join("vigil-agent-aarch64"), b"arm").unwrap();
        let arm = agent_binary(tmp.path(), "aarch64").unwrap();
        assert!(arm.ends_with("vigil-agent-aarch64"));
        let native = agent_binary(tmp.path(), std::env::consts::ARCH).unwrap();
        assert!(
            native.ends_with(format!("vigil-agent-{}", std::env::consts::ARCH))
                || native.ends_with("vigil-agent")
        );
        assert!(matches!(
            agent_binary(tmp.path(), "mips"),
            Err(Error::NotFound(_))
        ));
        let missing = binary(tmp.path(), "vigil-other", "aarch64");
        assert!(matches!(missing, Err(Error::NotFound(m)) if m.contains("vigil-other")));
        assert!(INSTALL_SH.starts_with("#!/bin/sh"));
    }
}
