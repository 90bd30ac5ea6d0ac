//! Batched writes of what agent streams report (hello, facts, last seen). The registry is
//! changed at once; the agent is only marked dirty here, and a flush writes every dirty
//! agent's current record in one transaction per [`BATCH`] agents. A connect wave of
//! thousands of agents therefore costs a few transactions instead of three statements per
//! agent, and heartbeats never touch the database.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use vigil_shared::ids::AgentId;

use super::registry::Registry;
use crate::Result;
use crate::store::Store;
use crate::store::agents::AgentState;

/// How often dirty agents are written.
pub const FLUSH_INTERVAL: Duration = Duration::from_secs(1);
/// How often the live streams' last-seen times are copied to the record.
pub const LAST_SEEN_EVERY: Duration = Duration::from_secs(60);
/// Most agents written in one transaction; this many dirty agents also start a flush early.
pub const BATCH: usize = 500;

/// The set of agents whose record changed since the last flush.
#[derive(Debug, Default)]
pub struct Writer {
    dirty: Mutex<HashSet<AgentId>>,
    wake: Notify,
    flushing: tokio::sync::Mutex<()>,
}

impl Writer {
    fn dirty(&self) -> std::sync::MutexGuard<'_, HashSet<AgentId>> {
        self.dirty.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Marks `id`'s record as changed.
    pub fn mark(&self, id: AgentId) {
        let mut dirty = self.dirty();
        dirty.insert(id);
        if dirty.len() >= BATCH {
            self.wake.notify_one();
        }
    }

    /// Completes when a full batch is waiting.
    pub async fn full(&self) {
        self.wake.notified().await;
    }

    /// How many agents wait to be written.
    pub fn pending(&self) -> usize {
        self.dirty().len()
    }

    /// Writes the current record of every dirty agent; returns how many were written. On
    /// a database error the agents not written stay dirty for the next flush.
    pub async fn flush(&self, registry: &Registry, store: &Store) -> Result<usize> {
        let _one_at_a_time = self.flushing.lock().await;
        let ids: Vec<AgentId> = self.dirty().drain().collect();
        let mut written = 0;
        for chunk in ids.chunks(BATCH) {
            let states: Vec<AgentState> = chunk
                .iter()
                .filter_map(|id| registry.get(*id))
                .map(|row| AgentState::of(&row))
                .collect();
            if let Err(error) = store.record_agent_states(&states).await {
                self.dirty().extend(ids[written..].iter().copied());
                return Err(error);
            }
            written += chunk.len();
        }
        if written > 0 {
            tracing::debug!(written, "wrote agent records");
        }
        Ok(written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::agents::test_support::enroll;
    use crate::store::test_support::{all_stores, temp_store};

    #[tokio::test]
    async fn a_flush_writes_the_current_record_and_clears_the_set() {
        for (store, _cleanup) in all_stores().await {
            flush_writes_the_record(&store).await;
        }
    }

    async fn flush_writes_the_record(store: &Store) {
        let row = enroll(store, "h1").await;
        let registry = Registry::from_rows(vec![row.clone()]);
        let writer = Writer::default();
        registry.update(row.id, |r| {
            r.hostname = "h1-renamed".into();
            r.version = "9.9.9".into();
            r.read_only = true;
            r.last_seen = Some(1234);
            r.facts = Some(serde_json::json!({"kernel": "6.1"}));
        });
        writer.mark(row.id);
        writer.mark(row.id);
        assert_eq!(writer.pending(), 1);
        assert_eq!(writer.flush(&registry, store).await.unwrap(), 1);
        assert_eq!(writer.pending(), 0);
        let stored = store.get_agent(row.id).await.unwrap().unwrap();
        assert_eq!(stored.hostname, "h1-renamed");
        assert_eq!(stored.version, "9.9.9");
        assert!(stored.read_only);
        assert_eq!(stored.last_seen, Some(1234));
        assert_eq!(stored.facts, Some(serde_json::json!({"kernel": "6.1"})));
        assert_eq!(writer.flush(&registry, store).await.unwrap(), 0);
    }

    #[tokio::test]
    async fn a_failed_flush_keeps_the_agents_dirty() {
        let (store, _dir) = temp_store().await;
        let row = enroll(&store, "h1").await;
        let registry = Registry::from_rows(vec![row.clone()]);
        let writer = Writer::default();
        writer.mark(row.id);
        store.close().await;
        assert!(writer.flush(&registry, &store).await.is_err());
        assert_eq!(writer.pending(), 1);
    }

    #[tokio::test]
    async fn many_dirty_agents_are_written_in_batches() {
        let (store, _dir) = temp_store().await;
        let mut rows = Vec::new();
        for i in 0..(BATCH + 7) {
            rows.push(enroll(&store, &format!("h{i}")).await);
        }
        let registry = Registry::from_rows(rows.clone());
        let writer = Writer::default();
        for row in &rows {
            registry.update(row.id, |r| r.last_seen = Some(77));
            writer.mark(row.id);
        }
        assert_eq!(writer.flush(&registry, &store).await.unwrap(), BATCH + 7);
        let stored = store.list_agents(false).await.unwrap();
        assert!(stored.iter().all(|r| r.last_seen == Some(77)));
    }
}
