//! The server half of the link between replicas (`--cluster-listen`): mutual TLS with the
//! internal-link CA (`crate::cluster::tls`), then `ClusterLink.Exec`, which runs a command
//! another replica forwarded on an agent this one holds, through the same dispatcher (and
//! queue) as a local command, and streams its events back. A forwarded command is never
//! forwarded again: if the agent is not held here any more, the answer is
//! `AGENT_OFFLINE`.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::Stream;
use rustls::ServerConfig;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use tonic::transport::Server;
use tonic::{Request, Response, Status};
use tracing::{debug, warn};
use vigil_proto::agent::v1::ExecEvent;
use vigil_proto::cluster::v1::cluster_link_server::{ClusterLink, ClusterLinkServer};
use vigil_proto::cluster::v1::{
    Accepted, Ended, ForwardedEvent, ForwardedExec, Refused, forwarded_event,
};
use vigil_shared::ids::AgentId;

use super::Dispatcher;
use crate::{Error, Result};

const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Events in flight to the calling replica per command.
const EVENTS_IN_FLIGHT: usize = 64;

/// The `ClusterLink` service.
#[derive(Debug, Clone)]
pub struct ClusterLinkService {
    dispatcher: Dispatcher,
}

impl ClusterLinkService {
    /// The service over this replica's dispatcher.
    pub fn new(dispatcher: Dispatcher) -> Self {
        ClusterLinkService { dispatcher }
    }

    /// Serves the link on `listener` with `tls` until `shutdown`.
    pub async fn serve(
        self,
        listener: TcpListener,
        tls: Arc<ServerConfig>,
        shutdown: CancellationToken,
    ) -> Result<()> {
        let (tx, rx) = mpsc::channel::<std::io::Result<TlsStream<TcpStream>>>(16);
        let acceptor = TlsAcceptor::from(tls);
        let accept = {
            let shutdown = shutdown.clone();
            async move {
                loop {
                    let (tcp, remote) = tokio::select! {
                        () = shutdown.cancelled() => break,
                        accepted = listener.accept() => match accepted {
                            Ok(accepted) => accepted,
                            Err(error) => {
                                warn!(%error, "accepting a replica connection failed");
                                tokio::time::sleep(Duration::from_millis(100)).await;
                                continue;
                            }
                        },
                    };
                    let (acceptor, tx) = (acceptor.clone(), tx.clone());
                    tokio::spawn(handshake(acceptor, tcp, remote, tx));
                }
            }
        };
        let server = Server::builder()
            .http2_keepalive_interval(Some(Duration::from_secs(10)))
            .http2_keepalive_timeout(Some(Duration::from_secs(5)))
            .add_service(ClusterLinkServer::new(self))
            .serve_with_incoming_shutdown(ReceiverStream::new(rx), shutdown.cancelled_owned());
        let ((), served) = tokio::join!(accept, server);
        served.map_err(|e| Error::Network(format!("replica link server: {e}")))
    }
}

async fn handshake(
    acceptor: TlsAcceptor,
    tcp: TcpStream,
    remote: SocketAddr,
    queue: mpsc::Sender<std::io::Result<TlsStream<TcpStream>>>,
) {
    let _ = tcp.set_nodelay(true);
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
        Ok(Ok(stream)) => {
            if queue.send(Ok(stream)).await.is_err() {
                debug!(%remote, "the replica link is shutting down; dropping a connection");
            }
        }
        Ok(Err(error)) => warn!(%remote, %error, "refused a replica link connection"),
        Err(_) => debug!(%remote, "replica link handshake timed out"),
    }
}

fn event(kind: forwarded_event::Kind) -> Result<ForwardedEvent, Status> {
    Ok(ForwardedEvent { kind: Some(kind) })
}

#[tonic::async_trait]
impl ClusterLink for ClusterLinkService {
    type ExecStream = Pin<Box<dyn Stream<Item = Result<ForwardedEvent, Status>> + Send>>;

    async fn exec(
        &self,
        request: Request<ForwardedExec>,
    ) -> Result<Response<Self::ExecStream>, Status> {
        let call = request.into_inner();
        let agent: AgentId = call
            .agent_id
            .trim()
            .parse()
            .map_err(|_| Status::invalid_argument("agent_id is not a UUID"))?;
        let exec = call
            .request
            .ok_or_else(|| Status::invalid_argument("no request"))?;
        debug!(%agent, from = %call.from_replica, "a forwarded command");
        let (tx, rx) = mpsc::channel(EVENTS_IN_FLIGHT);
        let dispatcher = self.dispatcher.clone();
        tokio::spawn(async move {
            let mut stream = match dispatcher.exec_local(agent, exec, &call.caller).await {
                Ok(stream) => stream,
                Err(error) => {
                    let refused = Refused {
                        code: error.api_code().to_owned(),
                        message: error.public_message(),
                    };
                    let _ = tx
                        .send(event(forwarded_event::Kind::Refused(refused)))
                        .await;
                    return;
                }
            };
            let accepted = Accepted {
                request_id: stream.request_id().to_owned(),
                queued_ms: stream.queued_ms(),
                timeout_s: stream.timeout_s(),
            };
            if tx
                .send(event(forwarded_event::Kind::Accepted(accepted)))
                .await
                .is_err()
            {
                return;
            }
            let request_id = stream.request_id().to_owned();
            while let Some(kind) = stream.next().await {
                let agent_event = ExecEvent {
                    request_id: request_id.clone(),
                    kind: Some(kind),
                };
                // The caller went away: dropping `stream` cancels the command.
                if tx
                    .send(event(forwarded_event::Kind::Event(agent_event)))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            let ended = Ended {
                finished: stream.ended(),
                overrun: stream.overrun(),
            };
            let _ = tx.send(event(forwarded_event::Kind::Ended(ended))).await;
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }
}
