//! Running admitted commands: one process per command, supervised to its end.
//!
//! A [`Runner`] turns a target and a command string into the process to start (the host
//! runner: `bash -c CMD` with a fixed environment in a new process group). Targets that are
//! not the host go to a [`Backend`] (Proxmox `pct`/`qm` in [`proxmox`], the Docker engine
//! in [`docker`], Kubernetes in [`pod`]), which the platform detection provides; the same
//! limits and events apply to every backend: each feeds its output into the one [`pump`],
//! which forwards it as chunks of at most [`CHUNK_BYTES`] the moment it is read and
//! enforces the hard timeout, cancellation, the output cap and the one kill (docs/design.md
//! invariant 6). [`process::supervise`] runs a process-based command: stdin `/dev/null`,
//! its own process group, SIGKILL of the whole group followed by reaping. A read on the
//! host runs confined by the kernel so that it cannot write ([`sandbox`]); an approved
//! write runs as it is.

#[cfg(feature = "docker")]
pub mod docker;
mod error;
mod host;
#[cfg(feature = "kubernetes")]
pub mod pod;
pub mod process;
pub mod proxmox;
pub mod pump;
pub mod sandbox;

pub use error::ExecError;
pub use host::{FIXED_ENV, HostRunner, find_shell};
pub use process::{Process, supervise};
pub use pump::{Outcome, send_finished};
pub use sandbox::{ReadSandbox, Scratch};

use crate::guard::{Admitted, Mode, Refusal, RejectCode};
use futures_util::future::BoxFuture;
use std::fmt;
use std::sync::Arc;
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
    fn command(
        &self,
        target: &ExecTarget,
        command: &str,
    ) -> Result<std::process::Command, ExecError>;
}

/// One command for a backend to run.
#[derive(Debug)]
pub struct Run<'a> {
    pub request_id: &'a str,
    pub target: &'a ExecTarget,
    /// The payload, exactly as the guard classified it; the backend wraps it.
    pub command: &'a str,
    pub limits: Limits,
    pub cancel: CancellationToken,
    pub events: &'a mpsc::Sender<ExecEvent>,
}

/// Runs commands in targets that are not the host (a guest, a container, a pod).
///
/// `Err` means nothing started and no event was sent (the executor sends the one
/// `Rejected`: `NOT_FOUND` for a target that does not exist, `EXECUTION_FAILED` for a
/// platform that did not answer). After `Ok`, the backend has sent `Started`, the output
/// and exactly one `Finished`, honouring the limits and the cancel token.
pub trait Backend: fmt::Debug + Send + Sync {
    fn run<'a>(&'a self, run: Run<'a>) -> BoxFuture<'a, Result<Outcome, Refusal>>;
}

/// The backends the platform detection found.
#[derive(Debug, Clone, Default)]
pub struct Backends {
    /// `lxc:V`, `vm:V` and `lxc:V/docker:C`.
    pub proxmox: Option<Arc<dyn Backend>>,
    /// `docker:C`.
    pub docker: Option<Arc<dyn Backend>>,
    /// `pod:NS/NAME/C`.
    pub kubernetes: Option<Arc<dyn Backend>>,
}

impl Backends {
    /// The backend for a non-host target, or why there is none.
    pub fn for_target(&self, target: &ExecTarget) -> Result<&Arc<dyn Backend>, Refusal> {
        let (backend, platform) = match target {
            ExecTarget::Host => (None, "the host"),
            ExecTarget::Lxc(_) | ExecTarget::Vm(_) | ExecTarget::LxcDocker { .. } => {
                (self.proxmox.as_ref(), "Proxmox VE (pvesh, pct, qm)")
            }
            ExecTarget::Docker(_) => (self.docker.as_ref(), "a Docker engine"),
            ExecTarget::Pod { .. } => (self.kubernetes.as_ref(), "Kubernetes access"),
        };
        backend.ok_or_else(|| Refusal {
            code: RejectCode::NotFound,
            reason: format!("target {target} needs {platform}, which this agent does not have"),
        })
    }
}

/// Picks the runner or backend for a target and runs the command.
#[derive(Debug)]
pub struct Executor {
    host: HostRunner,
    backends: Backends,
    max_output_cap: u64,
    sandbox: Arc<ReadSandbox>,
}

impl Executor {
    /// An executor for the host and the given backends, with the config's output-cap
    /// ceiling; host reads run under `sandbox`.
    pub fn new(
        host: HostRunner,
        backends: Backends,
        max_output_cap: u64,
        sandbox: Arc<ReadSandbox>,
    ) -> Self {
        Executor {
            host,
            backends,
            max_output_cap,
            sandbox,
        }
    }

    /// How host reads run.
    pub fn sandbox(&self) -> &ReadSandbox {
        &self.sandbox
    }

    /// The process for a command on the host: a write as it is, a read confined with a
    /// fresh scratch directory (removed when the returned [`Scratch`] drops).
    fn host_command(
        &self,
        mode: Mode,
        command: &str,
    ) -> Result<(Process, Option<Scratch>), Refusal> {
        if mode == Mode::Write
            && let Some(root) = self.sandbox.host_root()
        {
            return Err(Refusal {
                code: RejectCode::ActionNotAllowed,
                reason: format!(
                    "this agent runs in a container and reaches the host only through {} \
                     (--host-root), for reads; install the agent on the host itself for \
                     approved writes there",
                    root.dir().display()
                ),
            });
        }
        if mode == Mode::Write {
            return self
                .host
                .command(&ExecTarget::Host, command)
                .map(|c| (c.into(), None))
                .map_err(|e| Refusal {
                    code: RejectCode::ExecutionFailed,
                    reason: e.to_string(),
                });
        }
        if let Some(refusal) = self.sandbox.refusal() {
            return Err(Refusal {
                code: RejectCode::SandboxUnavailable,
                reason: refusal.to_string(),
            });
        }
        let scratch = Scratch::create(&std::env::temp_dir()).map_err(|e| Refusal {
            code: RejectCode::ExecutionFailed,
            reason: format!("could not create the read's scratch directory: {e}"),
        })?;
        let process = self
            .host
            .read_command(&self.sandbox, command, scratch.path());
        Ok((process, Some(scratch)))
    }

    /// Run an admitted command to its end, sending its events; the slot is freed after.
    pub async fn run(
        &self,
        admitted: Admitted,
        cancel: CancellationToken,
        events: &mpsc::Sender<ExecEvent>,
    ) -> Option<Outcome> {
        let id = admitted.request_id.clone();
        let limits = Limits::for_request(
            admitted.timeout_s,
            admitted.output_cap_bytes,
            self.max_output_cap,
        );
        let outcome = if admitted.target == ExecTarget::Host {
            match self.host_command(admitted.mode, &admitted.command) {
                Ok((command, scratch)) => {
                    let outcome = supervise(&id, command, limits, cancel, events).await;
                    drop(scratch);
                    outcome
                }
                Err(refusal) => {
                    let _ = events
                        .send(rejected(&id, refusal.code, &refusal.reason))
                        .await;
                    None
                }
            }
        } else {
            let result = match self.backends.for_target(&admitted.target) {
                Ok(backend) => {
                    backend
                        .run(Run {
                            request_id: &id,
                            target: &admitted.target,
                            command: &admitted.command,
                            limits,
                            cancel,
                            events,
                        })
                        .await
                }
                Err(refusal) => Err(refusal),
            };
            match result {
                Ok(outcome) => Some(outcome),
                Err(refusal) => {
                    let _ = events
                        .send(rejected(&id, refusal.code, &refusal.reason))
                        .await;
                    None
                }
            }
        };
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
