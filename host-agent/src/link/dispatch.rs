//! The commands of one stream: admit through the guard, run, cancel, and clean up.

use crate::exec::{Executor, rejected};
use crate::guard::{Guard, Mode};
use crate::state::now_unix;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, debug, info, info_span, warn};
use vigil_proto::agent::v1::{ExecEvent, ExecRequest};

/// How long commands get to finish their kill and last event when a stream ends.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(5);

/// Running commands of one stream, by request id.
#[derive(Debug)]
pub struct Dispatcher {
    guard: Arc<Guard>,
    executor: Arc<Executor>,
    events: mpsc::Sender<ExecEvent>,
    running: HashMap<String, CancellationToken>,
    tasks: JoinSet<String>,
}

impl Dispatcher {
    /// A dispatcher sending command events to `events`.
    pub fn new(
        guard: Arc<Guard>,
        executor: Arc<Executor>,
        events: mpsc::Sender<ExecEvent>,
    ) -> Self {
        Dispatcher {
            guard,
            executor,
            events,
            running: HashMap::new(),
            tasks: JoinSet::new(),
        }
    }

    /// Check a request and start it, or send its one `Rejected` event.
    pub async fn exec(&mut self, request: ExecRequest) {
        let id = request.request_id.clone();
        let admitted = if self.running.contains_key(&id) {
            Err(crate::guard::Refusal {
                code: crate::guard::RejectCode::InvalidInput,
                reason: format!("a command with request id {id:?} is already running"),
            })
        } else {
            self.guard.admit(&request, now_unix())
        };
        let admitted = match admitted {
            Ok(admitted) => admitted,
            Err(refusal) => {
                warn!(
                    request = %id,
                    code = %refusal.code,
                    reason = %refusal.reason,
                    command = %request.command,
                    "command refused"
                );
                let _ = self
                    .events
                    .send(rejected(&id, refusal.code, &refusal.reason))
                    .await;
                return;
            }
        };
        let mode = match admitted.mode {
            Mode::Read => "read",
            Mode::Write => "write",
        };
        info!(request = %id, mode, command = %admitted.command, "running command");
        let cancel = CancellationToken::new();
        self.running.insert(id.clone(), cancel.clone());
        let executor = Arc::clone(&self.executor);
        let events = self.events.clone();
        let span = info_span!("exec", request = %id);
        self.tasks.spawn(
            async move {
                match executor.run(admitted, cancel, &events).await {
                    Some(o) => info!(
                        exit_code = ?o.exit_code,
                        signal = ?o.signal,
                        duration_ms = o.duration.as_millis() as u64,
                        output_bytes = o.output_bytes,
                        truncated = o.truncated,
                        timed_out = o.timed_out,
                        cancelled = o.cancelled,
                        "command finished"
                    ),
                    None => warn!("command could not start"),
                }
                id
            }
            .instrument(span),
        );
    }

    /// Kill a running command; unknown ids are ignored.
    pub fn cancel(&mut self, request_id: &str) {
        match self.running.get(request_id) {
            Some(token) => {
                info!(request = %request_id, "cancel requested");
                token.cancel();
            }
            None => debug!(request = %request_id, "cancel for a command that is not running"),
        }
    }

    /// Wait for the next command to end and forget it; `None` when none is running.
    pub async fn next_finished(&mut self) -> Option<()> {
        let done = self.tasks.join_next().await?;
        if let Ok(id) = done {
            self.running.remove(&id);
        }
        Some(())
    }

    /// Number of commands running.
    pub fn running(&self) -> usize {
        self.running.len()
    }

    /// Kill every running command and wait briefly for them to be reaped.
    pub async fn shutdown(mut self) {
        for token in self.running.values() {
            token.cancel();
        }
        let drain = async { while self.tasks.join_next().await.is_some() {} };
        if tokio::time::timeout(SHUTDOWN_WAIT, drain).await.is_err() {
            self.tasks.abort_all();
        }
    }
}
