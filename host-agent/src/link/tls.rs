//! TLS 1.3 client configurations and the one-shot tonic connector.
//!
//! The agent does the TCP connect and TLS handshake itself (so every failure maps to a
//! clear [`Error`]) and then hands the finished stream to tonic through
//! `Endpoint::connect_with_connector`. Whatever host or address the URL holds, the server
//! name checked in the gateway certificate is `vigil-gateway`.

use super::pin::{PinnedCaVerifier, pin_mismatch};
use crate::GATEWAY_SERVER_NAME;
use crate::error::{Error, Result};
use hyper_util::rt::TokioIo;
use rustls::ClientConfig;
use rustls::RootCertStore;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;
use tonic::transport::{Channel, Endpoint, Uri};

/// ALPN protocol of enrollment connections.
pub const ENROLL_ALPN: &[u8] = b"vigil-enroll/1";
/// ALPN protocol of the agent link.
pub const LINK_ALPN: &[u8] = b"h2";
/// The gateway's default port.
pub const DEFAULT_PORT: u16 = 8641;
/// How long the TCP connect and the TLS handshake may take together.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// The controller's gateway address, from `--url https://HOST[:PORT]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerUrl {
    host: String,
    port: u16,
}

impl ControllerUrl {
    /// `host:port`, with brackets around an IPv6 address.
    pub fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

impl fmt::Display for ControllerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "https://{}", self.authority())
    }
}

impl FromStr for ControllerUrl {
    type Err = Error;

    fn from_str(input: &str) -> Result<Self> {
        let bad = |why: &str| {
            Error::Usage(format!(
                "invalid --url {input:?}: {why} (expected https://HOST[:PORT])"
            ))
        };
        let trimmed = input.trim();
        let rest = trimmed
            .get(..8)
            .filter(|scheme| scheme.eq_ignore_ascii_case("https://"))
            .map(|_| &trimmed[8..])
            .ok_or_else(|| bad("the scheme must be https"))?;
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains(['/', '@', '?', '#']) || rest.is_empty() {
            return Err(bad("only a host and a port are allowed"));
        }
        let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
            let (host, after) = v6.split_once(']').ok_or_else(|| bad("unclosed '['"))?;
            (host, after.strip_prefix(':'))
        } else {
            match rest.rsplit_once(':') {
                Some((host, port)) if !host.contains(':') => (host, Some(port)),
                Some(_) => return Err(bad("put an IPv6 address in brackets")),
                None => (rest, None),
            }
        };
        let port = match port {
            None => DEFAULT_PORT,
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|p| *p != 0)
                .ok_or_else(|| bad("the port must be a number from 1 to 65535"))?,
        };
        if host.is_empty() {
            return Err(bad("the host is empty"));
        }
        Ok(ControllerUrl {
            host: host.to_owned(),
            port,
        })
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn builder() -> Result<rustls::ConfigBuilder<ClientConfig, rustls::WantsVerifier>> {
    Ok(ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])?)
}

/// The enrollment configuration: no client certificate, the CA pinned by fingerprint.
pub fn enroll_config(fingerprint: &str) -> Result<ClientConfig> {
    let verifier = PinnedCaVerifier::new(fingerprint.to_owned(), provider());
    let mut config = builder()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    config.alpn_protocols = vec![ENROLL_ALPN.to_vec()];
    Ok(config)
}

/// The link configuration: the agent's certificate, and `ca.pem` as the only roots.
pub fn link_config(ca_pem: &str, cert_pem: &str, key_pem: &str) -> Result<ClientConfig> {
    let mut roots = RootCertStore::empty();
    for cert in parse_certs(ca_pem, "ca.pem")? {
        roots
            .add(cert)
            .map_err(|e| Error::Crypto(format!("ca.pem: {e}")))?;
    }
    let chain = parse_certs(cert_pem, "agent.pem")?;
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes())
        .map_err(|e| Error::Crypto(format!("agent.key: {e}")))?;
    let mut config = builder()?
        .with_root_certificates(roots)
        .with_client_auth_cert(chain, key)?;
    config.alpn_protocols = vec![LINK_ALPN.to_vec()];
    Ok(config)
}

/// Every certificate of a PEM bundle; at least one.
pub fn parse_certs(pem: &str, what: &str) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Error::Crypto(format!("{what}: {e}")))?;
    if certs.is_empty() {
        return Err(Error::Crypto(format!("{what}: no certificate found")));
    }
    Ok(certs)
}

/// TCP connect and TLS handshake with the gateway.
pub async fn dial(url: &ControllerUrl, config: Arc<ClientConfig>) -> Result<TlsStream<TcpStream>> {
    let name =
        ServerName::try_from(GATEWAY_SERVER_NAME).map_err(|e| Error::Crypto(e.to_string()))?;
    let connect = async {
        let tcp = TcpStream::connect((url.host.as_str(), url.port))
            .await
            .map_err(|source| Error::Connect {
                url: url.to_string(),
                source: explain_connect(source),
            })?;
        let _ = tcp.set_nodelay(true);
        TlsConnector::from(config)
            .connect(name, tcp)
            .await
            .map_err(|e| handshake_error(url, e))
    };
    tokio::time::timeout(CONNECT_TIMEOUT, connect)
        .await
        .map_err(|_| Error::Connect {
            url: url.to_string(),
            source: std::io::Error::new(std::io::ErrorKind::TimedOut, "timed out"),
        })?
}

/// Replace the OS's terse wording for the common cases.
fn explain_connect(error: std::io::Error) -> std::io::Error {
    use std::io::ErrorKind::*;
    let text = match error.kind() {
        ConnectionRefused => "connection refused (is the controller running and listening there?)",
        HostUnreachable | NetworkUnreachable => "no route to the host",
        _ => return error,
    };
    std::io::Error::new(error.kind(), text)
}

fn handshake_error(url: &ControllerUrl, error: std::io::Error) -> Error {
    let tls = error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>());
    match tls {
        Some(e) if pin_mismatch(e).is_some() => Error::CaMismatch {
            url: url.to_string(),
            expected: pin_mismatch(e)
                .map(|p| p.expected.clone())
                .unwrap_or_default(),
        },
        Some(e) => Error::Tls {
            url: url.to_string(),
            message: e.to_string(),
        },
        None => Error::Connect {
            url: url.to_string(),
            source: error,
        },
    }
}

/// A tonic channel over an established TLS stream (used once; no reconnects inside).
pub async fn channel(url: &ControllerUrl, stream: TlsStream<TcpStream>) -> Result<Channel> {
    let endpoint = Endpoint::from_shared(format!("http://{}", url.authority()))
        .map_err(|e| Error::Usage(format!("invalid --url {url}: {e}")))?
        .http2_keep_alive_interval(Duration::from_secs(20))
        .keep_alive_timeout(Duration::from_secs(20))
        .keep_alive_while_idle(true);
    let mut slot = Some(stream);
    let connector = tower::service_fn(move |_: Uri| {
        let io = slot.take();
        async move {
            io.map(TokioIo::new).ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "the link's connection is closed",
                )
            })
        }
    });
    endpoint
        .connect_with_connector(connector)
        .await
        .map_err(|e| Error::Tls {
            url: url.to_string(),
            message: error_chain(&e),
        })
}

/// An error and all its sources, joined with `: `.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        let next = e.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = e.source();
    }
    text
}

#[cfg(test)]
#[path = "tls_tests.rs"]
mod tests;
