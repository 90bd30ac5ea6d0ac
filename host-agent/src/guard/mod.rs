//! The agent's own gate: every [`ExecRequest`] passes [`Guard::admit`] before it runs,
//! whatever the controller already decided (docs/design.md, invariant 7).
//!
//! The checks run in the order of the contract's table; the first that fails produces one
//! [`Refusal`]. Reads are classified again with `vigil_shared::policy::classify`; writes
//! need a grant that verifies against the grant key pinned at enrollment, for this agent,
//! this target and these exact command bytes, with a nonce not seen before. Read-only mode
//! is fixed when the guard is built and nothing on the link can change it.

mod nonce;
pub mod request;

pub use nonce::{MAX_NONCES, NonceCache};

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use vigil_proto::agent::v1::{ExecMode, ExecRequest};
use vigil_shared::grant::{ALLOWED_SKEW_S, GrantVerifyingKey};
use vigil_shared::ids::{AgentId, ExecTarget};
use vigil_shared::policy::{Classification, classify};

/// Most commands running at once; one more is refused with `AGENT_BUSY`.
pub const MAX_CONCURRENT: usize = 8;

/// Machine-readable refusal codes, as sent in `Rejected.code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RejectCode {
    InvalidInput,
    NotFound,
    PolicyBlocked,
    UnboundedCommand,
    ActionNotAllowed,
    ApprovalRequired,
    AgentBusy,
    /// A host read this agent cannot confine as it must, and may not run bare.
    SandboxUnavailable,
    ExecutionFailed,
}

impl RejectCode {
    /// The wire name (`POLICY_BLOCKED`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            RejectCode::InvalidInput => "INVALID_INPUT",
            RejectCode::NotFound => "NOT_FOUND",
            RejectCode::PolicyBlocked => "POLICY_BLOCKED",
            RejectCode::UnboundedCommand => "UNBOUNDED_COMMAND",
            RejectCode::ActionNotAllowed => "ACTION_NOT_ALLOWED",
            RejectCode::ApprovalRequired => "APPROVAL_REQUIRED",
            RejectCode::AgentBusy => "AGENT_BUSY",
            RejectCode::SandboxUnavailable => "SANDBOX_UNAVAILABLE",
            RejectCode::ExecutionFailed => "EXECUTION_FAILED",
        }
    }
}

impl fmt::Display for RejectCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a request does not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: RejectCode,
    pub reason: String,
}

impl Refusal {
    fn new(code: RejectCode, reason: impl Into<String>) -> Self {
        Refusal {
            code,
            reason: reason.into(),
        }
    }
}

/// READ or WRITE, once the mode is known to be one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Read,
    Write,
}

/// A request that passed every check, holding one of the [`MAX_CONCURRENT`] slots.
#[derive(Debug)]
pub struct Admitted {
    pub request_id: String,
    pub mode: Mode,
    pub target: ExecTarget,
    pub command: String,
    pub timeout_s: u32,
    pub output_cap_bytes: u64,
    /// Released when the command has ended.
    pub permit: OwnedSemaphorePermit,
}

/// The gate, built once per process.
#[derive(Debug)]
pub struct Guard {
    me: AgentId,
    grant_key: GrantVerifyingKey,
    read_only: bool,
    nonces: Mutex<NonceCache>,
    slots: Arc<Semaphore>,
}

impl Guard {
    /// A guard for agent `me` with the pinned grant key; `read_only` never changes after.
    pub fn new(me: AgentId, grant_key: GrantVerifyingKey, read_only: bool) -> Self {
        Guard {
            me,
            grant_key,
            read_only,
            nonces: Mutex::new(NonceCache::default()),
            slots: Arc::new(Semaphore::new(MAX_CONCURRENT)),
        }
    }

    /// True when every write is refused.
    pub fn read_only(&self) -> bool {
        self.read_only
    }

    /// Run every check of the contract's table, in order, at Unix time `now`.
    pub fn admit(&self, req: &ExecRequest, now: i64) -> Result<Admitted, Refusal> {
        use RejectCode::*;
        let mode = match req.mode() {
            ExecMode::Read => Mode::Read,
            ExecMode::Write => Mode::Write,
            ExecMode::Unspecified => {
                return Err(Refusal::new(InvalidInput, "the request's mode is not set"));
            }
        };
        if req.request_id.is_empty() {
            return Err(Refusal::new(InvalidInput, "the request has no request id"));
        }
        if req.command.trim().is_empty() {
            return Err(Refusal::new(InvalidInput, "the command is empty"));
        }
        let target = request::target_from_proto(req.target.as_ref())
            .map_err(|e| Refusal::new(InvalidInput, e))?;
        let grant_nonce = match mode {
            Mode::Read => {
                check_read(&classify(&req.command))?;
                None
            }
            Mode::Write => Some(self.check_write(req, &target, now)?),
        };
        // Nonce check, slot and nonce use happen under one lock so that two copies of a
        // grant arriving together cannot both run.
        let mut nonces = self.nonces.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((nonce, _)) = &grant_nonce {
            check_nonce(&mut nonces, nonce, now)?;
        }
        let permit = Arc::clone(&self.slots).try_acquire_owned().map_err(|_| {
            Refusal::new(
                AgentBusy,
                format!("{MAX_CONCURRENT} commands are already running on this agent"),
            )
        })?;
        // The grant is used only now that it runs: a busy agent does not burn it.
        if let Some((nonce, keep_until)) = grant_nonce {
            nonces.insert(nonce, keep_until);
        }
        drop(nonces);
        Ok(Admitted {
            request_id: req.request_id.clone(),
            mode,
            target,
            command: req.command.clone(),
            timeout_s: req.timeout_s,
            output_cap_bytes: req.output_cap_bytes,
            permit,
        })
    }

    /// The write checks; returns the nonce to remember and until when.
    fn check_write(
        &self,
        req: &ExecRequest,
        target: &ExecTarget,
        now: i64,
    ) -> Result<(Vec<u8>, i64), Refusal> {
        use RejectCode::*;
        if self.read_only {
            return Err(Refusal::new(
                ActionNotAllowed,
                "this agent runs read-only and refuses every write",
            ));
        }
        let grant = req.grant.as_ref().ok_or_else(|| {
            Refusal::new(ApprovalRequired, "a write needs a grant from an approval")
        })?;
        let blocked = |why: String| Refusal::new(PolicyBlocked, format!("grant refused: {why}"));
        let (body, signature) = request::grant_from_proto(grant).map_err(blocked)?;
        body.verify(
            signature,
            &self.grant_key,
            self.me,
            target,
            req.command.as_bytes(),
            now,
        )
        .map_err(|e| blocked(e.to_string()))?;
        Ok((body.nonce, body.expires_at + ALLOWED_SKEW_S))
    }
}

/// A grant's nonce must not have been used.
fn check_nonce(nonces: &mut NonceCache, nonce: &[u8], now: i64) -> Result<(), Refusal> {
    nonces.prune(now);
    let refuse =
        |why: &str| Refusal::new(RejectCode::PolicyBlocked, format!("grant refused: {why}"));
    if nonces.contains(nonce) {
        return Err(refuse("its nonce was already used (replay)"));
    }
    if nonces.is_full() {
        return Err(refuse("too many unexpired grants are outstanding"));
    }
    Ok(())
}

/// A READ must be proved read-only and bounded by the classifier.
fn check_read(c: &Classification) -> Result<(), Refusal> {
    if !c.intent.is_read_only() {
        let reasons = if c.reasons.is_empty() {
            "no reason given".to_owned()
        } else {
            c.reasons.join("; ")
        };
        return Err(Refusal::new(
            RejectCode::PolicyBlocked,
            format!("the command is not provably read-only: {reasons}"),
        ));
    }
    if let Some(category) = c.category() {
        let reason = match c.rewrite() {
            Some(rewrite) => format!(
                "the command does not end by itself ({}); a bounded form is: {rewrite}",
                category.as_str()
            ),
            None => format!("the command does not end by itself ({})", category.as_str()),
        };
        return Err(Refusal::new(RejectCode::UnboundedCommand, reason));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
