//! The client half of the link between replicas: [`Forwarder::exec`] sends a command for
//! an agent another replica holds to that replica (`ClusterLink.Exec`) and answers a
//! [`RemoteExec`], the agent's events as they come back. One HTTP/2 connection per peer
//! replica carries every forwarded command; dropping a [`RemoteExec`] before its end
//! resets its stream, and the holding replica then cancels the command on the agent.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use hyper_util::rt::TokioIo;
use rustls::ClientConfig;
use rustls::pki_types::ServerName;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tonic::transport::{Channel, Endpoint, Uri};
use tonic::{Code, Streaming};
use vigil_proto::agent::v1::{ExecRequest, exec_event};
use vigil_proto::cluster::v1::cluster_link_client::ClusterLinkClient;
use vigil_proto::cluster::v1::{ForwardedEvent, ForwardedExec, forwarded_event};
use vigil_shared::ids::AgentId;

use super::tls::REPLICA_SERVER_NAME;
use crate::error::codes::ApiCode;
use crate::store::replicas::AgentOwner;
use crate::{Error, Result};

/// How long dialing a peer replica may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// Dials the other replicas and forwards commands to them.
#[derive(Clone)]
pub struct Forwarder {
    me: String,
    tls: Arc<ClientConfig>,
    channels: Arc<Mutex<HashMap<String, Channel>>>,
}

impl std::fmt::Debug for Forwarder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Forwarder").field("me", &self.me).finish()
    }
}

impl Forwarder {
    /// A forwarder for replica `me`, dialing with `tls`.
    pub fn new(me: String, tls: Arc<ClientConfig>) -> Self {
        Forwarder {
            me,
            tls,
            channels: Arc::default(),
        }
    }

    /// The channel to the replica at `address` (made on first use; it reconnects by
    /// itself).
    fn channel(&self, address: &str) -> Result<Channel> {
        let mut channels = self.channels.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(channel) = channels.get(address) {
            return Ok(channel.clone());
        }
        let endpoint = Endpoint::from_shared(format!("http://{address}"))
            .map_err(|e| Error::Config(format!("replica address {address:?}: {e}")))?
            .connect_timeout(CONNECT_TIMEOUT)
            .http2_keep_alive_interval(Duration::from_secs(10))
            .keep_alive_timeout(Duration::from_secs(5))
            .keep_alive_while_idle(true);
        let connector = TlsConnector::from(self.tls.clone());
        let dial = tower::service_fn(move |uri: Uri| {
            let connector = connector.clone();
            async move {
                let authority = uri
                    .authority()
                    .map(|a| a.as_str().to_owned())
                    .ok_or_else(|| std::io::Error::other("no address"))?;
                let tcp = TcpStream::connect(authority).await?;
                tcp.set_nodelay(true)?;
                let name =
                    ServerName::try_from(REPLICA_SERVER_NAME).map_err(std::io::Error::other)?;
                let tls = connector.connect(name, tcp).await?;
                Ok::<_, std::io::Error>(TokioIo::new(tls))
            }
        });
        let channel = endpoint.connect_with_connector_lazy(dial);
        channels.insert(address.to_owned(), channel.clone());
        Ok(channel)
    }

    /// Sends `request` for `owner.agent` to the replica holding it and waits until the
    /// command left the agent's queue there (or was refused).
    pub async fn exec(
        &self,
        owner: &AgentOwner,
        request: ExecRequest,
        caller: &str,
    ) -> Result<RemoteExec> {
        let agent = owner.agent;
        let timeout_s = request.timeout_s;
        let mut client = ClusterLinkClient::new(self.channel(&owner.cluster_address)?);
        let call = ForwardedExec {
            agent_id: agent.to_string(),
            request: Some(request),
            caller: caller.to_owned(),
            from_replica: self.me.clone(),
        };
        let unreachable = |status: tonic::Status| {
            tracing::warn!(%agent, replica = %owner.replica_id, address = %owner.cluster_address,
                code = ?status.code(), message = status.message(), "could not forward a command");
            Error::AgentOffline(agent)
        };
        let mut events = client.exec(call).await.map_err(unreachable)?.into_inner();
        let first = events.message().await.map_err(unreachable)?;
        match first.and_then(|event| event.kind) {
            Some(forwarded_event::Kind::Accepted(accepted)) => Ok(RemoteExec {
                agent,
                request_id: accepted.request_id,
                queued_ms: accepted.queued_ms,
                timeout_s: accepted.timeout_s,
                events,
                ended: false,
                overrun: false,
                lost: false,
            }),
            Some(forwarded_event::Kind::Refused(refused)) => Err(refused_error(
                agent,
                &refused.code,
                refused.message,
                timeout_s,
            )),
            _ => Err(Error::AgentOffline(agent)),
        }
    }
}

/// The error a holding replica's refusal stands for.
fn refused_error(agent: AgentId, code: &str, message: String, timeout_s: u32) -> Error {
    match ApiCode::parse(code) {
        Some(ApiCode::AgentOffline) => Error::AgentOffline(agent),
        Some(ApiCode::NotFound) => Error::NotFound(message),
        Some(ApiCode::Timeout) => Error::ExecTimeout(u64::from(timeout_s)),
        Some(code) => Error::coded(code, message),
        None => Error::coded(ApiCode::ExecutionFailed, message),
    }
}

/// The events of a command running on an agent another replica holds.
#[derive(Debug)]
pub struct RemoteExec {
    agent: AgentId,
    request_id: String,
    queued_ms: u64,
    timeout_s: u32,
    events: Streaming<ForwardedEvent>,
    ended: bool,
    overrun: bool,
    lost: bool,
}

impl RemoteExec {
    /// The request id of the command.
    pub fn request_id(&self) -> &str {
        &self.request_id
    }

    /// The agent running it.
    pub fn agent(&self) -> AgentId {
        self.agent
    }

    /// How long it waited in the agent's queue (ms).
    pub fn queued_ms(&self) -> u64 {
        self.queued_ms
    }

    /// The timeout the agent was given.
    pub fn timeout_s(&self) -> u32 {
        self.timeout_s
    }

    /// True once the command's last event arrived.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// True when the holding replica cut the command off for a slow reader.
    pub fn overrun(&self) -> bool {
        self.overrun
    }

    /// True when the holding replica went away before the command's end.
    pub fn lost(&self) -> bool {
        self.lost
    }

    /// The next event; `None` after the last one, or when the command's events ended
    /// early (the agent's stream there, or the holding replica, went away).
    pub async fn next(&mut self) -> Option<exec_event::Kind> {
        if self.ended {
            return None;
        }
        loop {
            let message = match self.events.message().await {
                Ok(Some(message)) => message,
                Ok(None) => {
                    self.lost = true;
                    return None;
                }
                Err(status) => {
                    self.lost = status.code() != Code::Cancelled;
                    tracing::warn!(agent = %self.agent, code = ?status.code(),
                        message = status.message(), "lost the replica running a command");
                    return None;
                }
            };
            match message.kind {
                Some(forwarded_event::Kind::Event(event)) => {
                    let Some(kind) = event.kind else { continue };
                    if matches!(
                        kind,
                        exec_event::Kind::Finished(_) | exec_event::Kind::Rejected(_)
                    ) {
                        self.ended = true;
                    }
                    return Some(kind);
                }
                Some(forwarded_event::Kind::Ended(ended)) => {
                    self.overrun = ended.overrun;
                    return None;
                }
                _ => continue,
            }
        }
    }
}
