//! The audit chain's format: an [`Entry`] gets its place as an [`AuditRow`] whose hash is
//! SHA-256 over the canonical JSON array `[seq, prev_hash, actor, action, agent, target,
//! command, approval_id, outcome, exit_code, bytes, at]` (absent values `null`), chained by
//! `prev_hash`. Pure; [`crate::audit`] records entries and [`super::audit`] stores them.

use serde::Serialize;
use sha2::{Digest, Sha256};

/// `prev_hash` of the first row.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// What happened, before it gets its place in the chain.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct Entry {
    /// Who: an API token's name, `cli`, or `agent:<id>`.
    pub actor: String,
    /// What: `exec`, `raw_exec`, `approval.approve`, `approval.deny`, `join_token.create`,
    /// `api_token.create`, `api_token.revoke`, `agent.revoke`, `agent.enroll`,
    /// `agent.hidden_paths` (the paths in `command`, after `hide: `).
    pub action: String,
    /// The agent concerned.
    pub agent: Option<String>,
    /// The execution target.
    pub target: Option<String>,
    /// The command.
    pub command: Option<String>,
    /// The approval concerned.
    pub approval_id: Option<String>,
    /// `ok`, `refused`, `error: …`, or the token/approval id acted on.
    pub outcome: String,
    /// A command's exit code.
    pub exit_code: Option<i64>,
    /// Output bytes of a command.
    pub bytes: Option<i64>,
}

impl Entry {
    /// An entry with the three fields every row has.
    pub fn new(actor: &str, action: &str, outcome: &str) -> Entry {
        Entry {
            actor: actor.into(),
            action: action.into(),
            outcome: outcome.into(),
            ..Entry::default()
        }
    }

    /// Sets the agent.
    pub fn agent(mut self, agent: impl ToString) -> Entry {
        self.agent = Some(agent.to_string());
        self
    }

    /// Sets the command.
    pub fn command(mut self, command: &str) -> Entry {
        self.command = Some(command.into());
        self
    }

    /// Sets the approval id.
    pub fn approval(mut self, id: &str) -> Entry {
        self.approval_id = Some(id.into());
        self
    }
}

/// A row of the chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct AuditRow {
    /// Position, from 1, without gaps.
    pub seq: i64,
    /// Hash of row `seq - 1` ([`GENESIS`] for the first).
    pub prev_hash: String,
    /// Hash of this row's canonical encoding.
    pub hash: String,
    /// The entry.
    #[serde(flatten)]
    #[sqlx(flatten)]
    pub entry: Entry,
    /// When (Unix seconds).
    pub at: i64,
}

/// SHA-256 (hex) of the canonical encoding of a row's content.
pub fn row_hash(seq: i64, prev_hash: &str, entry: &Entry, at: i64) -> String {
    let canonical = serde_json::json!([
        seq,
        prev_hash,
        entry.actor,
        entry.action,
        entry.agent,
        entry.target,
        entry.command,
        entry.approval_id,
        entry.outcome,
        entry.exit_code,
        entry.bytes,
        at
    ]);
    hex::encode(Sha256::digest(canonical.to_string().as_bytes()))
}

/// The first problem of a chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// The row where the chain breaks (for a deleted row: the row after the gap).
    pub seq: i64,
    /// What is wrong.
    pub why: String,
}

/// Walks `rows` (in `seq` order) from `expected_seq`/`prev`; returns the first break.
pub fn check_rows(rows: &[AuditRow], expected_seq: &mut i64, prev: &mut String) -> Option<Broken> {
    for row in rows {
        if row.seq != *expected_seq {
            return Some(Broken {
                seq: row.seq,
                why: format!(
                    "seq jumps from {} to {}: row {} was deleted",
                    *expected_seq - 1,
                    row.seq,
                    *expected_seq
                ),
            });
        }
        if row.prev_hash != *prev {
            return Some(Broken {
                seq: row.seq,
                why: "prev_hash does not match the previous row's hash".into(),
            });
        }
        if row_hash(row.seq, &row.prev_hash, &row.entry, row.at) != row.hash {
            return Some(Broken {
                seq: row.seq,
                why: "its content does not match its hash (the row was edited)".into(),
            });
        }
        *expected_seq += 1;
        prev.clone_from(&row.hash);
    }
    None
}
