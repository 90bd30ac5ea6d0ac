//! TLS on the HTTP API (`--http-tls`): the certificate (issued by the controller's CA and
//! kept in the data directory, or the operator's `--http-cert`/`--http-key`), the
//! `sha256//…` pin of its public key that install lines give curl, and [`TlsListener`],
//! which hands axum TLS streams (handshakes run concurrently, failures are logged).

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use base64::Engine;
use rcgen::{KeyPair, PublicKeyData};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use sha2::{Digest, Sha256};
use time::{Duration, OffsetDateTime};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;
use x509_parser::prelude::{FromDer, X509Certificate};

use axum::Router;
use tokio_util::sync::CancellationToken;

use crate::config::{Config, HttpTls};
use crate::data_dir::DataDir;
use crate::pki::{CertificateAuthority, GatewaySan, gateway_cert};
use crate::{Error, Result};

/// The HTTP certificate issued by the CA.
pub const HTTP_PEM: &str = "http.pem";
/// Its private key (kept across re-issues, so the pin stays the same).
pub const HTTP_KEY: &str = "http.key";
const LIFETIME: Duration = Duration::days(365);
const RENEW_BEFORE: Duration = Duration::days(30);

/// The HTTP API's certificate chain, key and public-key pin.
pub struct HttpCert {
    /// Leaf first.
    pub chain: Vec<CertificateDer<'static>>,
    /// The private key.
    pub key: PrivateKeyDer<'static>,
    /// `sha256//<base64 of SHA-256 of the DER SubjectPublicKeyInfo>` of the leaf.
    pub pin: String,
}

impl std::fmt::Debug for HttpCert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpCert")
            .field("pin", &self.pin)
            .finish_non_exhaustive()
    }
}

/// curl's `--pinnedpubkey` value for a certificate.
pub fn spki_pin(cert: &CertificateDer<'_>) -> Result<String> {
    let (_, parsed) = X509Certificate::from_der(cert)
        .map_err(|e| Error::Certificate(format!("parsing the HTTP certificate: {e}")))?;
    let digest = Sha256::digest(parsed.tbs_certificate.subject_pki.raw);
    Ok(format!(
        "sha256//{}",
        base64::engine::general_purpose::STANDARD.encode(digest)
    ))
}

/// Loads or issues the certificate `tls` asks for.
pub fn load(
    tls: &HttpTls,
    dir: &DataDir,
    ca: &CertificateAuthority,
    sans: &BTreeSet<GatewaySan>,
    now: OffsetDateTime,
) -> Result<HttpCert> {
    match tls {
        HttpTls::Files { cert, key } => from_files(cert, key),
        HttpTls::IssuedByCa => load_or_issue(dir, ca, sans, now),
    }
}

fn from_files(cert: &Path, key: &Path) -> Result<HttpCert> {
    let read = |path: &Path| std::fs::read(path).map_err(Error::file("reading", path));
    let cert_pem = read(cert)?;
    let chain = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::Config(format!("--http-cert {}: {e}", cert.display())))?;
    let leaf = chain.first().ok_or_else(|| {
        Error::Config(format!(
            "--http-cert {} holds no certificate",
            cert.display()
        ))
    })?;
    let pin = spki_pin(leaf)?;
    let key = PrivateKeyDer::from_pem_slice(&read(key)?)
        .map_err(|e| Error::Config(format!("--http-key {}: {e}", key.display())))?;
    Ok(HttpCert { chain, key, pin })
}

fn load_or_issue(
    dir: &DataDir,
    ca: &CertificateAuthority,
    sans: &BTreeSet<GatewaySan>,
    now: OffsetDateTime,
) -> Result<HttpCert> {
    let _lock = dir.lock()?;
    let key = match dir.read_optional(HTTP_KEY)? {
        Some(pem) => KeyPair::from_pem(&pem)
            .map_err(|e| Error::Certificate(format!("reading {HTTP_KEY}: {e}")))?,
        None => {
            let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)
                .map_err(|e| Error::Certificate(format!("generating the HTTP key: {e}")))?;
            dir.write_private(HTTP_KEY, key.serialize_pem().as_bytes())?;
            key
        }
    };
    let key_der = PrivateKeyDer::try_from(key.serialize_der())
        .map_err(|e| Error::Certificate(format!("HTTP key: {e}")))?;
    let existing = dir
        .read_optional(HTTP_PEM)?
        .and_then(|pem| CertificateDer::from_pem_slice(pem.as_bytes()).ok());
    if let Some(cert) = existing
        && still_good(&cert, &key, sans, now)
    {
        let pin = spki_pin(&cert)?;
        return Ok(HttpCert {
            chain: vec![cert, ca.der().clone()],
            key: key_der,
            pin,
        });
    }
    let rcgen_sans = sans
        .iter()
        .map(|san| match san {
            GatewaySan::Ip(ip) => Ok(rcgen::SanType::IpAddress(*ip)),
            GatewaySan::Dns(name) => name
                .clone()
                .try_into()
                .map(rcgen::SanType::DnsName)
                .map_err(|e| Error::Certificate(format!("SAN {name}: {e}"))),
        })
        .collect::<Result<Vec<_>>>()?;
    let issued = ca.issue_server_cert(rcgen_sans, &key, LIFETIME, now)?;
    dir.write_public(HTTP_PEM, issued.pem.as_bytes())?;
    let pin = spki_pin(&issued.der)?;
    let names: Vec<String> = sans.iter().map(ToString::to_string).collect();
    tracing::info!(sans = %names.join(","), %pin, "issued the HTTP API certificate");
    Ok(HttpCert {
        chain: vec![issued.der, ca.der().clone()],
        key: key_der,
        pin,
    })
}

/// True when `cert` is for `key`, has exactly `sans` and does not expire soon.
fn still_good(
    cert: &CertificateDer<'_>,
    key: &KeyPair,
    sans: &BTreeSet<GatewaySan>,
    now: OffsetDateTime,
) -> bool {
    let Ok((_, parsed)) = X509Certificate::from_der(cert) else {
        return false;
    };
    let fresh = parsed.validity().not_after.timestamp() > (now + RENEW_BEFORE).unix_timestamp();
    let same_key = parsed.tbs_certificate.subject_pki.raw == key.subject_public_key_info();
    let present: BTreeSet<String> = parsed
        .subject_alternative_name()
        .ok()
        .flatten()
        .map(|ext| {
            ext.value
                .general_names
                .iter()
                .filter_map(|name| match name {
                    x509_parser::extensions::GeneralName::DNSName(d) => {
                        Some(format!("DNS:{}", d.to_ascii_lowercase()))
                    }
                    x509_parser::extensions::GeneralName::IPAddress(b) => match b.len() {
                        4 => <[u8; 4]>::try_from(*b)
                            .ok()
                            .map(|a| format!("IP:{}", std::net::IpAddr::from(a))),
                        16 => <[u8; 16]>::try_from(*b)
                            .ok()
                            .map(|a| format!("IP:{}", std::net::IpAddr::from(a))),
                        _ => None,
                    },
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    let wanted: BTreeSet<String> = sans.iter().map(ToString::to_string).collect();
    fresh && same_key && present == wanted
}

/// The HTTP certificate `config` asks for, if any (loaded before any socket is bound).
pub fn prepare(
    config: &Config,
    dir: &DataDir,
    ca: &CertificateAuthority,
) -> Result<Option<HttpCert>> {
    let Some(tls) = &config.http_tls else {
        return Ok(None);
    };
    let mut extra = config.gateway_sans.clone();
    if let Some(host) = config.public_url.as_ref().and_then(|url| url.host_str()) {
        extra.push(GatewaySan::parse(
            host.trim_start_matches('[').trim_end_matches(']'),
        )?);
    }
    let sans = gateway_cert::gateway_sans(gateway_cert::local_hostname().as_deref(), &extra);
    load(tls, dir, ca, &sans, OffsetDateTime::now_utc()).map(Some)
}

/// Serves `router` on `listener` until `shutdown`: over TLS with `cert`, or plain HTTP.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    cert: Option<HttpCert>,
    shutdown: CancellationToken,
) -> Result<()> {
    let Some(cert) = cert else {
        return crate::api::serve(listener, router, shutdown).await;
    };
    axum::serve(
        TlsListener::new(listener, &cert)?,
        router.into_make_service(),
    )
    .with_graceful_shutdown(shutdown.cancelled_owned())
    .await
    .map_err(|e| Error::Network(format!("HTTPS server: {e}")))
}

/// A TLS listener for `axum::serve`: accepts TCP, runs handshakes in their own tasks.
#[derive(Debug)]
pub struct TlsListener {
    local: SocketAddr,
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
}

impl TlsListener {
    /// Starts accepting on `listener` with `cert`.
    pub fn new(listener: TcpListener, cert: &HttpCert) -> Result<TlsListener> {
        let local = listener
            .local_addr()
            .map_err(|e| Error::Network(format!("local address: {e}")))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::Certificate(format!("HTTP TLS: {e}")))?
            .with_no_client_auth()
            .with_single_cert(cert.chain.clone(), cert.key.clone_key())
            .map_err(|e| {
                Error::Config(format!("the HTTP certificate and key do not match: {e}"))
            })?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let (tx, ready) = mpsc::channel(64);
        tokio::spawn(accept_loop(listener, acceptor, tx));
        Ok(TlsListener { local, ready })
    }
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    tx: mpsc::Sender<(TlsStream<TcpStream>, SocketAddr)>,
) {
    loop {
        let (tcp, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::warn!(%error, "HTTP accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        if tx.is_closed() {
            return;
        }
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "cannot set TCP_NODELAY");
        }
        let (acceptor, tx) = (acceptor.clone(), tx.clone());
        tokio::spawn(async move {
            let handshake =
                tokio::time::timeout(std::time::Duration::from_secs(10), acceptor.accept(tcp));
            match handshake.await {
                Ok(Ok(stream)) => {
                    let _ = tx.send((stream, peer)).await;
                }
                Ok(Err(error)) => tracing::debug!(%error, %peer, "HTTP TLS handshake failed"),
                Err(_) => tracing::debug!(%peer, "HTTP TLS handshake timed out"),
            }
        });
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(accepted) => accepted,
            // The accept loop never ends while we hold the receiver.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pin_survives_a_reissue_and_matches_the_key() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path());
        let now = OffsetDateTime::now_utc();
        let (ca, _) = CertificateAuthority::create(now).unwrap();
        let sans: BTreeSet<_> = [GatewaySan::parse("ctrl.lan").unwrap()].into();
        let first = load_or_issue(&dir, &ca, &sans, now).unwrap();
        assert!(first.pin.starts_with("sha256//") && first.pin.len() == 8 + 44);
        let again = load_or_issue(&dir, &ca, &sans, now).unwrap();
        assert_eq!(again.chain[0], first.chain[0]);
        let more: BTreeSet<_> = [GatewaySan::parse("10.0.0.9").unwrap()].into();
        let changed = load_or_issue(&dir, &ca, &more, now).unwrap();
        assert_ne!(changed.chain[0], first.chain[0]);
        assert_eq!(changed.pin, first.pin, "same key, same pin");
        let files = from_files(&dir.path(HTTP_PEM), &dir.path(HTTP_KEY)).unwrap();
        assert_eq!(files.pin, first.pin);
    }
}
