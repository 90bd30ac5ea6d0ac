//! Live agent streams: one [`Session`] per connected identity (its hello, the sender of its
//! outbound messages, the commands waiting for events), held in [`Sessions`].

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tonic::Status;
use vigil_proto::agent::v1::{
    Cancel, ControllerMessage, ExecEvent, Goodbye, controller_message, exec_event,
};
use vigil_shared::ids::AgentId;

use super::queue::{AgentQueue, QueueLimits};
use crate::{Error, Result};

/// Most commands one agent may have waiting for events at once (the agent itself runs 8).
pub const MAX_PENDING_PER_AGENT: usize = 64;
/// Events held for one command whose reader is slower than the agent (each chunk is at
/// most 16 KiB, so about 4 MiB). When they are all unread, the agent's stream waits for the
/// reader (back-pressure), for at most [`READER_STALL`]; then the command is cut off and
/// cancelled, so a slow client can neither grow the controller's memory nor hold up the
/// agent's other commands for long.
pub const EVENT_BUFFER: usize = 256;
/// Longest the agent's stream waits for one command's reader to make room.
pub const READER_STALL: std::time::Duration = std::time::Duration::from_secs(2);

/// Room in a stream's outbound queue.
pub const OUTBOUND_CAPACITY: usize = 64;

/// One message to an agent, or the error that ends its stream. Boxed because tokio's
/// channel keeps its blocks of 32 slots for as long as the stream lives (two once 32
/// messages went through): unboxed, a slot is about 350 bytes, so 22 KiB per agent, 220 MiB
/// at 10,000 agents, reached after the 32nd fan-out; boxed, a slot is one pointer.
pub type Outgoing = Box<Result<ControllerMessage, Status>>;

/// The sending half of a stream's outbound messages.
pub type Outbound = mpsc::Sender<Outgoing>;

/// A stream's outbound queue: the [`Outbound`] sender and its receiver.
pub fn outbound_channel() -> (Outbound, mpsc::Receiver<Outgoing>) {
    mpsc::channel(OUTBOUND_CAPACITY)
}

/// What the agent said in its hello.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentHello {
    /// The agent's version.
    pub version: String,
    /// The host name the agent runs on.
    pub hostname: String,
    /// Operating system.
    pub os: String,
    /// CPU architecture.
    pub arch: String,
    /// Execution contexts the agent can reach.
    pub capabilities: Vec<String>,
    /// True when the agent refuses every write.
    pub read_only: bool,
}

/// One live stream.
#[derive(Debug)]
pub struct Session {
    agent: AgentId,
    conn: u64,
    hello: AgentHello,
    connected_at: i64,
    last_seen_ms: AtomicI64,
    outbound: Outbound,
    pending: Mutex<HashMap<String, mpsc::Sender<ExecEvent>>>,
    /// Commands cut off because their reader fell [`EVENT_BUFFER`] events behind.
    overrun: Mutex<HashSet<String>>,
    queue: Arc<AgentQueue>,
    closed: CancellationToken,
}

impl Session {
    /// A session for `agent` on connection number `conn`.
    pub fn new(
        agent: AgentId,
        conn: u64,
        hello: AgentHello,
        outbound: Outbound,
        now_ms: i64,
        limits: QueueLimits,
    ) -> Arc<Self> {
        Arc::new(Session {
            agent,
            conn,
            hello,
            connected_at: now_ms / 1000,
            last_seen_ms: AtomicI64::new(now_ms),
            outbound,
            pending: Mutex::new(HashMap::new()),
            overrun: Mutex::new(HashSet::new()),
            queue: AgentQueue::new(limits),
            closed: CancellationToken::new(),
        })
    }

    /// The queue of commands for this agent.
    pub fn queue(&self) -> &Arc<AgentQueue> {
        &self.queue
    }

    /// The agent's identity.
    pub fn agent(&self) -> AgentId {
        self.agent
    }

    /// The stream's number (see [`Sessions::next_conn`]).
    pub fn conn(&self) -> u64 {
        self.conn
    }

    /// What the agent said in its hello.
    pub fn hello(&self) -> &AgentHello {
        &self.hello
    }

    /// When the stream was opened (Unix seconds).
    pub fn connected_at(&self) -> i64 {
        self.connected_at
    }

    /// When the agent last sent anything (Unix milliseconds).
    pub fn last_seen_ms(&self) -> i64 {
        self.last_seen_ms.load(Ordering::Relaxed)
    }

    /// Records that the agent sent something.
    pub fn touch(&self, now_ms: i64) {
        self.last_seen_ms.store(now_ms, Ordering::Relaxed);
    }

    /// Cancelled when the stream is closed, from either side.
    pub fn closed(&self) -> &CancellationToken {
        &self.closed
    }

    /// True once the stream is closed.
    pub fn is_closed(&self) -> bool {
        self.closed.is_cancelled()
    }

    /// Sends a message to the agent, waiting for room in the outbound queue.
    pub async fn send(&self, message: controller_message::Kind) -> Result<()> {
        let message = Box::new(Ok(ControllerMessage {
            kind: Some(message),
        }));
        tokio::select! {
            biased;
            () = self.closed.cancelled() => Err(Error::AgentGone(self.agent)),
            sent = self.outbound.send(message) => sent.map_err(|_| Error::AgentGone(self.agent)),
        }
    }

    /// Sends a message if there is room right now; false otherwise.
    pub fn try_send(&self, message: controller_message::Kind) -> bool {
        !self.is_closed()
            && self
                .outbound
                .try_send(Box::new(Ok(ControllerMessage {
                    kind: Some(message),
                })))
                .is_ok()
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<String, mpsc::Sender<ExecEvent>>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn overrun(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.overrun.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// True (once) when the command `request_id` was cut off for a slow reader.
    pub fn take_overrun(&self, request_id: &str) -> bool {
        self.overrun().remove(request_id)
    }

    /// Registers a command so its events reach the returned receiver.
    pub fn open_exec(&self, request_id: &str) -> Result<mpsc::Receiver<ExecEvent>> {
        if self.is_closed() {
            return Err(Error::AgentOffline(self.agent));
        }
        let mut pending = self.pending();
        if pending.len() >= MAX_PENDING_PER_AGENT {
            return Err(Error::AgentRejected {
                code: "AGENT_BUSY".into(),
                reason: format!("the agent already has {MAX_PENDING_PER_AGENT} commands in flight"),
            });
        }
        let (tx, rx) = mpsc::channel(EVENT_BUFFER);
        pending.insert(request_id.to_owned(), tx);
        Ok(rx)
    }

    /// Stops routing events of a command, and forgets that it was cut off (its reader,
    /// dropped before reading to the end, will not ask).
    pub fn forget_exec(&self, request_id: &str) {
        self.pending().remove(request_id);
        self.overrun().remove(request_id);
    }

    /// Commands this session still holds anything for (waiting for events, or cut off
    /// and not yet told), so that a test can see nothing is kept after they end.
    #[cfg(test)]
    fn held_commands(&self) -> usize {
        self.pending().len() + self.overrun().len()
    }

    /// Number of commands waiting for events.
    pub fn pending_count(&self) -> usize {
        self.pending().len()
    }

    /// Routes an event from the agent to the command waiting for it; the last event of a
    /// command (finished or rejected) also forgets it. Waits (at most [`READER_STALL`])
    /// when the command's reader is [`EVENT_BUFFER`] events behind, then cuts it off.
    pub async fn route(&self, event: ExecEvent) {
        let terminal = matches!(
            event.kind,
            Some(exec_event::Kind::Finished(_) | exec_event::Kind::Rejected(_))
        );
        let request_id = event.request_id.clone();
        let Some(waiter) = self.pending().get(&request_id).cloned() else {
            tracing::debug!(request_id = %request_id, "event for a command nobody waits for");
            return;
        };
        let delivered = match waiter.try_send(event) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Closed(_)) => false,
            Err(mpsc::error::TrySendError::Full(event)) => {
                match tokio::time::timeout(READER_STALL, waiter.send(event)).await {
                    Ok(sent) => sent.is_ok(),
                    Err(_) => {
                        self.cut_off(request_id);
                        return;
                    }
                }
            }
        };
        if !delivered || terminal {
            self.forget_exec(&request_id);
        }
    }

    /// The reader of `request_id` stayed [`EVENT_BUFFER`] events behind for
    /// [`READER_STALL`]: stop routing its events and stop the command on the agent.
    fn cut_off(&self, request_id: String) {
        self.pending().remove(&request_id);
        tracing::warn!(agent = %self.agent, request_id = %request_id, buffered = EVENT_BUFFER,
            "a command's reader is too slow; cutting it off");
        self.overrun().insert(request_id.clone());
        let cancel = controller_message::Kind::Cancel(Cancel { request_id });
        if !self.try_send(cancel) {
            tracing::debug!("the outbound queue is full; the reader's drop cancels it");
        }
    }

    /// Closes the stream, first sending `goodbye` if given.
    pub fn close(&self, goodbye: Option<Goodbye>) {
        if let Some(goodbye) = goodbye {
            let _ = self.outbound.try_send(Box::new(Ok(ControllerMessage {
                kind: Some(controller_message::Kind::Goodbye(goodbye)),
            })));
        }
        self.closed.cancel();
    }

    /// Ends the stream with an error status.
    pub fn fail(&self, status: Status) {
        let _ = self.outbound.try_send(Box::new(Err(status)));
        self.closed.cancel();
    }

    /// Drops every waiting command: their receivers see the end of the stream.
    pub fn drop_pending(&self) {
        self.pending().clear();
    }
}

/// Every live stream, by agent identity.
#[derive(Debug, Default)]
pub struct Sessions {
    map: Mutex<HashMap<AgentId, Arc<Session>>>,
    next_conn: AtomicU64,
    limits: QueueLimits,
}

impl Sessions {
    /// An empty registry whose agents take the default number of commands at once.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty registry whose agents' queues have `limits`.
    pub fn with_limits(limits: QueueLimits) -> Self {
        Sessions {
            limits,
            ..Self::default()
        }
    }

    /// How many commands each agent runs and queues.
    pub fn limits(&self) -> QueueLimits {
        self.limits
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<AgentId, Arc<Session>>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A number for the next stream, so a stale stream never removes its successor.
    pub fn next_conn(&self) -> u64 {
        self.next_conn.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Registers a stream; refused while the identity has another live one.
    pub fn insert(&self, session: Arc<Session>) -> Result<()> {
        let mut map = self.map();
        if map
            .get(&session.agent)
            .is_some_and(|live| !live.is_closed())
        {
            return Err(Error::AlreadyConnected);
        }
        map.insert(session.agent, session);
        Ok(())
    }

    /// Removes the stream `conn` of `agent` (not a newer one).
    pub fn remove(&self, agent: AgentId, conn: u64) {
        let mut map = self.map();
        if map.get(&agent).is_some_and(|s| s.conn == conn) {
            map.remove(&agent);
        }
    }

    /// The live stream of `agent`.
    pub fn get(&self, agent: AgentId) -> Option<Arc<Session>> {
        self.map().get(&agent).filter(|s| !s.is_closed()).cloned()
    }

    /// Every live stream.
    pub fn all(&self) -> Vec<Arc<Session>> {
        self.map()
            .values()
            .filter(|s| !s.is_closed())
            .cloned()
            .collect()
    }

    /// Closes the live stream of `agent` with `goodbye`; false when there was none.
    pub fn close(&self, agent: AgentId, goodbye: Goodbye) -> bool {
        match self.get(agent) {
            Some(session) => {
                session.close(Some(goodbye));
                true
            }
            None => false,
        }
    }

    /// Closes every stream with `goodbye` (on shutdown).
    pub fn close_all(&self, goodbye: &Goodbye) {
        for session in self.all() {
            session.close(Some(goodbye.clone()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_proto::agent::v1::{Finished, Started};

    fn session(sessions: &Sessions, agent: AgentId) -> (Arc<Session>, mpsc::Receiver<Outgoing>) {
        let (tx, rx) = mpsc::channel(8);
        let hello = AgentHello {
            version: "0.1.0".into(),
            hostname: "h".into(),
            os: "linux".into(),
            arch: "x86_64".into(),
            capabilities: vec!["host".into()],
            read_only: false,
        };
        (
            Session::new(
                agent,
                sessions.next_conn(),
                hello,
                tx,
                1_000,
                QueueLimits::default(),
            ),
            rx,
        )
    }

    #[test]
    fn a_second_live_stream_is_refused_and_a_closed_one_replaced() {
        let sessions = Sessions::new();
        let agent = AgentId::new_random();
        let (first, _rx1) = session(&sessions, agent);
        sessions.insert(first.clone()).unwrap();
        let (second, _rx2) = session(&sessions, agent);
        assert!(matches!(
            sessions.insert(second.clone()),
            Err(Error::AlreadyConnected)
        ));
        first.close(None);
        sessions.insert(second.clone()).unwrap();
        sessions.remove(agent, first.conn);
        assert!(
            sessions.get(agent).is_some(),
            "a stale stream does not remove its successor"
        );
        sessions.remove(agent, second.conn);
        assert!(sessions.get(agent).is_none());
    }

    #[tokio::test]
    async fn events_reach_their_command_until_the_last_one() {
        let sessions = Sessions::new();
        let (s, _rx) = session(&sessions, AgentId::new_random());
        let mut events = s.open_exec("r1").unwrap();
        let event = |kind| ExecEvent {
            request_id: "r1".into(),
            kind: Some(kind),
        };
        s.route(event(exec_event::Kind::Started(Started {}))).await;
        s.route(event(exec_event::Kind::StdoutChunk(b"hi".to_vec())))
            .await;
        s.route(event(exec_event::Kind::Finished(Finished::default())))
            .await;
        assert_eq!(s.pending_count(), 0);
        let mut seen = 0;
        while events.try_recv().is_ok() {
            seen += 1;
        }
        assert_eq!(seen, 3);
    }

    #[tokio::test(start_paused = true)]
    async fn a_reader_too_far_behind_is_cut_off_and_its_command_cancelled() {
        let sessions = Sessions::new();
        let (s, mut outbound) = session(&sessions, AgentId::new_random());
        let mut events = s.open_exec("r1").unwrap();
        let chunk = |i: usize| ExecEvent {
            request_id: "r1".into(),
            kind: Some(exec_event::Kind::StdoutChunk(vec![b'x'; i % 7 + 1])),
        };
        for i in 0..EVENT_BUFFER {
            s.route(chunk(i)).await;
        }
        assert_eq!(s.pending_count(), 1, "a full buffer is still within bounds");
        // One more waits for the reader; a reader that makes room in time is kept.
        let (waited, _) = tokio::join!(s.route(chunk(EVENT_BUFFER)), async {
            tokio::time::sleep(READER_STALL / 2).await;
            events.recv().await.unwrap()
        });
        let () = waited;
        assert_eq!(s.pending_count(), 1, "back-pressure, not a cut");
        let started = tokio::time::Instant::now();
        s.route(chunk(EVENT_BUFFER + 1)).await;
        assert!(
            started.elapsed() >= READER_STALL,
            "it waited for the reader first"
        );
        assert_eq!(s.pending_count(), 0, "a reader still behind is cut off");
        let Some(Ok(ControllerMessage {
            kind: Some(controller_message::Kind::Cancel(cancel)),
        })) = outbound.recv().await.map(|m| *m)
        else {
            panic!("no cancel sent to the agent");
        };
        assert_eq!(cancel.request_id, "r1");
        let mut read = 0;
        while events.recv().await.is_some() {
            read += 1;
        }
        assert_eq!(
            read, EVENT_BUFFER,
            "what was buffered is still delivered, then the end"
        );
        assert!(s.take_overrun("r1"));
        assert!(!s.take_overrun("r1"), "told once");
        assert_eq!(s.held_commands(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_command_cut_off_and_dropped_unread_leaves_nothing_behind() {
        let sessions = Sessions::new();
        let (s, _outbound) = session(&sessions, AgentId::new_random());
        let events = s.open_exec("r1").unwrap();
        for _ in 0..=EVENT_BUFFER {
            s.route(ExecEvent {
                request_id: "r1".into(),
                kind: Some(exec_event::Kind::StdoutChunk(b"x".to_vec())),
            })
            .await;
        }
        assert_eq!(s.pending_count(), 0, "cut off");
        assert_eq!(s.held_commands(), 1, "remembered for its reader");
        // The reader leaves without reading to the end (as an `ExecStream` dropped early).
        drop(events);
        s.forget_exec("r1");
        assert_eq!(
            s.held_commands(),
            0,
            "nothing is kept per command once it ended"
        );
    }

    #[tokio::test]
    async fn closing_sends_the_goodbye_first() {
        let sessions = Sessions::new();
        let agent = AgentId::new_random();
        let (s, mut rx) = session(&sessions, agent);
        sessions.insert(s.clone()).unwrap();
        assert!(sessions.close(
            agent,
            Goodbye {
                reason: "revoked".into(),
                retry: false
            }
        ));
        assert!(s.is_closed());
        let Some(Ok(ControllerMessage {
            kind: Some(controller_message::Kind::Goodbye(g)),
        })) = rx.recv().await.map(|m| *m)
        else {
            panic!("no goodbye");
        };
        assert!(!g.retry);
        assert!(s.send(controller_message::Kind::Goodbye(g)).await.is_err());
    }
}
