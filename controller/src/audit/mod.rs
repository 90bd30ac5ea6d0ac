//! The audit log: an append-only hash chain. Each row stores the previous row's hash and
//! `hash = SHA-256(canonical(row))`, where the canonical encoding is the JSON array
//! `[seq, prev_hash, actor, action, agent, target, command, approval_id, outcome,
//! exit_code, bytes, at]` (absent values are `null`). Editing a row breaks its hash,
//! deleting one leaves a gap in `seq`, and [`verify`] names the first broken row.
//!
//! [`Entry`] is what callers describe; [`record`] appends it and logs (never fails the
//! caller's request) when the database refuses. The exec service's trail
//! ([`crate::exec::ExecTrail`]) records an execution when it ends.

use crate::store::Store;
pub use crate::store::chain::{AuditRow, Broken, Entry, GENESIS, check_rows, row_hash};

/// Appends `entry`; a failure is logged, not returned (the action already happened).
pub async fn record(store: &Store, entry: Entry) {
    let action = entry.action.clone();
    if let Err(error) = store.append_audit(entry, crate::clock::unix_now()).await {
        tracing::error!(%action, error = %error, "cannot write the audit log");
    }
}
