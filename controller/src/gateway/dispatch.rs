//! Sending commands to agents: [`Dispatcher::exec`] sends an `ExecRequest` on the agent's
//! stream and returns an [`ExecStream`] of its events; for an agent another replica holds,
//! it forwards the command there (`crate::cluster::forward`) and the stream carries the
//! events that come back. Dropping the stream before the command ended (the HTTP client
//! went away, a deadline passed) sends a `Cancel`.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;
use vigil_proto::agent::v1::{Cancel, ExecEvent, ExecRequest, controller_message, exec_event};
use vigil_shared::ids::AgentId;

use crate::agents::Agents;
use crate::agents::queue::Slot;
use crate::agents::sessions::Session;
use crate::cluster::{Cluster, RemoteExec};
use crate::error::codes::ApiCode;
use crate::{Error, Result};

/// How long a command waits for an agent that is moving between replicas.
pub const MOVE_WAIT: Duration = Duration::from_secs(10);
/// How often it looks whether the agent has arrived.
const MOVE_POLL: Duration = Duration::from_millis(100);

/// Routes commands to connected agents.
#[derive(Debug, Clone)]
pub struct Dispatcher {
    agents: Agents,
    cluster: Option<Cluster>,
}

impl Dispatcher {
    /// A dispatcher over the agents' live streams, using their records to tell unknown
    /// agents from disconnected ones.
    pub fn new(agents: Agents) -> Self {
        Dispatcher {
            agents,
            cluster: None,
        }
    }

    /// The same dispatcher, forwarding commands for agents other replicas hold.
    pub fn with_cluster(mut self, cluster: Cluster) -> Self {
        self.cluster = Some(cluster);
        self
    }

    /// The live session of `agent`, or why there is none: `NotFound` (never enrolled),
    /// `AgentRevoked`, or `AgentOffline`.
    pub async fn session(&self, agent: AgentId) -> Result<Arc<Session>> {
        if let Some(session) = self.agents.sessions().get(agent) {
            return Ok(session);
        }
        match self.agents.get_or_load(agent).await? {
            None => Err(Error::NotFound(format!("no agent with id {agent}"))),
            Some(row) if row.revoked_at.is_some() => Err(Error::AgentRevoked(agent)),
            Some(_) => Err(Error::AgentOffline(agent)),
        }
    }

    /// Sends `request` to `agent` (a request id is chosen when empty) and returns the
    /// stream of its events. The command first waits its turn in the agent's queue
    /// (`caller`'s turn among the callers waiting there), for at most its `timeout_s`
    /// (which must be set); the time it waited is taken off the timeout the agent gets,
    /// and reported by [`ExecStream::queued_ms`].
    pub async fn exec(
        &self,
        agent: AgentId,
        mut request: ExecRequest,
        caller: &str,
    ) -> Result<ExecStream> {
        let Some(cluster) = &self.cluster else {
            return self.exec_local(agent, request, caller).await;
        };
        cluster.ensure_not_fenced()?;
        if cluster.forwarder().is_none() {
            // A single controller: nowhere else for the agent to be.
            return self.exec_local(agent, request, caller).await;
        }
        if request.request_id.is_empty() {
            request.request_id = uuid::Uuid::new_v4().to_string();
        }
        // An agent that lost its stream moments ago is probably moving to another replica
        // (a stopping one sends its agents away): wait for it a little, at most
        // [`MOVE_WAIT`]. A replica that just started cannot tell which agents are moving,
        // so it waits for any it finds nowhere.
        let deadline = Instant::now() + MOVE_WAIT;
        loop {
            match self.exec_anywhere(cluster, agent, &request, caller).await {
                Err(Error::AgentOffline(_))
                    if Instant::now() < deadline
                        && (self.agents.remote().moving(agent) || cluster.is_new()) =>
                {
                    tokio::time::sleep(MOVE_POLL).await;
                }
                done => return done,
            }
        }
    }

    /// One try: this replica's stream of `agent`, else the replica holding it.
    async fn exec_anywhere(
        &self,
        cluster: &Cluster,
        agent: AgentId,
        request: &ExecRequest,
        caller: &str,
    ) -> Result<ExecStream> {
        match self.exec_local(agent, request.clone(), caller).await {
            Err(Error::AgentOffline(_)) => {}
            done => return done,
        }
        let (Some(forwarder), Some(owner)) =
            (cluster.forwarder(), cluster.remote_owner(agent).await)
        else {
            return Err(Error::AgentOffline(agent));
        };
        tracing::debug!(%agent, replica = %owner.replica_id, request_id = %request.request_id,
            "forwarding a command to the replica holding the agent");
        match forwarder.exec(&owner, request.clone(), caller).await {
            Ok(remote) => Ok(ExecStream {
                inner: Inner::Remote(Box::new(remote)),
            }),
            Err(Error::AgentOffline(_)) => {
                // The holder let it go (it is stopping) or is gone: it is on its way.
                self.agents.remote().lost(agent);
                Err(Error::AgentOffline(agent))
            }
            Err(error) => Err(error),
        }
    }

    /// [`Dispatcher::exec`] on this replica's own stream of `agent` only (a command another
    /// replica forwarded here is never forwarded again).
    pub async fn exec_local(
        &self,
        agent: AgentId,
        mut request: ExecRequest,
        caller: &str,
    ) -> Result<ExecStream> {
        let session = self.session(agent).await?;
        if self.cluster.as_ref().is_some_and(Cluster::is_draining) {
            // Stopping: no new commands for the agents it is sending away (a caller here
            // waits for the agent to arrive at another replica).
            self.agents.remote().lost(agent);
            return Err(Error::AgentOffline(agent));
        }
        if request.request_id.is_empty() {
            request.request_id = uuid::Uuid::new_v4().to_string();
        }
        let timeout = Duration::from_secs(u64::from(request.timeout_s.max(1)));
        let asked = Instant::now();
        let slot = tokio::select! {
            biased;
            () = session.closed().cancelled() => return Err(Error::AgentOffline(agent)),
            slot = tokio::time::timeout(timeout, session.queue().acquire(caller)) => match slot {
                Ok(slot) => slot?,
                Err(_) => {
                    tracing::info!(%agent, waited_s = timeout.as_secs(), "a command timed out in the agent's queue");
                    return Err(Error::ExecTimeout(timeout.as_secs()));
                }
            },
        };
        let queued = asked.elapsed();
        if !queued.is_zero() {
            let left = timeout.saturating_sub(queued).as_secs_f64().ceil();
            // At least a second, as the agent takes whole seconds.
            request.timeout_s = u32::try_from(left as u64).unwrap_or(u32::MAX).max(1);
        }
        let events = session.open_exec(&request.request_id)?;
        let stream = LocalExec {
            request_id: request.request_id.clone(),
            session: session.clone(),
            events,
            ended: false,
            overrun: false,
            slot: Some(slot),
            queued_ms: u64::try_from(queued.as_millis()).unwrap_or(u64::MAX),
            timeout_s: request.timeout_s,
        };
        tracing::debug!(%agent, request_id = %request.request_id, mode = request.mode, "sending a command");
        session
            .send(controller_message::Kind::ExecRequest(request))
            .await?;
        Ok(ExecStream {
            inner: Inner::Local(stream),
        })
    }
}

/// The events of one command. Dropped before the command ended, it cancels the command.
#[derive(Debug)]
pub struct ExecStream {
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    Local(LocalExec),
    Remote(Box<RemoteExec>),
}

impl ExecStream {
    /// The request id of the command.
    pub fn request_id(&self) -> &str {
        match &self.inner {
            Inner::Local(local) => &local.request_id,
            Inner::Remote(remote) => remote.request_id(),
        }
    }

    /// The agent running the command.
    pub fn agent(&self) -> AgentId {
        match &self.inner {
            Inner::Local(local) => local.session.agent(),
            Inner::Remote(remote) => remote.agent(),
        }
    }

    /// The next event; `None` after the last one, or when the agent's stream (or the
    /// replica holding it) went away first (then [`ExecStream::ended`] is false).
    pub async fn next(&mut self) -> Option<exec_event::Kind> {
        match &mut self.inner {
            Inner::Local(local) => local.next().await,
            Inner::Remote(remote) => remote.next().await,
        }
    }

    /// True once the command's last event arrived.
    pub fn ended(&self) -> bool {
        match &self.inner {
            Inner::Local(local) => local.ended,
            Inner::Remote(remote) => remote.ended(),
        }
    }

    /// The timeout the agent was given: the command's own, less the time it waited.
    pub fn timeout_s(&self) -> u32 {
        match &self.inner {
            Inner::Local(local) => local.timeout_s,
            Inner::Remote(remote) => remote.timeout_s(),
        }
    }

    /// True when the command was cut off because its events were not read fast enough
    /// (after [`ExecStream::next`] answered `None`).
    pub fn overrun(&self) -> bool {
        match &self.inner {
            Inner::Local(local) => local.overrun,
            Inner::Remote(remote) => remote.overrun(),
        }
    }

    /// How long the command waited in the agent's queue (ms).
    pub fn queued_ms(&self) -> u64 {
        match &self.inner {
            Inner::Local(local) => local.queued_ms,
            Inner::Remote(remote) => remote.queued_ms(),
        }
    }

    /// Why the events ended before the command did (after [`ExecStream::next`] answered
    /// `None` without an end): the agent went away (`AGENT_OFFLINE`), or the replica
    /// holding its stream did (`REPLICA_LOST`).
    pub fn lost_error(&self) -> Error {
        match &self.inner {
            Inner::Remote(remote) if remote.lost() => Error::coded(
                ApiCode::ReplicaLost,
                format!(
                    "the controller replica holding agent {} went away before the command \
                     ended; its outcome on the agent is not known",
                    remote.agent()
                ),
            ),
            _ => Error::AgentGone(self.agent()),
        }
    }
}

/// A command on this replica's own stream of its agent.
#[derive(Debug)]
struct LocalExec {
    request_id: String,
    session: Arc<Session>,
    events: mpsc::Receiver<ExecEvent>,
    ended: bool,
    overrun: bool,
    /// The command's place in the agent's queue, given back when it ends.
    slot: Option<Slot>,
    queued_ms: u64,
    timeout_s: u32,
}

impl LocalExec {
    async fn next(&mut self) -> Option<exec_event::Kind> {
        if self.ended {
            return None;
        }
        loop {
            let Some(event) = self.events.recv().await else {
                self.overrun = self.session.take_overrun(&self.request_id);
                return None;
            };
            let Some(kind) = event.kind else {
                continue;
            };
            if matches!(
                kind,
                exec_event::Kind::Finished(_) | exec_event::Kind::Rejected(_)
            ) {
                self.ended = true;
                self.slot = None;
            }
            return Some(kind);
        }
    }
}

impl Drop for LocalExec {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        self.session.forget_exec(&self.request_id);
        if !self.session.is_closed() {
            let cancel = controller_message::Kind::Cancel(Cancel {
                request_id: self.request_id.clone(),
            });
            tracing::debug!(agent = %self.session.agent(), request_id = %self.request_id, "cancelling a command");
            if !self.session.try_send(cancel.clone()) {
                // The queue is full: wait for room in the background.
                if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                    let session = self.session.clone();
                    runtime.spawn(async move { session.send(cancel).await });
                }
            }
        }
    }
}
