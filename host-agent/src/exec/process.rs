//! Supervising one command's process group from spawn to reaped: the process-based
//! backend of the [`pump`](super::pump) (host commands, `pct exec`, the Proxmox tools).

use super::pump::{Exit, Kill, Outcome, Piece, Pump, Stop, read_into};
use super::sandbox::{self, Confinement};
use super::{ExecError, Limits, rejected};
use crate::guard::RejectCode;
use futures_util::future::BoxFuture;
use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::process::Child;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use vigil_proto::agent::v1::ExecEvent;

/// A command's process group; SIGKILLed when dropped before it was reaped, so an
/// abandoned command (its task aborted) never lives on.
#[derive(Debug)]
struct Group {
    pgid: Pid,
    /// The leader was reaped: its id may be reused and is never signalled again.
    reaped: AtomicBool,
}

impl Group {
    /// SIGKILL the group; `Ok(false)` when nothing was left in it.
    fn kill(&self) -> Result<bool, Errno> {
        if self.reaped.load(Ordering::Acquire) {
            return Ok(false);
        }
        match killpg(self.pgid, Signal::SIGKILL) {
            Ok(()) => Ok(true),
            Err(Errno::ESRCH) => Ok(false),
            Err(e) => Err(e),
        }
    }
}

/// The pump's kill action, and the guard that kills an abandoned group.
#[derive(Debug)]
struct GroupKill(Arc<Group>);

impl Kill for GroupKill {
    fn kill(&mut self, _why: Stop) -> BoxFuture<'_, Result<bool, ExecError>> {
        let killed = self
            .0
            .kill()
            .map_err(|e| ExecError::NotStopped(format!("SIGKILL of the process group: {e}")));
        Box::pin(async move { killed })
    }
}

impl Drop for GroupKill {
    fn drop(&mut self) {
        let _ = self.0.kill();
    }
}

/// A process to start: the command, and for a host read how to confine it.
#[derive(Debug)]
pub struct Process {
    pub command: std::process::Command,
    /// Spawn from a confined thread ([`sandbox::thread`]); `None` spawns as it is.
    pub confine: Option<Confinement>,
}

impl From<std::process::Command> for Process {
    fn from(command: std::process::Command) -> Self {
        Process {
            command,
            confine: None,
        }
    }
}

/// Start `process` and forward its events until it has ended and been reaped.
///
/// On timeout, cancellation, the output cap, or a closed event channel the pump has the
/// whole process group SIGKILLed. When the command's own process ends, whatever it left
/// running in its group is killed too: a command never leaves processes behind. A
/// process that cannot start is announced with one `Rejected` event and `None`.
pub async fn supervise(
    request_id: &str,
    process: impl Into<Process>,
    limits: Limits,
    cancel: CancellationToken,
    events: &mpsc::Sender<ExecEvent>,
) -> Option<Outcome> {
    let Process { command, confine } = process.into();
    let mut command = tokio::process::Command::from(command);
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let started = tokio::time::Instant::now();
    let spawned = match confine {
        Some(how) => sandbox::thread::spawn(command, how).await,
        None => command.spawn(),
    };
    let spawned = spawned.and_then(|child| match child.id() {
        Some(pid) => Ok((child, pid)),
        None => Err(std::io::Error::other(
            "the process ended before it was seen",
        )),
    });
    let (mut child, pid) = match spawned {
        Ok(spawned) => spawned,
        Err(e) => {
            let code = match sandbox::SandboxError::of(&e) {
                Some(sandbox::SandboxError::Unavailable(_)) => RejectCode::SandboxUnavailable,
                _ => RejectCode::ExecutionFailed,
            };
            let reason = format!("could not start the command: {e}");
            let _ = events.send(rejected(request_id, code, &reason)).await;
            return None;
        }
    };
    let group = Arc::new(Group {
        pgid: Pid::from_raw(pid.cast_signed()),
        reaped: AtomicBool::new(false),
    });
    let (tx, pieces) = mpsc::channel(4);
    let mut tasks = Vec::with_capacity(3);
    if let Some(out) = child.stdout.take() {
        tasks.push(tokio::spawn(read_into(out, Piece::Stdout, tx.clone())));
    }
    if let Some(err) = child.stderr.take() {
        tasks.push(tokio::spawn(read_into(err, Piece::Stderr, tx.clone())));
    }
    tasks.push(tokio::spawn(reap(child, Arc::clone(&group), tx)));
    let mut kill = GroupKill(group);
    let outcome = Pump::new(request_id, events, limits, cancel)
        .run(started, pieces, &mut kill)
        .await;
    for task in tasks {
        task.abort();
    }
    Some(outcome)
}

/// Wait for the leader, kill what it left in its group, and report its exit.
async fn reap(mut child: Child, group: Arc<Group>, tx: mpsc::Sender<Piece>) {
    let status = child
        .wait()
        .await
        .unwrap_or_else(|_| ExitStatus::from_raw(Signal::SIGKILL as i32));
    // Whatever the command left behind in its group goes with it.
    let _ = group.kill();
    group.reaped.store(true, Ordering::Release);
    let exit = Exit {
        code: status.code(),
        signal: status.signal(),
        ..Exit::default()
    };
    let _ = tx.send(Piece::Exit(exit)).await;
}
