//! The in-memory record of every enrolled agent, revoked ones included: loaded from the
//! database at start, then kept current by enrollment, hellos, facts, renewals and
//! revocations. Lookups and the agent list are served from here; the database stays the
//! record, written through at once for enrollment, renewal and revocation, and in batches
//! ([`super::writer`]) for what the streams report.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use vigil_shared::ids::AgentId;

use crate::store::agents::AgentRow;

/// Every known agent by identity.
#[derive(Debug, Default)]
pub struct Registry {
    map: RwLock<HashMap<AgentId, Arc<AgentRow>>>,
}

impl Registry {
    /// A registry holding `rows` (as the database lists them).
    pub fn from_rows(rows: Vec<AgentRow>) -> Self {
        let map = rows
            .into_iter()
            .map(|row| (row.id, Arc::new(row)))
            .collect();
        Registry {
            map: RwLock::new(map),
        }
    }

    /// The record of `id`, revoked or not.
    pub fn get(&self, id: AgentId) -> Option<Arc<AgentRow>> {
        self.map
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&id)
            .cloned()
    }

    /// Adds (or replaces) a record.
    pub fn insert(&self, row: AgentRow) {
        self.map
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(row.id, Arc::new(row));
    }

    /// Changes the record of `id` in place; false when there is none.
    pub fn update(&self, id: AgentId, change: impl FnOnce(&mut AgentRow)) -> bool {
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
        match map.get_mut(&id) {
            Some(row) => {
                change(Arc::make_mut(row));
                true
            }
            None => false,
        }
    }

    /// Every record, oldest enrollment first (ties by id), as the database orders them;
    /// revoked ones only when `include_revoked`.
    pub fn all(&self, include_revoked: bool) -> Vec<Arc<AgentRow>> {
        let mut rows: Vec<Arc<AgentRow>> = self
            .map
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .filter(|row| include_revoked || row.revoked_at.is_none())
            .cloned()
            .collect();
        // A UUID's text orders as its bytes do, so this is the database's `created_at, id`.
        rows.sort_unstable_by_key(|row| (row.created_at, row.id));
        rows
    }

    /// How many records there are, revoked ones included.
    pub fn len(&self) -> usize {
        self.map
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// True when no agent was ever enrolled.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn row(host: &str, created_at: i64) -> AgentRow {
        AgentRow {
            id: AgentId::new_random(),
            hostname: host.into(),
            labels: [("site".to_owned(), "a".to_owned())].into(),
            cert_serial: "01".into(),
            cert_expires_at: 4_000_000_000,
            version: "0.1.0".into(),
            read_only: false,
            last_seen: None,
            facts: None,
            created_at,
            revoked_at: None,
            hidden_paths: Vec::new(),
        }
    }

    #[test]
    fn the_list_is_ordered_and_leaves_out_revoked_agents_unless_asked() {
        let (a, b, c) = (row("a", 3), row("b", 1), row("c", 2));
        let registry = Registry::from_rows(vec![a.clone(), b.clone(), c.clone()]);
        let hosts = |rows: Vec<Arc<AgentRow>>| -> Vec<String> {
            rows.iter().map(|r| r.hostname.clone()).collect()
        };
        assert_eq!(hosts(registry.all(false)), ["b", "c", "a"]);
        assert!(registry.update(c.id, |row| row.revoked_at = Some(9)));
        assert_eq!(hosts(registry.all(false)), ["b", "a"]);
        assert_eq!(hosts(registry.all(true)), ["b", "c", "a"]);
        assert_eq!(registry.get(c.id).unwrap().revoked_at, Some(9));
        assert!(!registry.update(AgentId::new_random(), |_| {}));
        assert_eq!(registry.len(), 3);
    }

    #[test]
    fn an_update_does_not_change_a_record_already_handed_out() {
        let a = row("a", 1);
        let registry = Registry::from_rows(vec![a.clone()]);
        let before = registry.get(a.id).unwrap();
        registry.update(a.id, |row| row.hostname = "renamed".into());
        assert_eq!(before.hostname, "a");
        assert_eq!(registry.get(a.id).unwrap().hostname, "renamed");
    }
}
