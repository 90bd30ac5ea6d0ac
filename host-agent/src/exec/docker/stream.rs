//! Forwarding one started exec: `Started`, the output as chunks under the cap, then
//! exactly one `Finished`, with the same conventions as the host runner
//! ([`crate::exec::process::supervise`]): a command stopped by the agent (timeout,
//! cancellation, cap, closed link) is SIGKILLed and ends with signal 9.

use super::kill::{belongs_to, kill_tree};
use crate::exec::{CHUNK_BYTES, Outcome, Run, send_finished};
use bollard::Docker;
use bollard::container::LogOutput;
use bollard::errors::Error as DockerError;
use std::pin::Pin;
use std::time::{Duration, Instant};
use tokio::time::sleep_until;
use tokio_stream::{Stream, StreamExt};
use tracing::{debug, warn};
use vigil_proto::agent::v1::{ExecEvent, Started, exec_event};

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

#[derive(Debug, Clone, Copy)]
enum Stop {
    Cancel,
    Timeout,
    Cap,
    Link,
}

/// Forward a started exec's output and end to `run.events`.
pub async fn forward(run: Run<'_>, exec: Exec, mut output: Output) -> Outcome {
    let started = Instant::now();
    let mut armed = Armed(Some(exec.clone()));
    let event = |kind| ExecEvent {
        request_id: run.request_id.to_owned(),
        kind: Some(kind),
    };
    let mut out = Outcome::default();
    let deadline = tokio::time::Instant::from_std(started + run.limits.timeout);
    let mut link_open = run
        .events
        .send(event(exec_event::Kind::Started(Started {})))
        .await
        .is_ok();
    let mut stop: Option<Stop> = (!link_open).then_some(Stop::Link);
    let mut stopped = false;
    let mut killed = false;
    let mut give_up: Option<tokio::time::Instant> = None;
    let mut stream_open = true;
    let mut exit: Option<Option<i32>> = None;
    let mut poll_at = tokio::time::Instant::now();

    while exit.is_none() {
        if let Some(why) = stop.take() {
            if !stopped {
                stopped = true;
                debug!(request = %run.request_id, exec = %exec.id, reason = ?why, "stopping a container command");
                killed = exec.kill().await;
                give_up = Some(tokio::time::Instant::now() + DRAIN_GRACE);
            }
            continue;
        }
        tokio::select! {
            _ = run.cancel.cancelled(), if !stopped => {
                out.cancelled = true;
                stop = Some(Stop::Cancel);
            }
            _ = sleep_until(deadline), if !stopped => {
                out.timed_out = true;
                stop = Some(Stop::Timeout);
            }
            _ = sleep_until(give_up.unwrap_or(deadline)), if give_up.is_some() => break,
            item = output.next(), if stream_open => match item {
                None => stream_open = false,
                Some(Err(error)) => {
                    debug!(exec = %exec.id, %error, "the exec's output stream broke");
                    stream_open = false;
                }
                Some(Ok(_)) if out.truncated || !link_open => {}
                Some(Ok(log)) => {
                    let (stderr, bytes) = match log {
                        LogOutput::StdOut { message } | LogOutput::Console { message } => (false, message),
                        LogOutput::StdErr { message } => (true, message),
                        LogOutput::StdIn { .. } => continue,
                    };
                    for piece in bytes.chunks(CHUNK_BYTES) {
                        let room = run.limits.output_cap.saturating_sub(out.output_bytes);
                        let mut piece = piece.to_vec();
                        if piece.len() as u64 > room {
                            piece.truncate(usize::try_from(room).unwrap_or(usize::MAX));
                            out.truncated = true;
                            stop = Some(Stop::Cap);
                        }
                        if !piece.is_empty() {
                            out.output_bytes += piece.len() as u64;
                            let kind = if stderr {
                                exec_event::Kind::StderrChunk(piece)
                            } else {
                                exec_event::Kind::StdoutChunk(piece)
                            };
                            // Biased: output that is ready to go is sent even after a kill.
                            let sent = tokio::select! {
                                biased;
                                r = run.events.send(event(kind)) => r.is_ok(),
                                _ = run.cancel.cancelled() => false,
                                _ = sleep_until(deadline) => false,
                            };
                            if !sent {
                                link_open = !run.events.is_closed();
                                out.cancelled |= run.cancel.is_cancelled();
                                out.timed_out |= !out.cancelled && link_open;
                                stop = Some(Stop::Link);
                            }
                        }
                        if out.truncated || !link_open || stop.is_some() {
                            break;
                        }
                    }
                }
            },
            _ = sleep_until(poll_at), if !stream_open => {
                match exec.state().await {
                    Some(State { running: false, exit_code, .. }) => exit = Some(exit_code),
                    _ => poll_at = tokio::time::Instant::now() + EXIT_POLL,
                }
            }
        }
    }
    if exit.is_some() || killed {
        armed.0 = None;
    }
    drop(armed);
    out.duration = started.elapsed();
    if killed {
        out.signal = Some(9);
    } else {
        out.exit_code = exit.flatten();
    }
    if link_open {
        send_finished(run.request_id, run.events, &out).await;
    }
    out
}
