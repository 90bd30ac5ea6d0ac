//! Running admitted commands: one process per command, supervised to its end.
//!
//! A [`Runner`] turns a target and a command string into the process to start (the host
//! runner: `bash -c CMD` with a fixed environment in a new process group; runners for LXC,
//! VM, Docker and pod targets slot in beside it). [`process::supervise`] is the same for
//! every target: stdin `/dev/null`, stdout and stderr forwarded as chunks of at most
//! [`CHUNK_BYTES`] the moment they are read, a hard timeout, cancellation, an output cap,
//! and SIGKILL of the whole process group followed by reaping (DESIGN.md invariant 6).

mod host;
pub mod process;

pub use host::{FIXED_ENV, HostRunner, find_shell};
pub use process::{Outcome, supervise};

use crate::guard::{Admitted, RejectCode};
use std::fmt;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use vigil_proto::agent::v1::{ExecEvent, Rejected, exec_event};
use vigil_shared::ids::ExecTarget;

/// Timeout when a request asks for 0 seconds.
pub const DEFAULT_TIMEOUT_S: u32 = 30;
/// Longest timeout a request can have.
pub const MAX_TIMEOUT_S: u32 = 300;
/// Output cap when a request asks for 0 bytes: 1 MiB.
pub const DEFAULT_OUTPUT_CAP: u64 = 1024 * 1024;
/// Largest stdout or stderr chunk sent in one event: 16 KiB.
pub const CHUNK_BYTES: usize = 16 * 1024;

/// The effective bounds of one command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub timeout: Duration,
    pub output_cap: u64,
}

impl Limits {
    /// Apply the contract's defaults and maxima to a request's values.
    pub fn for_request(timeout_s: u32, output_cap_bytes: u64, max_output_cap: u64) -> Self {
        let timeout_s = match timeout_s {
            0 => DEFAULT_TIMEOUT_S,
            s => s.min(MAX_TIMEOUT_S),
        };
        let output_cap = match output_cap_bytes {
            0 => DEFAULT_OUTPUT_CAP,
            n => n,
        };
        Limits {
            timeout: Duration::from_secs(timeout_s.into()),
            output_cap: output_cap.min(max_output_cap),
        }
    }
}

/// Builds the process that runs a command on one kind of target.
pub trait Runner: fmt::Debug + Send + Sync {
    /// The process for `command` on `target`; `Err` when this runner cannot reach it.
    fn command(&self, target: &ExecTarget, command: &str) -> Result<std::process::Command, String>;
}

/// Picks the runner for a target and supervises the command.
#[derive(Debug)]
pub struct Executor {
    host: HostRunner,
    max_output_cap: u64,
}

impl Executor {
    /// An executor for the host with the config's output-cap ceiling.
    pub fn new(host: HostRunner, max_output_cap: u64) -> Self {
        Executor {
            host,
            max_output_cap,
        }
    }

    fn runner(&self, target: &ExecTarget) -> Option<&dyn Runner> {
        match target {
            ExecTarget::Host => Some(&self.host),
            _ => None,
        }
    }

    /// Run an admitted command to its end, sending its events; the slot is freed after.
    pub async fn run(
        &self,
        admitted: Admitted,
        cancel: CancellationToken,
        events: &mpsc::Sender<ExecEvent>,
    ) -> Option<Outcome> {
        let id = admitted.request_id.clone();
        let command = self
            .runner(&admitted.target)
            .ok_or_else(|| format!("no runner for target {}", admitted.target))
            .and_then(|r| r.command(&admitted.target, &admitted.command));
        let command = match command {
            Ok(command) => command,
            Err(reason) => {
                let _ = events
                    .send(rejected(&id, RejectCode::ExecutionFailed, &reason))
                    .await;
                return None;
            }
        };
        let limits = Limits::for_request(
            admitted.timeout_s,
            admitted.output_cap_bytes,
            self.max_output_cap,
        );
        let outcome = supervise(&id, command, limits, cancel, events).await;
        drop(admitted.permit);
        outcome
    }
}

/// A `Rejected` event.
pub fn rejected(request_id: &str, code: RejectCode, reason: &str) -> ExecEvent {
    ExecEvent {
        request_id: request_id.to_owned(),
        kind: Some(exec_event::Kind::Rejected(Rejected {
            code: code.as_str().to_owned(),
            reason: reason.to_owned(),
        })),
    }
}

#[cfg(test)]
mod tests;
