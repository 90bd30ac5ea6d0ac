//! The gateway's two TLS configurations and the choice between them per ClientHello: ALPN
//! `vigil-enroll/1` gets server-only TLS for the Enrollment service; everything else must
//! present an agent certificate (ALPN `h2`) for the AgentLink service. TLS 1.3 only, and no
//! session resumption, so every connection's certificate goes through the verifier.

use std::io;
use std::sync::Arc;

use rustls::ServerConfig;
use rustls::crypto::CryptoProvider;
use rustls::server::{Acceptor, NoServerSessionStorage};
use tokio::net::TcpStream;
use tokio_rustls::LazyConfigAcceptor;
use tokio_rustls::server::TlsStream;

use super::verifier::AgentCertVerifier;
use crate::agents::RevocationSet;
use crate::pki::{CertificateAuthority, GatewayIdentity};
use crate::{Error, Result};

/// The ALPN protocol of enrollment connections.
pub const ENROLL_ALPN: &[u8] = b"vigil-enroll/1";
/// The ALPN protocol of agent-link connections.
pub const LINK_ALPN: &[u8] = b"h2";

/// Which service a connection is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionKind {
    /// `vigil-enroll/1`: no client certificate, Enrollment only.
    Enroll,
    /// An agent with a verified client certificate: AgentLink only.
    Link,
}

/// The two server configurations of the gateway.
#[derive(Debug, Clone)]
pub struct GatewayTls {
    enroll: Arc<ServerConfig>,
    link: Arc<ServerConfig>,
}

fn tls_error(what: &'static str) -> impl FnOnce(rustls::Error) -> Error {
    move |e| Error::Certificate(format!("{what}: {e}"))
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

impl GatewayTls {
    /// Builds both configurations from the gateway identity, trusting `ca` for clients.
    pub fn new(
        identity: &GatewayIdentity,
        ca: &CertificateAuthority,
        revoked: Arc<RevocationSet>,
    ) -> Result<Self> {
        let verifier = AgentCertVerifier::new(ca.der(), revoked, provider())?;

        let mut enroll = ServerConfig::builder_with_provider(provider())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(tls_error("TLS 1.3"))?
            .with_no_client_auth()
            .with_single_cert(identity.chain.clone(), identity.key.clone_key())
            .map_err(tls_error("gateway certificate"))?;
        enroll.alpn_protocols = vec![ENROLL_ALPN.to_vec()];
        enroll.session_storage = Arc::new(NoServerSessionStorage {});
        enroll.send_tls13_tickets = 0;

        let mut link = ServerConfig::builder_with_provider(provider())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(tls_error("TLS 1.3"))?
            .with_client_cert_verifier(Arc::new(verifier))
            .with_single_cert(identity.chain.clone(), identity.key.clone_key())
            .map_err(tls_error("gateway certificate"))?;
        link.alpn_protocols = vec![LINK_ALPN.to_vec()];
        link.session_storage = Arc::new(NoServerSessionStorage {});
        link.send_tls13_tickets = 0;

        Ok(GatewayTls {
            enroll: Arc::new(enroll),
            link: Arc::new(link),
        })
    }

    /// Reads the ClientHello, picks the configuration and completes the handshake.
    pub async fn accept(
        &self,
        tcp: TcpStream,
    ) -> io::Result<(ConnectionKind, TlsStream<TcpStream>)> {
        let start = LazyConfigAcceptor::new(Acceptor::default(), tcp).await?;
        let enroll = start
            .client_hello()
            .alpn()
            .is_some_and(|mut protocols| protocols.any(|p| p == ENROLL_ALPN));
        let (kind, config) = if enroll {
            (ConnectionKind::Enroll, self.enroll.clone())
        } else {
            (ConnectionKind::Link, self.link.clone())
        };
        let stream = start.into_stream(config).await?;
        Ok((kind, stream))
    }
}
