//! Mutual TLS of the link between replicas. Each replica issues itself, at start, a
//! certificate from the internal-link CA of the shared secrets (`cluster-ca.pem`), which
//! signs nothing else: an agent's certificate, from the other CA, cannot open this link.
//! Both ends verify the peer against that CA only, with the fixed name
//! [`REPLICA_SERVER_NAME`] (every replica certificate carries it), TLS 1.3, ALPN h2.

use std::sync::Arc;

use rcgen::{KeyPair, SanType};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{ClientConfig, RootCertStore, ServerConfig};
use time::OffsetDateTime;

use crate::pki::CertificateAuthority;
use crate::{Error, Result};

/// The name every replica certificate carries and every replica dials by.
pub const REPLICA_SERVER_NAME: &str = "vigil-replica";
/// How long a replica's own certificate lasts (a new one is issued at every start).
const REPLICA_CERT_LIFETIME: time::Duration = time::Duration::days(365);

/// This replica's TLS configurations for the internal link.
#[derive(Debug, Clone)]
pub struct ClusterTls {
    /// For the `--cluster-listen` listener: replica client certificates required.
    pub server: Arc<ServerConfig>,
    /// For dialing the other replicas.
    pub client: Arc<ClientConfig>,
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn tls_error(what: &'static str) -> impl FnOnce(rustls::Error) -> Error {
    move |e| Error::Certificate(format!("{what}: {e}"))
}

impl ClusterTls {
    /// Issues replica `id` a certificate from `ca` and builds both configurations.
    pub fn issue(ca: &CertificateAuthority, id: &str, now: OffsetDateTime) -> Result<ClusterTls> {
        let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)
            .map_err(|e| Error::Certificate(format!("generating a replica key: {e}")))?;
        let name = REPLICA_SERVER_NAME
            .try_into()
            .map_err(|e| Error::Certificate(format!("replica name: {e}")))?;
        let cert = ca.issue_replica_cert(
            id,
            vec![SanType::DnsName(name)],
            &key,
            REPLICA_CERT_LIFETIME,
            now,
        )?;
        let chain = vec![cert.der.clone()];
        let private =
            || -> PrivateKeyDer<'static> { PrivatePkcs8KeyDer::from(key.serialize_der()).into() };
        let mut roots = RootCertStore::empty();
        roots
            .add(CertificateDer::clone(ca.der()))
            .map_err(|e| Error::Certificate(format!("internal-link CA as a trust anchor: {e}")))?;
        let roots = Arc::new(roots);

        let verifier = WebPkiClientVerifier::builder_with_provider(roots.clone(), provider())
            .build()
            .map_err(|e| Error::Certificate(format!("replica verifier: {e}")))?;
        let mut server = ServerConfig::builder_with_provider(provider())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(tls_error("TLS 1.3"))?
            .with_client_cert_verifier(verifier)
            .with_single_cert(chain.clone(), private())
            .map_err(tls_error("replica certificate"))?;
        server.alpn_protocols = vec![b"h2".to_vec()];

        let mut client = ClientConfig::builder_with_provider(provider())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(tls_error("TLS 1.3"))?
            .with_root_certificates(roots)
            .with_client_auth_cert(chain, private())
            .map_err(tls_error("replica client certificate"))?;
        client.alpn_protocols = vec![b"h2".to_vec()];
        Ok(ClusterTls {
            server: Arc::new(server),
            client: Arc::new(client),
        })
    }
}
