//! The audit log: an append-only hash chain. Each row stores the previous row's hash and
//! `hash = SHA-256(canonical(row))`, where the canonical encoding is the JSON array
//! `[seq, prev_hash, actor, action, agent, target, command, approval_id, outcome,
//! exit_code, bytes, at]` (absent values are `null`). Editing a row breaks its hash,
//! deleting one leaves a gap in `seq`, and [`verify`] names the first broken row.
//!
//! [`Entry`] is what callers describe; [`record`] appends it and logs (never fails the
//! caller's request) when the database refuses. The exec service's trail
//! ([`crate::exec::ExecTrail`]) records an execution when it ends. [`AuditLog`] is the
//! service the HTTP API reads and appends through.

use crate::Result;
use crate::store::Store;
pub use crate::store::audit::Since;
pub use crate::store::chain::{AuditRow, Broken, Entry, GENESIS, check_rows, row_hash};

/// The audit log as a service: append, list and verify.
#[derive(Debug, Clone)]
pub struct AuditLog {
    store: Store,
}

impl AuditLog {
    /// The log kept in `store`.
    pub fn new(store: Store) -> Self {
        AuditLog { store }
    }

    /// Appends `entry` (see [`record`]).
    pub async fn record(&self, entry: Entry) {
        record(&self.store, entry).await;
    }

    /// Up to `limit` rows after `since`, oldest first.
    pub async fn list(&self, since: Since, limit: i64) -> Result<Vec<AuditRow>> {
        self.store.list_audit(since, limit).await
    }

    /// Walks the whole chain: `Ok(rows)` when intact, or the first broken row.
    pub async fn verify(&self) -> Result<std::result::Result<i64, Broken>> {
        self.store.verify_audit().await
    }
}

/// Appends `entry`; a failure is logged, not returned (the action already happened).
pub async fn record(store: &Store, entry: Entry) {
    let action = entry.action.clone();
    if let Err(error) = store.append_audit(entry, crate::clock::unix_now()).await {
        tracing::error!(%action, error = %error, "cannot write the audit log");
    }
}
