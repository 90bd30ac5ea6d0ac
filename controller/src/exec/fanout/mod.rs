//! Fan-out: one read on many targets (`POST /api/exec/fanout`, `vigil-controller exec
//! --all | --label`). The caller classifies the command once; [`ExecService::fanout`] then
//! picks the targets ([`select`]), sends the command to at most `concurrency` of them at
//! a time ([`target::run`], each with its own deadline and output cap), and yields a
//! [`FanoutEvent::Result`] per target as it ends, then one [`FanoutEvent::Summary`]. One
//! audit row records the whole request when it ends, or when the caller drops the
//! [`Fanout`] early (`cancelled`); dropping it also cancels the commands still running.

mod outcome;
mod select;
mod target;

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_util::stream::{self, BoxStream, Stream, StreamExt};
use serde::{Deserialize, Serialize};

pub use outcome::{Summary, Tally, TargetError, TargetResult, TargetStatus};
pub use select::{EnrolledAgent, Plan, Selection, Target, enrolled, select};

use super::ExecService;
use super::running::DEFAULT_TIMEOUT_S;
use crate::audit::{self, Entry};
use crate::store::Store;
use crate::{Error, Result};

/// Most output kept per target and stream (stdout, stderr): 64 KiB.
pub const FANOUT_OUTPUT_CAP: usize = 64 * 1024;
/// Default number of targets a fan-out has in flight at once.
pub const DEFAULT_FANOUT_CONCURRENCY: usize = 512;
/// Time past a target's timeout before the controller gives up on it (the agent kills the
/// command at the timeout and reports; this covers the report's way back).
pub const FANOUT_GRACE: Duration = Duration::from_secs(2);
/// The audit action of a fan-out.
pub const FANOUT_ACTION: &str = "exec.fanout";

/// One fan-out to run.
#[derive(Debug, Clone)]
pub struct FanoutSpec {
    /// Who asked.
    pub actor: String,
    /// Which targets.
    pub selection: Selection,
    /// The command, already classified as a read.
    pub command: String,
    /// Timeout per target in seconds (0: 30).
    pub timeout_s: u32,
}

/// What a running fan-out yields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FanoutEvent {
    /// A target ended.
    Result(TargetResult),
    /// Every target ended (the last event).
    Summary(Summary),
}

/// The whole answer of a fan-out: results in selection order and the counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FanoutAnswer {
    /// One per target.
    pub results: Vec<TargetResult>,
    /// The counts.
    pub summary: Summary,
}

impl ExecService {
    /// Picks the targets of `spec` and starts sending them the command. An empty selection
    /// is `NOT_FOUND`; a target that is neither an agent id, a resource id nor a resource's
    /// name or alias is `NOT_FOUND`, and a name several resources share `INVALID_INPUT`.
    pub async fn fanout(&self, spec: FanoutSpec) -> Result<Fanout> {
        let started = Instant::now();
        let agents = enrolled(&self.agents);
        // Names and aliases become resource ids here; ids pass through as they are.
        let mut selection = spec.selection.clone();
        for target in &mut selection.targets {
            let text = target.trim();
            if text.parse::<vigil_shared::ids::AgentId>().is_err()
                && text.parse::<vigil_shared::resource::ResourceId>().is_err()
            {
                *target = self.resource_named(text)?.to_string();
            }
        }
        let targets = select(&selection, &agents, |id| self.route(id))?;
        drop(agents);
        if targets.is_empty() {
            return Err(Error::NotFound(format!(
                "no target matches the selection ({}): no enrolled agent has these labels, or none is enrolled",
                spec.selection.describe()
            )));
        }
        let timeout_s = match spec.timeout_s {
            0 => DEFAULT_TIMEOUT_S,
            n => n.min(super::MAX_TIMEOUT_S),
        };
        let count = targets.len();
        let concurrency = self.fanout_concurrency.max(1);
        tracing::info!(actor = %spec.actor, selection = %spec.selection.describe(), targets = count,
            concurrency, timeout_s, "fanning out a command");
        let context = Arc::new(target::FanoutContext {
            dispatcher: self.dispatcher.clone(),
            agents: self.agents.clone(),
            command: spec.command.clone(),
            timeout_s,
            caller: spec.actor.clone(),
        });
        let results = stream::iter(targets)
            .map(move |t| target::run(context.clone(), t))
            .buffer_unordered(concurrency)
            .boxed();
        let mut entry = Entry::new(&spec.actor, FANOUT_ACTION, "cancelled").command(&spec.command);
        entry.target = Some(format!("{} ({count} targets)", spec.selection.describe()));
        Ok(Fanout {
            results,
            tally: Tally::new(count),
            record: Some((self.agents.store().clone(), entry)),
            started,
            finished: false,
        })
    }
}

/// A fan-out on its way: a stream of [`FanoutEvent`]s. Dropped before its summary, it
/// cancels the commands still running and records the request as `cancelled`.
pub struct Fanout {
    results: BoxStream<'static, TargetResult>,
    tally: Tally,
    record: Option<(Store, Entry)>,
    started: Instant,
    finished: bool,
}

impl std::fmt::Debug for Fanout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fanout")
            .field("tally", &self.tally)
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

impl Fanout {
    /// Number of targets selected.
    pub fn targets(&self) -> usize {
        self.tally.summary(0).targets
    }

    /// Runs every target to its end; results in selection order.
    pub async fn collect(mut self) -> FanoutAnswer {
        let mut results = Vec::with_capacity(self.targets());
        let mut summary = Summary::default();
        while let Some(event) = self.next().await {
            match event {
                FanoutEvent::Result(result) => results.push(result),
                FanoutEvent::Summary(last) => summary = last,
            }
        }
        results.sort_unstable_by_key(|r| r.index);
        FanoutAnswer { results, summary }
    }

    fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Writes the audit row (once): `verdict (N targets: a ok, b failed, …)`.
    fn record(&mut self, verdict: &str) {
        let Some((store, mut entry)) = self.record.take() else {
            return;
        };
        let s = self.tally.summary(self.elapsed_ms());
        entry.outcome = format!(
            "{verdict} ({} targets: {} ok, {} failed, {} refused, {} offline)",
            s.targets, s.ok, s.failed, s.refused, s.offline
        );
        entry.bytes = Some(i64::try_from(self.tally.bytes()).unwrap_or(i64::MAX));
        tracing::info!(actor = %entry.actor, outcome = %entry.outcome, duration_ms = s.duration_ms,
            "fan-out ended");
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move { audit::record(&store, entry).await });
        }
    }
}

impl Stream for Fanout {
    type Item = FanoutEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<FanoutEvent>> {
        if self.finished {
            return Poll::Ready(None);
        }
        match self.results.poll_next_unpin(cx) {
            Poll::Ready(Some(result)) => {
                self.tally.add(&result);
                Poll::Ready(Some(FanoutEvent::Result(result)))
            }
            Poll::Ready(None) => {
                self.finished = true;
                let summary = self.tally.summary(self.elapsed_ms());
                let verdict = if summary.all_ok() { "ok" } else { "partial" };
                self.record(verdict);
                Poll::Ready(Some(FanoutEvent::Summary(summary)))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for Fanout {
    fn drop(&mut self) {
        if self.record.is_some() {
            tracing::info!(
                done = self.tally.summary(0).done(),
                targets = self.targets(),
                "fan-out dropped before its end; cancelling the commands still running"
            );
            self.record("cancelled");
        }
    }
}
