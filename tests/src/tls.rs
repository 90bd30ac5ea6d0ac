//! TLS clients with run-time certificates, to probe the gateway's handshake directly.

use rcgen::{CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, SanType};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Which client identity to present.
#[derive(Debug)]
pub enum ClientIdentity<'a> {
    /// No certificate at all.
    None,
    /// A certificate for a fresh agent id from a CA the controller never saw.
    ForeignCa,
    /// The certificate and key of an enrolled agent's state directory.
    StateDir(&'a Path),
}

/// A client config trusting the controller's CA and presenting `identity`.
pub fn foreign_client_config(ca_pem: &Path, identity: ClientIdentity<'_>) -> rustls::ClientConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca_pem).expect("ca.pem") {
        roots.add(cert.expect("ca cert")).expect("add root");
    }
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("tls13")
        .with_root_certificates(roots);
    let mut config = match identity {
        ClientIdentity::None => builder.with_no_client_auth(),
        ClientIdentity::ForeignCa => {
            let (chain, key) = foreign_agent_cert();
            builder
                .with_client_auth_cert(chain, key)
                .expect("client cert")
        }
        ClientIdentity::StateDir(dir) => {
            let chain: Vec<_> = CertificateDer::pem_file_iter(dir.join("agent.pem"))
                .expect("agent.pem")
                .map(|c| c.expect("cert"))
                .collect();
            let key = PrivateKeyDer::from_pem_file(dir.join("agent.key")).expect("agent.key");
            builder
                .with_client_auth_cert(chain, key)
                .expect("client cert")
        }
    };
    config.alpn_protocols = vec![b"h2".to_vec()];
    config
}

fn foreign_agent_cert() -> (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>) {
    let ca_key = KeyPair::generate().expect("key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("params");
    ca.is_ca = IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "not the vigil CA");
    let ca_cert = ca.self_signed(&ca_key).expect("ca");
    let issuer = Issuer::from_params(&ca, &ca_key);
    let key = KeyPair::generate().expect("key");
    let mut leaf = CertificateParams::new(Vec::<String>::new()).expect("params");
    let id = vigil_shared::ids::AgentId::new_random();
    leaf.subject_alt_names = vec![SanType::URI(id.uri().try_into().expect("uri"))];
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let cert = leaf.signed_by(&key, &issuer).expect("leaf");
    let key_der = PrivateKeyDer::try_from(key.serialize_der()).expect("key der");
    (vec![cert.der().clone(), ca_cert.der().clone()], key_der)
}

/// Connect to the gateway, finish the TLS handshake and check the server keeps talking
/// (in TLS 1.3 a refused client certificate shows up as an alert after the handshake).
/// `Ok` when the server answered the HTTP/2 preface with data.
pub async fn gateway_handshake(port: u16, config: rustls::ClientConfig) -> Result<(), String> {
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let name = ServerName::try_from("vigil-gateway").expect("name");
    let mut tls = connector
        .connect(name, tcp)
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    let probe = async {
        tls.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
            .await
            .map_err(|e| format!("write: {e}"))?;
        let mut buf = [0u8; 64];
        match tls.read(&mut buf).await {
            Ok(0) => Err("connection closed by the server".to_owned()),
            Ok(_) => Ok(()),
            Err(e) => Err(format!("read: {e}")),
        }
    };
    tokio::time::timeout(Duration::from_secs(5), probe)
        .await
        .map_err(|_| "no answer".to_owned())?
}

pub use ClientIdentity as Identity;
