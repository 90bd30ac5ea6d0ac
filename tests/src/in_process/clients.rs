//! Real TLS clients of the gateway: the fingerprint-pinned enrollment client, agent mTLS
//! clients (enrolled, certificate-less, or from a foreign CA), tonic channels over them, a
//! and the agent side of an AgentLink stream. Raw handshake probes are
//! [`crate::gateway_handshake`].

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rcgen::{CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, SanType};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::{Channel, Endpoint};
use tonic::{Status, Streaming};
use vigil_proto::agent::v1::agent_link_client::AgentLinkClient;
use vigil_proto::agent::v1::enrollment_client::EnrollmentClient;
use vigil_proto::agent::v1::{
    AgentMessage, ControllerMessage, EnrollRequest, EnrollResponse, Hello, agent_message,
};

use super::TestController;

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn tls13() -> rustls::ConfigBuilder<ClientConfig, rustls::WantsVerifier> {
    ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
}

/// The enrollment client: pinned CA fingerprint, no client certificate, ALPN `vigil-enroll/1`.
pub fn enroll_config(ca_fingerprint: &str) -> ClientConfig {
    // The agent's own verifier (`vigil-agent join`): one definition of the pin.
    let verifier = vigil_agent::link::PinnedCaVerifier::new(
        vigil_shared::tls::normalize_fingerprint(ca_fingerprint).unwrap_or_default(),
        provider(),
    );
    let mut config = tls13()
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"vigil-enroll/1".to_vec()];
    config
}

fn roots(ca_pem: &str) -> RootCertStore {
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(ca_pem.as_bytes()).unwrap())
        .unwrap();
    roots
}

/// An agent client presenting `cert_pem` with `key` (ALPN `h2`).
pub fn agent_config(ca_pem: &str, cert_pem: &str, key: &KeyPair) -> ClientConfig {
    let chain = vec![CertificateDer::from_pem_slice(cert_pem.as_bytes()).unwrap()];
    let key = PrivateKeyDer::try_from(key.serialize_der()).unwrap();
    let mut config = tls13()
        .with_root_certificates(roots(ca_pem))
        .with_client_auth_cert(chain, key)
        .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec()];
    config
}

/// A client without a certificate (ALPN `h2`).
pub fn no_cert_config(ca_pem: &str) -> ClientConfig {
    let mut config = tls13()
        .with_root_certificates(roots(ca_pem))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    config
}

/// A client with an agent certificate from a CA the controller never saw.
pub fn foreign_cert_config(ca_pem: &str) -> ClientConfig {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, "Vigil CA");
    let issuer = Issuer::from_params(&ca, &ca_key);
    let key = KeyPair::generate().unwrap();
    let mut leaf = CertificateParams::new(Vec::<String>::new()).unwrap();
    let id = vigil_shared::ids::AgentId::new_random();
    leaf.subject_alt_names = vec![SanType::URI(id.uri().try_into().unwrap())];
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let cert = leaf.signed_by(&key, &issuer).unwrap();
    agent_config(ca_pem, &cert.pem(), &key)
}

/// A tonic channel to the gateway over `config`, verifying the name `vigil-gateway`.
pub async fn channel(
    addr: SocketAddr,
    config: ClientConfig,
) -> Result<Channel, tonic::transport::Error> {
    let config = Arc::new(config);
    let connector = tower::service_fn(move |_: tonic::codegen::http::Uri| {
        let config = config.clone();
        async move {
            let tcp = TcpStream::connect(addr).await?;
            let name = ServerName::try_from("vigil-gateway").unwrap();
            let tls = tokio_rustls::TlsConnector::from(config)
                .connect(name, tcp)
                .await?;
            Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(tls))
        }
    });
    Endpoint::from_static("http://vigil-gateway")
        .connect_with_connector(connector)
        .await
}

/// An enrolled identity: its key, certificate and the controller's answer.
#[derive(Debug)]
pub struct Enrolled {
    /// The agent id the controller assigned.
    pub id: String,
    /// The key the CSR was made with.
    pub key: KeyPair,
    /// The controller's answer (certificate and CA chain).
    pub response: EnrollResponse,
}

/// A PEM CSR for a fresh P-256 key.
pub fn csr(key: &KeyPair) -> String {
    CertificateParams::default()
        .serialize_request(key)
        .unwrap()
        .pem()
        .unwrap()
}

/// Enrolls over the pinned enrollment connection.
pub async fn enroll(
    ctrl: &TestController,
    token: &str,
    hostname: &str,
    previous: &str,
) -> Result<Enrolled, Status> {
    let channel = channel(
        ctrl.running.grpc_addr,
        enroll_config(&ctrl.running.ca_fingerprint),
    )
    .await
    .map_err(|e| Status::unavailable(e.to_string()))?;
    let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let request = EnrollRequest {
        token: token.to_owned(),
        csr_pem: csr(&key),
        hostname: hostname.to_owned(),
        version: "0.1.0-test".to_owned(),
        previous_agent_id: previous.to_owned(),
    };
    let response = EnrollmentClient::new(channel)
        .enroll(request)
        .await?
        .into_inner();
    Ok(Enrolled {
        id: response.agent_id.clone(),
        key,
        response,
    })
}

/// The agent side of one AgentLink stream.
#[derive(Debug)]
pub struct FakeAgent {
    /// Messages to the controller.
    pub outbound: mpsc::Sender<AgentMessage>,
    /// Messages from the controller.
    pub inbound: Streaming<ControllerMessage>,
}

/// A hello for `agent_id`.
pub fn hello(agent_id: &str, read_only: bool) -> AgentMessage {
    AgentMessage {
        kind: Some(agent_message::Kind::Hello(Hello {
            agent_id: agent_id.to_owned(),
            version: "0.1.0-test".into(),
            hostname: "test-host".into(),
            os: "linux".into(),
            arch: "x86_64".into(),
            capabilities: vec!["host".into()],
            read_only,
        })),
    }
}

/// Opens a stream with `enrolled`'s certificate and sends `first` (normally its hello).
pub async fn connect(
    ctrl: &TestController,
    enrolled: &Enrolled,
    first: AgentMessage,
) -> Result<FakeAgent, Status> {
    let config = agent_config(
        &enrolled.response.ca_chain_pem,
        &enrolled.response.certificate_pem,
        &enrolled.key,
    );
    let channel = channel(ctrl.running.grpc_addr, config)
        .await
        .map_err(|e| Status::unavailable(format!("{e:?}")))?;
    let (tx, rx) = mpsc::channel(64);
    tx.send(first).await.unwrap();
    let response = AgentLinkClient::new(channel)
        .connect(ReceiverStream::new(rx))
        .await?;
    Ok(FakeAgent {
        outbound: tx,
        inbound: response.into_inner(),
    })
}

impl FakeAgent {
    /// The next message from the controller (fails the test after 10 s).
    pub async fn recv(&mut self) -> Result<Option<ControllerMessage>, Status> {
        tokio::time::timeout(Duration::from_secs(10), self.inbound.message())
            .await
            .expect("a message from the controller within 10 s")
    }

    /// Sends a message to the controller.
    pub async fn send(&self, kind: agent_message::Kind) {
        self.outbound
            .send(AgentMessage { kind: Some(kind) })
            .await
            .unwrap();
    }
}
