//! Sends what the sources see over the link: everything on connect (`full`), then only
//! what changed — after a burst of change events (one rescan `debounce` after the first
//! event) and on every periodic rescan. A source that fails keeps its previous resources
//! and its error is reported; large updates are split to stay far below the gRPC
//! message limit.

use super::{Scan, ScanError, Source, SourceCtx};
use prost::Message;
use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;
use tokio::sync::{Notify, mpsc};
use tokio::task::JoinHandle;
use tracing::{debug, info, warn};
use vigil_proto::agent::v1::{
    AgentMessage, HostFacts, InventoryUpdate, SandboxFacts, agent_message,
};
use vigil_proto::convert::resource_to_proto;
use vigil_shared::resource::{Resource, ResourceId};

/// Largest encoded size of one update message; bigger diffs are split.
pub const MAX_UPDATE_BYTES: usize = 2 * 1024 * 1024;
/// Longest a single source scan may take before it counts as failed.
pub const SCAN_TIMEOUT: Duration = Duration::from_secs(60);

/// The discovery side of a running agent: its sources and the change signal their
/// watches raise. Watches start once per process and outlive reconnects.
#[derive(Debug)]
pub struct Discovery {
    sources: Vec<Arc<dyn Source>>,
    ctx: SourceCtx,
    changed: Arc<Notify>,
    watches: Vec<JoinHandle<()>>,
    rescan: Duration,
    debounce: Duration,
    /// The read sandbox's facts, replaced when they change (a controller's policy).
    sandbox: RwLock<Option<SandboxFacts>>,
}

impl Discovery {
    /// Start the sources' watches.
    pub fn start(
        sources: Vec<Arc<dyn Source>>,
        ctx: SourceCtx,
        rescan: Duration,
        debounce: Duration,
    ) -> Self {
        let changed = Arc::new(Notify::new());
        let watches = sources
            .iter()
            .filter_map(|s| s.watch(Arc::clone(&changed)))
            .collect();
        Discovery {
            sources,
            ctx,
            changed,
            watches,
            rescan,
            debounce,
            sandbox: RwLock::new(None),
        }
    }

    /// Send `sandbox` with the host facts.
    pub fn with_sandbox(self, sandbox: SandboxFacts) -> Self {
        self.set_sandbox(sandbox);
        self
    }

    /// Send `sandbox` with the host facts from now on.
    pub fn set_sandbox(&self, sandbox: SandboxFacts) {
        *self.sandbox.write().unwrap_or_else(PoisonError::into_inner) = Some(sandbox);
    }

    /// The host's facts now, with the read sandbox's.
    pub fn host_facts(&self) -> HostFacts {
        HostFacts {
            sandbox: self
                .sandbox
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
            ..super::host_facts()
        }
    }

    /// Report over one stream until `out` closes; the caller aborts the task when the
    /// stream ends.
    pub async fn report(&self, out: mpsc::Sender<AgentMessage>) {
        let mut state = State::default();
        let mut seq = 0u64;
        let mut full = true;
        let mut ticker = tokio::time::interval(self.rescan);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticker.tick().await;
        loop {
            let scans = self.scan_all().await;
            let diff = state.apply(scans, full);
            if full || !diff.is_empty() {
                for update in diff.into_messages(&self.ctx.agent_id, full, &mut seq) {
                    let message = AgentMessage {
                        kind: Some(agent_message::Kind::Inventory(update)),
                    };
                    if out.send(message).await.is_err() {
                        return;
                    }
                }
                if full {
                    info!(resources = state.resources.len(), "inventory sent");
                }
            }
            full = false;
            tokio::select! {
                _ = self.changed.notified() => {
                    tokio::time::sleep(self.debounce).await;
                    debug!("rescanning after a change");
                }
                _ = ticker.tick() => {
                    let facts = AgentMessage {
                        kind: Some(agent_message::Kind::Facts(self.host_facts())),
                    };
                    if out.send(facts).await.is_err() {
                        return;
                    }
                }
                _ = out.closed() => return,
            }
        }
    }

    async fn scan_all(&self) -> Vec<(&'static str, Result<Scan, ScanError>)> {
        let scans = self.sources.iter().map(|source| async move {
            let result = match tokio::time::timeout(SCAN_TIMEOUT, source.scan(&self.ctx)).await {
                Ok(result) => result,
                Err(_) => Err(ScanError::Unreachable(format!(
                    "scan took longer than {} s",
                    SCAN_TIMEOUT.as_secs()
                ))),
            };
            if let Err(error) = &result {
                warn!(source = source.name(), %error, "discovery source failed");
            }
            (source.name(), result)
        });
        futures_util::future::join_all(scans).await
    }
}

impl Drop for Discovery {
    fn drop(&mut self) {
        for watch in &self.watches {
            watch.abort();
        }
    }
}

/// What was last sent, per source, and the merged view.
#[derive(Debug, Default)]
pub struct State {
    by_source: BTreeMap<&'static str, Vec<Resource>>,
    resources: BTreeMap<ResourceId, Resource>,
    notes: Notes,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Notes {
    sources: Vec<String>,
    capped: Vec<String>,
    errors: Vec<String>,
}

/// What changed between two scans.
#[derive(Debug, Default, PartialEq)]
pub struct Diff {
    pub upserts: Vec<Resource>,
    pub removed: Vec<ResourceId>,
    notes: Option<Notes>,
}

impl Diff {
    /// True when nothing changed.
    pub fn is_empty(&self) -> bool {
        self.upserts.is_empty() && self.removed.is_empty() && self.notes.is_none()
    }

    /// The update messages, each at most [`MAX_UPDATE_BYTES`]; only the first of a full
    /// report is marked `full`.
    pub fn into_messages(self, agent: &str, full: bool, seq: &mut u64) -> Vec<InventoryUpdate> {
        let notes = self.notes.unwrap_or_default();
        let mut messages = Vec::new();
        let mut current = InventoryUpdate {
            full,
            removed: self.removed.iter().map(ToString::to_string).collect(),
            sources: notes.sources,
            capped: notes.capped,
            errors: notes.errors,
            ..InventoryUpdate::default()
        };
        let mut size = current.encoded_len();
        for resource in &self.upserts {
            let wire = resource_to_proto(resource, agent);
            let len = wire.encoded_len() + 8;
            if size + len > MAX_UPDATE_BYTES && !current.upserts.is_empty() {
                messages.push(std::mem::take(&mut current));
                size = 0;
            }
            size += len;
            current.upserts.push(wire);
        }
        messages.push(current);
        for message in &mut messages {
            *seq += 1;
            message.seq = *seq;
        }
        messages
    }
}

impl State {
    /// Take in one round of scans and say what changed since the last round (on `full`,
    /// everything).
    pub fn apply(
        &mut self,
        scans: Vec<(&'static str, Result<Scan, ScanError>)>,
        full: bool,
    ) -> Diff {
        let mut notes = Notes::default();
        for (name, result) in scans {
            notes.sources.push(name.to_owned());
            match result {
                Ok(scan) => {
                    notes.capped.extend(scan.capped);
                    self.by_source.insert(name, scan.resources);
                }
                Err(error) => notes.errors.push(format!("{name}: {error}")),
            }
        }
        let mut now = BTreeMap::new();
        for resources in self.by_source.values() {
            for r in resources {
                now.insert(r.id.clone(), r.clone());
            }
        }
        let mut diff = Diff::default();
        for (id, r) in &now {
            if full || self.resources.get(id) != Some(r) {
                diff.upserts.push(r.clone());
            }
        }
        if !full {
            diff.removed = self
                .resources
                .keys()
                .filter(|id| !now.contains_key(*id))
                .cloned()
                .collect();
        }
        if full || notes != self.notes {
            diff.notes = Some(notes.clone());
        }
        self.notes = notes;
        self.resources = now;
        diff
    }
}

#[cfg(test)]
mod tests;
