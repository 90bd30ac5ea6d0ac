//! A fake gateway: real TLS 1.3 (enrollment by ALPN, mTLS otherwise), real tonic services,
//! scripted by the test through channels.

use super::pki::Pki;
use crate::state::now_unix;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};
use vigil_proto::agent::v1::agent_link_server::{AgentLink, AgentLinkServer};
use vigil_proto::agent::v1::enrollment_server::{Enrollment, EnrollmentServer};
use vigil_proto::agent::v1::{
    AgentMessage, ControllerMessage, EnrollRequest, EnrollResponse, HelloAck, RenewResponse,
    agent_message, controller_message,
};
use vigil_shared::grant::{GrantSigningKey, signing_key_from_bytes};
use vigil_shared::ids::AgentId;
use vigil_shared::tls::agent_id_from_cert;

/// A join token the fake accepts.
pub const GOOD_TOKEN: &str = "vjt_0123456789abcdef0123456789abcdef";
/// A join token the fake says has expired.
pub const EXPIRED_TOKEN: &str = "vjt_ffffffffffffffffffffffffffffffff";

type Outbound = mpsc::Sender<Result<ControllerMessage, Status>>;

/// How the fake issues certificates.
#[derive(Debug, Clone, Copy)]
pub struct Issuing {
    /// Seconds the certificate's lifetime has already run at issue.
    pub age_s: i64,
    pub lifetime_s: i64,
}

#[derive(Debug)]
struct Shared {
    pki: Pki,
    issuing: Mutex<Issuing>,
    enrolls: Mutex<Vec<EnrollRequest>>,
    inbound: mpsc::UnboundedSender<AgentMessage>,
    current: Mutex<Option<Outbound>>,
    streams: Mutex<u32>,
}

/// A running fake gateway on 127.0.0.1.
#[derive(Debug)]
pub struct FakeGateway {
    pub addr: SocketAddr,
    pub grant_key: GrantSigningKey,
    shared: Arc<Shared>,
    inbound: tokio::sync::Mutex<mpsc::UnboundedReceiver<AgentMessage>>,
}

impl FakeGateway {
    /// Start a gateway with a new CA.
    pub async fn start(issuing: Issuing) -> FakeGateway {
        let (tx, rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            pki: Pki::new(),
            issuing: Mutex::new(issuing),
            enrolls: Mutex::default(),
            inbound: tx,
            current: Mutex::default(),
            streams: Mutex::new(0),
        });
        let grant_key = signing_key_from_bytes(&[5; 32]);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (conns, incoming) = mpsc::channel(16);
        let (enroll_cfg, link_cfg) = server_configs(&shared.pki);
        tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let (conns, enroll_cfg, link_cfg) =
                    (conns.clone(), enroll_cfg.clone(), link_cfg.clone());
                tokio::spawn(async move {
                    let acceptor = tokio_rustls::LazyConfigAcceptor::new(Default::default(), tcp);
                    let Ok(start) = acceptor.await else { return };
                    let enroll = start
                        .client_hello()
                        .alpn()
                        .is_some_and(|mut protocols| protocols.any(|p| p == b"vigil-enroll/1"));
                    let config = if enroll { enroll_cfg } else { link_cfg };
                    if let Ok(tls) = start.into_stream(config).await {
                        let _ = conns.send(Ok::<_, std::io::Error>(tls)).await;
                    }
                });
            }
        });
        let enrollment = EnrollmentSvc {
            shared: Arc::clone(&shared),
            grant_pub: grant_key.verifying_key().to_bytes().to_vec(),
        };
        let link = LinkSvc {
            shared: Arc::clone(&shared),
        };
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(EnrollmentServer::new(enrollment))
                .add_service(AgentLinkServer::new(link))
                .serve_with_incoming(ReceiverStream::new(incoming)),
        );
        FakeGateway {
            addr,
            grant_key,
            shared,
            inbound: tokio::sync::Mutex::new(rx),
        }
    }

    /// `https://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// The CA fingerprint to pin.
    pub fn fingerprint(&self) -> String {
        self.shared.pki.fingerprint()
    }

    /// Every Enroll request so far.
    pub fn enrolls(&self) -> Vec<EnrollRequest> {
        self.shared.enrolls.lock().unwrap().clone()
    }

    /// Number of streams opened so far.
    pub fn streams(&self) -> u32 {
        *self.shared.streams.lock().unwrap()
    }

    /// The next message from an agent that `pick` accepts (others are skipped).
    pub async fn expect<T>(&self, mut pick: impl FnMut(agent_message::Kind) -> Option<T>) -> T {
        let mut rx = self.inbound.lock().await;
        let wait = async {
            loop {
                let message = rx.recv().await.expect("gateway gone");
                if let Some(found) = message.kind.and_then(&mut pick) {
                    return found;
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(15), wait)
            .await
            .expect("timed out waiting for an agent message")
    }

    /// Send a message on the current stream.
    pub async fn send(&self, kind: controller_message::Kind) {
        let tx = self
            .shared
            .current
            .lock()
            .unwrap()
            .clone()
            .expect("no stream");
        tx.send(Ok(ControllerMessage { kind: Some(kind) }))
            .await
            .unwrap();
    }

    /// End the current stream from the controller's side.
    pub async fn drop_stream(&self) {
        let tx = self
            .shared
            .current
            .lock()
            .unwrap()
            .take()
            .expect("no stream");
        let _ = tx
            .send(Err(Status::unavailable(
                "the fake gateway dropped the stream",
            )))
            .await;
    }
}

fn server_configs(pki: &Pki) -> (Arc<ServerConfig>, Arc<ServerConfig>) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain = vec![pki.gateway.der().clone(), pki.ca.der().clone()];
    let key = || PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pki.gateway_key.serialize_der()));
    let builder = || {
        ServerConfig::builder_with_provider(Arc::clone(&provider))
            .with_protocol_versions(&[&rustls::version::TLS13])
            .unwrap()
    };
    let mut enroll = builder()
        .with_no_client_auth()
        .with_single_cert(chain.clone(), key())
        .unwrap();
    enroll.alpn_protocols = vec![b"vigil-enroll/1".to_vec()];
    let mut roots = RootCertStore::empty();
    roots.add(pki.ca.der().clone()).unwrap();
    let verifier =
        WebPkiClientVerifier::builder_with_provider(Arc::new(roots), Arc::clone(&provider))
            .build()
            .unwrap();
    let mut link = builder()
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key())
        .unwrap();
    link.alpn_protocols = vec![b"h2".to_vec()];
    (Arc::new(enroll), Arc::new(link))
}

#[derive(Debug)]
struct EnrollmentSvc {
    shared: Arc<Shared>,
    grant_pub: Vec<u8>,
}

#[tonic::async_trait]
impl Enrollment for EnrollmentSvc {
    async fn enroll(
        &self,
        request: Request<EnrollRequest>,
    ) -> Result<Response<EnrollResponse>, Status> {
        let request = request.into_inner();
        self.shared.enrolls.lock().unwrap().push(request.clone());
        match request.token.as_str() {
            GOOD_TOKEN => {}
            EXPIRED_TOKEN => return Err(Status::unauthenticated("join token has expired")),
            _ => return Err(Status::unauthenticated("join token is invalid")),
        }
        let id = AgentId::new_random();
        let issuing = *self.shared.issuing.lock().unwrap();
        let cert = self.shared.pki.sign_agent(
            &request.csr_pem,
            id,
            now_unix() - issuing.age_s,
            issuing.lifetime_s,
        );
        Ok(Response::new(EnrollResponse {
            agent_id: id.to_string(),
            certificate_pem: cert,
            ca_chain_pem: self.shared.pki.ca.pem(),
            grant_public_key: self.grant_pub.clone(),
            labels: [("site".to_owned(), "lab".to_owned())].into(),
            gateway_endpoints: Vec::new(),
        }))
    }
}

#[derive(Debug)]
struct LinkSvc {
    shared: Arc<Shared>,
}

#[tonic::async_trait]
impl AgentLink for LinkSvc {
    type ConnectStream = ReceiverStream<Result<ControllerMessage, Status>>;

    async fn connect(
        &self,
        request: Request<Streaming<AgentMessage>>,
    ) -> Result<Response<Self::ConnectStream>, Status> {
        let cert_id = request
            .peer_certs()
            .and_then(|certs| {
                certs
                    .first()
                    .map(|c: &CertificateDer| agent_id_from_cert(c))
            })
            .flatten()
            .ok_or_else(|| Status::unauthenticated("no agent certificate"))?;
        let mut inbound = request.into_inner();
        let (tx, rx) = mpsc::channel(64);
        *self.shared.streams.lock().unwrap() += 1;
        *self.shared.current.lock().unwrap() = Some(tx.clone());
        let shared = Arc::clone(&self.shared);
        tokio::spawn(async move {
            while let Ok(Some(message)) = inbound.message().await {
                match &message.kind {
                    Some(agent_message::Kind::Hello(hello)) => {
                        if hello.agent_id != cert_id.to_string() {
                            let _ = tx.send(Err(Status::permission_denied("id mismatch"))).await;
                            return;
                        }
                        let ack = HelloAck {
                            controller_version: "fake".into(),
                            heartbeat_interval_s: 1,
                        };
                        let kind = controller_message::Kind::HelloAck(ack);
                        let _ = tx.send(Ok(ControllerMessage { kind: Some(kind) })).await;
                    }
                    Some(agent_message::Kind::RenewRequest(renew)) => {
                        let lifetime = shared.issuing.lock().unwrap().lifetime_s;
                        let cert =
                            shared
                                .pki
                                .sign_agent(&renew.csr_pem, cert_id, now_unix(), lifetime);
                        let answer = RenewResponse {
                            certificate_pem: cert,
                            error: String::new(),
                        };
                        let kind = controller_message::Kind::RenewResponse(answer);
                        let _ = tx.send(Ok(ControllerMessage { kind: Some(kind) })).await;
                    }
                    _ => {}
                }
                let _ = shared.inbound.send(message);
            }
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}
