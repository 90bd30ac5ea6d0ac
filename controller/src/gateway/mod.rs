//! The agent gateway: one TCP listener, TLS chosen per ClientHello ([`tls`]), a revocation-
//! aware client verifier ([`verifier`]), the Enrollment service ([`enrollment`]), the
//! AgentLink streams ([`link`]; the live sessions are `crate::agents::sessions`) and the
//! dispatch of commands to agents
//! ([`dispatch`]), and the link that other replicas forward commands on ([`cluster_link`]). [`Gateway::serve`] runs the accept loop and feeds two tonic servers,
//! one per kind of connection, through their own incoming queues.

pub mod cluster_link;
pub mod convert;
pub mod dispatch;
pub mod enrollment;
pub mod inventory;
pub mod link;
pub mod outbound;
pub mod tls;
pub mod verifier;

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc};
use tokio_rustls::server::TlsStream;
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use tonic::transport::Server;
use tracing::{debug, warn};
use vigil_proto::agent::v1::agent_link_server::AgentLinkServer;
use vigil_proto::agent::v1::enrollment_server::EnrollmentServer;

pub use crate::agents::RevocationSet;
pub use crate::agents::sessions::{AgentHello, Session, Sessions};
pub use dispatch::{Dispatcher, ExecStream};
pub use enrollment::EnrollmentService;
pub use link::LinkService;
pub use tls::{ConnectionKind, ENROLL_ALPN, GatewayTls};
pub use verifier::AgentCertVerifier;

use crate::{Error, Result};

/// How long a client has to finish the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Most handshakes in progress at once. Further connections are not accepted until one
/// ends: they wait in the kernel's listen backlog, so a fleet reconnecting all at once after
/// a restart is paced instead of dropped (which would send every dropped agent into its
/// backoff).
const MAX_HANDSHAKES: usize = 256;
/// Longest an enrollment call may take.
const ENROLL_TIMEOUT: Duration = Duration::from_secs(30);

type Incoming = mpsc::Sender<io::Result<TlsStream<TcpStream>>>;

/// The gateway: TLS configurations and the two services.
#[derive(Debug)]
pub struct Gateway {
    tls: GatewayTls,
    enrollment: EnrollmentService,
    link: LinkService,
}

impl Gateway {
    /// A gateway serving `enrollment` and `link` behind `tls`.
    pub fn new(tls: GatewayTls, enrollment: EnrollmentService, link: LinkService) -> Self {
        Gateway {
            tls,
            enrollment,
            link,
        }
    }

    /// Accepts connections on `listener` until `shutdown` is cancelled, then drains.
    pub async fn serve(self, listener: TcpListener, shutdown: CancellationToken) -> Result<()> {
        let (enroll_tx, enroll_rx) = mpsc::channel(32);
        let (link_tx, link_rx) = mpsc::channel(32);
        let enroll_server = Server::builder()
            .timeout(ENROLL_TIMEOUT)
            .add_service(EnrollmentServer::new(self.enrollment))
            .serve_with_incoming_shutdown(
                ReceiverStream::new(enroll_rx),
                shutdown.clone().cancelled_owned(),
            );
        let link_server = Server::builder()
            .http2_keepalive_interval(Some(Duration::from_secs(30)))
            .http2_keepalive_timeout(Some(Duration::from_secs(20)))
            .add_service(AgentLinkServer::new(self.link))
            .serve_with_incoming_shutdown(
                ReceiverStream::new(link_rx),
                shutdown.clone().cancelled_owned(),
            );
        let accept = accept_loop(listener, self.tls, enroll_tx, link_tx, shutdown);
        let ((), enrolled, linked) = tokio::join!(accept, enroll_server, link_server);
        enrolled.map_err(|e| Error::Network(format!("enrollment server: {e}")))?;
        linked.map_err(|e| Error::Network(format!("agent link server: {e}")))
    }
}

async fn accept_loop(
    listener: TcpListener,
    tls: GatewayTls,
    enroll: Incoming,
    link: Incoming,
    shutdown: CancellationToken,
) {
    let permits = Arc::new(Semaphore::new(MAX_HANDSHAKES));
    loop {
        // A free handshake place first: past MAX_HANDSHAKES, connections wait in the backlog.
        let permit = match permits.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                debug!(
                    limit = MAX_HANDSHAKES,
                    "TLS handshakes at the limit; new connections wait"
                );
                tokio::select! {
                    () = shutdown.cancelled() => break,
                    permit = permits.clone().acquire_owned() => match permit {
                        Ok(permit) => permit,
                        Err(_) => break,
                    },
                }
            }
        };
        let (tcp, remote) = tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    warn!(%error, "accepting a gateway connection failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let (tls, enroll, link) = (tls.clone(), enroll.clone(), link.clone());
        tokio::spawn(async move {
            let _permit = permit;
            handshake(tcp, remote, &tls, &enroll, &link).await;
        });
    }
    debug!("gateway accept loop stopped");
}

async fn handshake(
    tcp: TcpStream,
    remote: SocketAddr,
    tls: &GatewayTls,
    enroll: &Incoming,
    link: &Incoming,
) {
    let _ = tcp.set_nodelay(true);
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, tls.accept(tcp)).await {
        Ok(Ok((kind, stream))) => {
            debug!(%remote, ?kind, "TLS connection accepted");
            let queue = match kind {
                ConnectionKind::Enroll => enroll,
                ConnectionKind::Link => link,
            };
            if queue.send(Ok(stream)).await.is_err() {
                debug!(%remote, "gateway is shutting down; dropping a connection");
            }
        }
        Ok(Err(error)) => debug!(%remote, %error, "TLS handshake failed"),
        Err(_) => debug!(%remote, "TLS handshake timed out"),
    }
}
