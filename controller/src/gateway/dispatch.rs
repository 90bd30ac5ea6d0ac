//! Sending commands to agents: [`Dispatcher::exec`] sends an `ExecRequest` on the agent's
//! stream and returns an [`ExecStream`] of its events. Dropping the stream before the
//! command ended (the HTTP client went away, a deadline passed) sends a `Cancel`.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;
use vigil_proto::agent::v1::{Cancel, ExecEvent, ExecRequest, controller_message, exec_event};
use vigil_shared::ids::AgentId;

use crate::agents::Agents;
use crate::agents::queue::Slot;
use crate::agents::sessions::Session;
use crate::{Error, Result};

/// Routes commands to connected agents.
#[derive(Debug, Clone)]
pub struct Dispatcher {
    agents: Agents,
}

impl Dispatcher {
    /// A dispatcher over the agents' live streams, using their records to tell unknown
    /// agents from disconnected ones.
    pub fn new(agents: Agents) -> Self {
        Dispatcher { agents }
    }

    /// The live session of `agent`, or why there is none: `NotFound` (never enrolled),
    /// `AgentRevoked`, or `AgentOffline`.
    pub async fn session(&self, agent: AgentId) -> Result<Arc<Session>> {
        if let Some(session) = self.agents.sessions().get(agent) {
            return Ok(session);
        }
        match self.agents.get(agent) {
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
        let session = self.session(agent).await?;
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
        let stream = ExecStream {
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
        Ok(stream)
    }
}

/// The events of one command. Dropped before the command ended, it cancels the command.
#[derive(Debug)]
pub struct ExecStream {
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

impl ExecStream {
    /// The request id of the command.
    pub fn request_id(&self) -> &str {
        &self.request_id
    }

    /// The agent running the command.
    pub fn agent(&self) -> AgentId {
        self.session.agent()
    }

    /// The next event; `None` after the last one, or when the agent's stream ended first
    /// (then [`ExecStream::ended`] is false).
    pub async fn next(&mut self) -> Option<exec_event::Kind> {
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

    /// True once the command's last event arrived.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// The timeout the agent was given: the command's own, less the time it waited.
    pub fn timeout_s(&self) -> u32 {
        self.timeout_s
    }

    /// True when the command was cut off because its events were not read fast enough
    /// (after [`ExecStream::next`] answered `None`).
    pub fn overrun(&self) -> bool {
        self.overrun
    }

    /// How long the command waited in the agent's queue (ms).
    pub fn queued_ms(&self) -> u64 {
        self.queued_ms
    }
}

impl Drop for ExecStream {
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
