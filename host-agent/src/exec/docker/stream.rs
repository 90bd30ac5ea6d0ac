//! Forwarding one started exec through the [`pump`](crate::exec::pump): the attached
//! output and then the engine's exit code are fed to it as pieces, and its kill action
//! SIGKILLs the exec's process tree through its host pid; a command stopped by the agent
//! (timeout, cancellation, cap, closed link) ends with signal 9.

use super::kill::{belongs_to, kill_tree};
use crate::exec::pump::{Exit, Kill, Piece, Pump, Stop};
use crate::exec::{ExecError, Outcome, Run};
use bollard::Docker;
use bollard::container::LogOutput;
use bollard::errors::Error as DockerError;
use futures_util::future::BoxFuture;
use std::pin::Pin;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_stream::{Stream, StreamExt};
use tracing::{debug, warn};

/// An attached exec's multiplexed output.
pub type Output = Pin<Box<dyn Stream<Item = Result<LogOutput, DockerError>> + Send>>;

/// How long output is still read, and the engine asked for the end, after a kill.
const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// How often the engine is asked whether the command ended once its output closed.
const EXIT_POLL: Duration = Duration::from_millis(50);
/// Longest wait for one engine answer while running.
const ENGINE_WAIT: Duration = Duration::from_secs(5);
/// How long a kill waits for the engine to report the process's host pid.
const PID_WAIT: Duration = Duration::from_secs(2);

/// A started exec.
#[derive(Debug, Clone)]
pub struct Exec {
    pub docker: Docker,
    pub id: String,
    /// The container's full id and main host pid, to check a pid before signalling it.
    pub container_id: String,
    pub container_pid: Option<i32>,
}

/// Whether the command still runs and its exit code, as the engine says.
#[derive(Debug, Clone, Copy)]
struct State {
    running: bool,
    pid: Option<i32>,
    exit_code: Option<i32>,
}

impl Exec {
    async fn state(&self) -> Option<State> {
        match tokio::time::timeout(ENGINE_WAIT, self.docker.inspect_exec(&self.id)).await {
            Ok(Ok(i)) => Some(State {
                running: i.running == Some(true),
                pid: i.pid.and_then(|p| i32::try_from(p).ok()).filter(|p| *p > 0),
                exit_code: i.exit_code.and_then(|c| i32::try_from(c).ok()),
            }),
            Ok(Err(error)) => {
                debug!(exec = %self.id, %error, "inspecting the exec failed");
                None
            }
            Err(_) => {
                debug!(exec = %self.id, "the engine did not answer an exec inspection");
                None
            }
        }
    }

    /// SIGKILL the command's processes; whether any was signalled.
    pub async fn kill(&self) -> bool {
        let until = Instant::now() + PID_WAIT;
        let pid = loop {
            match self.state().await {
                Some(State { running: false, .. }) => return false,
                Some(State { pid: Some(pid), .. }) => break pid,
                _ if Instant::now() >= until => {
                    warn!(exec = %self.id, "no host pid for a command to stop; it may live on");
                    return false;
                }
                _ => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        };
        let (container_id, container_pid) = (self.container_id.clone(), self.container_pid);
        let killed = tokio::task::spawn_blocking(move || {
            if belongs_to(pid, &container_id, container_pid) {
                Some(kill_tree(pid))
            } else {
                None
            }
        })
        .await
        .ok()
        .flatten();
        match killed {
            Some(n) => n > 0,
            None => {
                warn!(exec = %self.id, pid, "the engine's pid is not this container's process here; not signalled");
                false
            }
        }
    }
}

/// Kills the command when dropped before it was known to have ended (the request's
/// task was aborted): a command never outlives its request.
#[derive(Debug)]
struct Armed(Option<Exec>);

impl Drop for Armed {
    fn drop(&mut self) {
        if let Some(exec) = self.0.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move { exec.kill().await });
        }
    }
}

/// The pump's kill action: the engine's pid of the command, its process tree killed.
#[derive(Debug)]
struct ExecKill<'a> {
    exec: &'a Exec,
    killed: bool,
}

impl Kill for ExecKill<'_> {
    fn kill(&mut self, why: Stop) -> BoxFuture<'_, Result<bool, ExecError>> {
        Box::pin(async move {
            debug!(exec = %self.exec.id, reason = ?why, "stopping a container command");
            self.killed = self.exec.kill().await;
            Ok(self.killed)
        })
    }
}

/// Forward a started exec's output and end to `run.events` through the pump.
pub async fn forward(run: Run<'_>, exec: Exec, output: Output) -> Outcome {
    let started = tokio::time::Instant::now();
    let mut armed = Armed(Some(exec.clone()));
    let (tx, pieces) = mpsc::channel(4);
    let feeder = tokio::spawn(feed(exec.clone(), output, tx));
    let mut pump = Pump::for_run(&run);
    pump.drain = DRAIN_GRACE;
    let mut kill = ExecKill {
        exec: &exec,
        killed: false,
    };
    let outcome = pump.run(started, pieces, &mut kill).await;
    feeder.abort();
    if kill.killed || outcome.exit_code.is_some() {
        armed.0 = None;
    }
    drop(armed);
    outcome
}

/// Feed the exec's output as pieces, then, once the output closed, its exit code as the
/// engine reports it.
async fn feed(exec: Exec, mut output: Output, tx: mpsc::Sender<Piece>) {
    while let Some(item) = output.next().await {
        let piece = match item {
            Ok(LogOutput::StdOut { message } | LogOutput::Console { message }) => {
                Piece::Stdout(message.to_vec())
            }
            Ok(LogOutput::StdErr { message }) => Piece::Stderr(message.to_vec()),
            Ok(LogOutput::StdIn { .. }) => continue,
            Err(error) => {
                debug!(exec = %exec.id, %error, "the exec's output stream broke");
                break;
            }
        };
        if tx.send(piece).await.is_err() {
            return;
        }
    }
    loop {
        if let Some(State {
            running: false,
            exit_code,
            ..
        }) = exec.state().await
        {
            let exit = Exit {
                code: exit_code,
                ..Exit::default()
            };
            let _ = tx.send(Piece::Exit(exit)).await;
            return;
        }
        tokio::time::sleep(EXIT_POLL).await;
    }
}
