//! [`ExecTrail`]: follows one execution and, when dropped (finished, failed, refused or
//! abandoned by the client), writes its audit row and its latency.

use std::sync::Arc;
use std::time::Instant;

use crate::audit::{Entry, record};
use crate::metrics::Metrics;
use crate::store::Store;

/// The audit trail of one execution in progress.
#[derive(Debug)]
pub struct ExecTrail {
    store: Store,
    metrics: Arc<Metrics>,
    entry: Entry,
    started: Instant,
    bytes: i64,
    /// The agent said the command started.
    began: bool,
}

impl ExecTrail {
    /// Starts the trail of `command` on `agent` by `actor` (`action`: `exec` or `raw_exec`).
    pub fn new(
        store: Store,
        metrics: Arc<Metrics>,
        actor: &str,
        action: &str,
        agent: &str,
        target: &str,
        command: &str,
    ) -> ExecTrail {
        let mut entry = Entry::new(actor, action, "abandoned")
            .agent(agent)
            .command(command);
        entry.target = Some(target.to_owned());
        ExecTrail {
            store,
            metrics,
            entry,
            started: Instant::now(),
            bytes: 0,
            began: false,
        }
    }

    /// Records the approval this execution comes from.
    pub fn approval(&mut self, id: &str) {
        self.entry.approval_id = Some(id.to_owned());
    }

    /// Counts output bytes.
    pub fn output(&mut self, len: usize) {
        self.bytes = self
            .bytes
            .saturating_add(i64::try_from(len).unwrap_or(i64::MAX));
    }

    /// The command ended with `exit_code` (`None`: killed by a signal).
    pub fn finished(&mut self, exit_code: Option<i32>) {
        self.entry.outcome = "ok".into();
        self.entry.exit_code = exit_code.map(i64::from);
    }

    /// Takes note of an event from the agent.
    pub fn observe(&mut self, kind: &vigil_proto::agent::v1::exec_event::Kind) {
        use vigil_proto::agent::v1::exec_event::Kind;
        match kind {
            Kind::StdoutChunk(chunk) | Kind::StderrChunk(chunk) => self.output(chunk.len()),
            Kind::Finished(finished) => {
                self.finished(super::ExecExit::from_finished(finished).exit_code);
            }
            Kind::Rejected(rejected) => self.failed(&rejected.code),
            Kind::Started(_) => self.began = true,
        }
    }

    /// The execution failed or was refused, with this API error code.
    /// A write (one with an approval) that had started and then lost its agent or its
    /// deadline may or may not have written: its outcome is `unknown`, never an error
    /// that reads as "it did not happen".
    pub fn failed(&mut self, code: &str) {
        let lost = matches!(
            code,
            "AGENT_OFFLINE" | "TIMEOUT" | "SLOW_READER" | "REPLICA_LOST"
        );
        let kind = if self.began && lost && self.entry.approval_id.is_some() {
            "unknown"
        } else {
            "error"
        };
        self.entry.outcome = format!("{kind}: {}", code.to_ascii_lowercase());
    }
}

impl Drop for ExecTrail {
    fn drop(&mut self) {
        self.metrics.exec(self.started.elapsed());
        let mut entry = std::mem::take(&mut self.entry);
        entry.bytes = Some(self.bytes);
        tracing::info!(actor = %entry.actor, action = %entry.action, outcome = %entry.outcome,
            exit_code = ?entry.exit_code, bytes = self.bytes, "execution ended");
        let store = self.store.clone();
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move { record(&store, entry).await });
        }
    }
}
