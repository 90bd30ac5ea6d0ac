//! The interface every discovery source implements.

use std::fmt;
use std::sync::Arc;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use vigil_shared::resource::Resource;

pub use futures_util::future::BoxFuture;

/// Who is scanning: the names sources build ids and paths from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceCtx {
    /// The agent's id (`host:<agent-id>`, and the agent of every path it reports).
    pub agent_id: String,
    /// The host name of the machine the agent runs on.
    pub hostname: String,
}

/// What one scan of one source found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scan {
    /// Everything the source sees now; paths carry `ctx.agent_id` as their agent.
    pub resources: Vec<Resource>,
    /// Kinds whose list was cut, as `kind: kept of total` (for example `pod: 2000 of 7312`).
    pub capped: Vec<String>,
}

/// Why a source could not scan (its previous resources are kept, and the error is
/// reported in the inventory's notes).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScanError {
    /// The platform could not be asked: its daemon, API or tools did not answer.
    #[error("{0}")]
    Unreachable(String),
    /// It answered, with something the source cannot read.
    #[error("{0}")]
    Unusable(String),
}

impl From<crate::exec::ExecError> for ScanError {
    fn from(error: crate::exec::ExecError) -> Self {
        use crate::exec::ExecError;
        match error {
            ExecError::Unusable(text) | ExecError::Unsupported(text) => ScanError::Unusable(text),
            other => ScanError::Unreachable(other.to_string()),
        }
    }
}

/// A discovery source.
pub trait Source: fmt::Debug + Send + Sync {
    /// Short name: `host`, `proxmox`, `docker`, `kubernetes`.
    fn name(&self) -> &'static str;

    /// Look at the platform now. `Err` says why the source could not (its previous
    /// resources are kept and the error is reported).
    fn scan<'a>(&'a self, ctx: &'a SourceCtx) -> BoxFuture<'a, Result<Scan, ScanError>>;

    /// Start following the platform's change events, calling `changed.notify_one()` for
    /// each; `None` for sources that only rescan. The task is aborted when the agent stops.
    fn watch(&self, changed: Arc<Notify>) -> Option<JoinHandle<()>> {
        let _ = changed;
        None
    }
}
