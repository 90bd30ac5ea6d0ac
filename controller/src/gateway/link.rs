//! The `AgentLink` service: opening a stream (certificate identity, hello, one live stream
//! per identity), then one task per stream that reads the agent's messages (heartbeats,
//! exec events, facts, renewal requests) until the stream ends or goes silent.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use time::OffsetDateTime;
use tokio::sync::mpsc;
use tonic::{Request, Response, Status, Streaming};
use tracing::{Instrument, debug, info, info_span, warn};
use vigil_proto::agent::v1::agent_link_server::AgentLink;
use vigil_proto::agent::v1::{
    AgentMessage, Goodbye, Hello, HelloAck, HostFacts, RenewRequest, RenewResponse, agent_message,
    controller_message,
};
use vigil_shared::ids::AgentId;
use vigil_shared::tls::agent_id_from_cert;

use super::outbound::OutboundStream;
use crate::agents::sessions::{AgentHello, Outgoing, Session, outbound_channel};
use crate::agents::{Agents, HelloRecord};
use crate::clock::{unix_now, unix_now_ms};
use crate::cluster::Cluster;
use crate::pki::Pki;
use crate::{Error, Result};

/// How long an agent has to send its hello after opening the stream.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// The controller version sent in `HelloAck`.
const CONTROLLER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The AgentLink gRPC service.
#[derive(Debug, Clone)]
pub struct LinkService {
    agents: Agents,
    pki: Arc<Pki>,
    heartbeat: Duration,
    cluster: Cluster,
}

impl LinkService {
    /// The service over the agent registry, signing renewals with `pki`'s CA and asking
    /// agents for a heartbeat every `heartbeat`; `cluster` records which replica holds
    /// each stream.
    pub fn new(agents: Agents, pki: Arc<Pki>, heartbeat: Duration, cluster: Cluster) -> Self {
        LinkService {
            agents,
            pki,
            heartbeat,
            cluster,
        }
    }

    /// Checks the hello against the certificate and the records, registers the session.
    async fn open(
        &self,
        cert_id: AgentId,
        hello: Hello,
    ) -> Result<(Arc<Session>, mpsc::Receiver<Outgoing>)> {
        if hello.agent_id.trim() != cert_id.to_string() {
            return Err(Error::PermissionDenied(format!(
                "hello agent_id {:?} does not match the certificate's identity {cert_id}",
                hello.agent_id
            )));
        }
        // A fenced or draining replica takes no streams: the agent tries another.
        self.cluster.ensure_serving()?;
        let revocations = self.agents.revocations();
        match self.agents.get_or_load(cert_id).await? {
            _ if revocations.is_agent_revoked(cert_id) => return Err(Error::AgentRevoked(cert_id)),
            None => {
                return Err(Error::PermissionDenied(format!(
                    "agent {cert_id} is not enrolled here"
                )));
            }
            Some(row) if row.revoked_at.is_some() => return Err(Error::AgentRevoked(cert_id)),
            Some(_) => {}
        }
        let hello = AgentHello {
            version: hello.version,
            hostname: hello.hostname,
            os: hello.os,
            arch: hello.arch,
            capabilities: hello.capabilities,
            read_only: hello.read_only,
        };
        let (tx, rx) = outbound_channel();
        let sessions = self.agents.sessions();
        let session = Session::new(
            cert_id,
            sessions.next_conn(),
            hello,
            tx,
            unix_now_ms(),
            sessions.limits(),
        );
        // The ack, then the hidden paths an admin set, go out before the session is
        // listed: no request can reach the agent ahead of them.
        let ack = controller_message::Kind::HelloAck(HelloAck {
            controller_version: CONTROLLER_VERSION.to_owned(),
            heartbeat_interval_s: u32::try_from(self.heartbeat.as_secs()).unwrap_or(u32::MAX),
        });
        session.try_send(ack);
        let hidden = self
            .agents
            .get(cert_id)
            .map(|row| row.hidden_paths.clone())
            .unwrap_or_default();
        if !hidden.is_empty() && !session.try_send(crate::agents::sandbox_policy(&hidden)) {
            // Its stream went away already; without the paths it must not run reads.
            return Err(Error::AgentGone(cert_id));
        }
        // The newest stream wins over one gone silent for two heartbeat intervals (a
        // half-open link the agent has given up on); a live one, heartbeating, is kept and
        // this one refused (`ALREADY_EXISTS`: a cloned state directory shows up so).
        if let Some(old) = sessions.get(cert_id) {
            let silent_ms = unix_now_ms().saturating_sub(old.last_seen_ms());
            if u128::try_from(silent_ms).unwrap_or(0) > 2 * self.heartbeat.as_millis() {
                info!(agent = %cert_id, silent_ms, "a new stream replaces one gone silent");
                old.close(Some(Goodbye {
                    reason: "a newer stream of this agent replaced this one".into(),
                    retry: true,
                }));
                sessions.remove(cert_id, old.conn());
            }
        }
        sessions.insert(session.clone())?;
        // This replica holds the agent's newest stream now; one on another replica is
        // closed there at its next renewal.
        if let Err(error) = self.cluster.stream_opened(cert_id, session.conn()).await {
            session.close(None);
            sessions.remove(cert_id, session.conn());
            return Err(error);
        }
        if revocations.is_agent_revoked(cert_id) {
            // Revoked while we were checking: do not keep the stream.
            session.close(None);
            return Err(Error::AgentRevoked(cert_id));
        }
        let h = session.hello();
        let record = HelloRecord {
            hostname: &h.hostname,
            version: &h.version,
            read_only: h.read_only,
        };
        self.agents.record_hello(cert_id, record, unix_now());
        Ok((session, rx))
    }

    /// Reads the agent's messages until the stream ends, is closed or goes silent.
    async fn run(self, session: Arc<Session>, mut inbound: Streaming<AgentMessage>) {
        let silence = self.heartbeat * 3;
        let reason = loop {
            let next = tokio::select! {
                () = session.closed().cancelled() => break "closed by the controller",
                next = tokio::time::timeout(silence, inbound.message()) => next,
            };
            match next {
                Err(_) => {
                    session.fail(Status::deadline_exceeded(format!(
                        "no message from the agent for {} s",
                        silence.as_secs()
                    )));
                    break "heartbeat timeout";
                }
                Ok(Ok(Some(message))) => {
                    session.touch(unix_now_ms());
                    self.handle(&session, message).await;
                }
                Ok(Ok(None)) => break "the agent ended the stream",
                Ok(Err(status)) => {
                    debug!(code = ?status.code(), message = status.message(), "stream error");
                    break "stream error";
                }
            }
        };
        session.close(None);
        session.drop_pending();
        self.agents
            .sessions()
            .remove(session.agent(), session.conn());
        self.cluster
            .stream_closed(session.agent(), session.conn())
            .await;
        self.agents.remote().lost(session.agent());
        self.agents
            .record_last_seen(session.agent(), session.last_seen_ms() / 1000);
        info!(reason, "agent stream ended");
    }

    async fn handle(&self, session: &Session, message: AgentMessage) {
        match message.kind {
            Some(agent_message::Kind::Heartbeat(beat)) => debug!(seq = beat.seq, "heartbeat"),
            Some(agent_message::Kind::ExecEvent(event)) => session.route(event).await,
            Some(agent_message::Kind::Facts(facts)) => self.record_facts(session.agent(), &facts),
            Some(agent_message::Kind::RenewRequest(request)) => {
                let response = self.renew(session.agent(), &request).await;
                let kind = controller_message::Kind::RenewResponse(response);
                if session.send(kind).await.is_err() {
                    debug!("stream closed before the renewal was sent");
                }
            }
            Some(agent_message::Kind::Inventory(update)) => {
                super::inventory::ingest(&self.agents, session.agent(), &update).await
            }
            Some(agent_message::Kind::Hello(_)) => warn!("ignoring a second hello"),
            None => debug!("ignoring an empty message"),
        }
    }

    fn record_facts(&self, agent: AgentId, facts: &HostFacts) {
        let value = serde_json::json!({
            "hostname": facts.hostname,
            "os_release": facts.os_release,
            "kernel": facts.kernel,
            "cpus": facts.cpus,
            "memory_bytes": facts.memory_bytes,
            "uptime_s": facts.uptime_s,
            "load1": facts.load1,
            "sandbox": facts.sandbox.as_ref().map(|s| serde_json::json!({
                "landlock_abi": s.landlock_abi,
                "seccomp": s.seccomp,
                "no_new_privs": s.no_new_privs,
                "capabilities_dropped": s.capabilities_dropped,
                "level": s.level,
                "allow_unsandboxed_reads": s.allow_unsandboxed_reads,
                "error": (!s.error.is_empty()).then_some(&s.error),
                "launcher": (!s.launcher.is_empty()).then_some(&s.launcher),
                "hidden": s.hidden,
                "hidden_paths": s.hidden_paths,
                "controller_hidden_paths": s.controller_hidden_paths,
                "refused_hidden_paths": s.refused_hidden_paths,
                "doors": s.doors,
                "sockets_by_need": s.sockets_by_need,
            })),
        });
        self.agents.record_facts(agent, value, unix_now());
    }

    /// Signs a renewal CSR for the same identity, unless it was revoked.
    async fn renew(&self, agent: AgentId, request: &RenewRequest) -> RenewResponse {
        if self.agents.revocations().is_agent_revoked(agent) {
            return RenewResponse {
                certificate_pem: String::new(),
                error: "agent is revoked".into(),
            };
        }
        let issued =
            match self
                .pki
                .ca
                .sign_agent_csr(&request.csr_pem, agent, OffsetDateTime::now_utc())
            {
                Ok(issued) => issued,
                Err(error) => {
                    warn!(%error, "refused a renewal");
                    return RenewResponse {
                        certificate_pem: String::new(),
                        error: error.to_string(),
                    };
                }
            };
        if let Err(error) = self
            .agents
            .record_renewal(agent, &issued.serial, issued.expires_at)
            .await
        {
            warn!(%error, "could not record the renewal");
            return RenewResponse {
                certificate_pem: String::new(),
                error: "renewal could not be recorded".into(),
            };
        }
        info!(serial = %issued.serial, expires_at = issued.expires_at, "renewed the agent certificate");
        RenewResponse {
            certificate_pem: issued.pem,
            error: String::new(),
        }
    }
}

/// The agent identity of the connection's client certificate.
fn peer_agent<T>(request: &Request<T>) -> Result<AgentId, Status> {
    request
        .peer_certs()
        .and_then(|certs| certs.first().and_then(|leaf| agent_id_from_cert(leaf)))
        .ok_or_else(|| Status::unauthenticated("no agent certificate on this connection"))
}

async fn read_hello(inbound: &mut Streaming<AgentMessage>) -> Result<Hello, Status> {
    match tokio::time::timeout(HELLO_TIMEOUT, inbound.message()).await {
        Err(_) => Err(Status::deadline_exceeded("no hello within 10 s")),
        Ok(Err(status)) => Err(status),
        Ok(Ok(None)) => Err(Status::cancelled("stream closed before the hello")),
        Ok(Ok(Some(AgentMessage {
            kind: Some(agent_message::Kind::Hello(hello)),
        }))) => Ok(hello),
        Ok(Ok(Some(_))) => Err(Status::failed_precondition(
            "the first message must be a Hello",
        )),
    }
}

#[tonic::async_trait]
impl AgentLink for LinkService {
    type ConnectStream = OutboundStream;

    async fn connect(
        &self,
        request: Request<Streaming<AgentMessage>>,
    ) -> Result<Response<Self::ConnectStream>, Status> {
        let remote: Option<SocketAddr> = request.remote_addr();
        let cert_id = peer_agent(&request)?;
        let span = info_span!("agent_stream", agent = %cert_id, remote = ?remote);
        let mut inbound = request.into_inner();
        let opened = async {
            let hello = read_hello(&mut inbound).await?;
            self.open(cert_id, hello).await.map_err(|error| {
                warn!(%error, "refused a stream");
                Status::from(error)
            })
        }
        .instrument(span.clone())
        .await;
        let (session, rx) = opened?;
        info!(parent: &span, hostname = %session.hello().hostname, version = %session.hello().version,
              read_only = session.hello().read_only, "agent connected");
        let closed = session.closed().clone();
        tokio::spawn(self.clone().run(session, inbound).instrument(span));
        Ok(Response::new(OutboundStream::new(rx, closed)))
    }
}
