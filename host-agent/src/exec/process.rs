//! Supervising one command's process group from spawn to reaped.

use super::{CHUNK_BYTES, Limits, rejected};
use crate::guard::RejectCode;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::sleep_until;
use tokio_util::sync::CancellationToken;
use tracing::debug;
use vigil_proto::agent::v1::{ExecEvent, Finished, Started, exec_event, finished};

/// How long output is still read after the command's process has ended.
const DRAIN_GRACE: Duration = Duration::from_secs(1);
/// How long the final event may wait for room on the link.
const FINISH_SEND_WAIT: Duration = Duration::from_secs(5);

/// How a command ended, for the log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub duration: Duration,
    pub truncated: bool,
    pub output_bytes: u64,
    pub timed_out: bool,
    pub cancelled: bool,
}

#[derive(Debug, Clone, Copy)]
enum Pipe {
    Stdout,
    Stderr,
}

/// A command's process group; SIGKILLed when dropped before it was reaped, so an
/// abandoned command (its task aborted) never lives on.
#[derive(Debug)]
struct Group {
    pgid: Pid,
    reaped: bool,
}

impl Group {
    fn kill(&self) {
        // ESRCH (nothing left in the group) is the normal case after a clean exit.
        let _ = killpg(self.pgid, Signal::SIGKILL);
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if !self.reaped {
            self.kill();
        }
    }
}

/// Start `command` and forward its events until it has ended and been reaped.
///
/// On timeout, cancellation, the output cap, or a closed event channel the whole process
/// group gets SIGKILL. When the command's own process ends, whatever it left running in its
/// group is killed too: a command never leaves processes behind.
pub async fn supervise(
    request_id: &str,
    command: std::process::Command,
    limits: Limits,
    cancel: CancellationToken,
    events: &mpsc::Sender<ExecEvent>,
) -> Option<Outcome> {
    let mut command = tokio::process::Command::from(command);
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let started = Instant::now();
    let spawned = command.spawn().and_then(|child| match child.id() {
        Some(pid) => Ok((child, pid)),
        None => Err(std::io::Error::other(
            "the process ended before it was seen",
        )),
    });
    let (mut child, pid) = match spawned {
        Ok(spawned) => spawned,
        Err(e) => {
            let reason = format!("could not start the command: {e}");
            let _ = events
                .send(rejected(request_id, RejectCode::ExecutionFailed, &reason))
                .await;
            return None;
        }
    };
    let mut group = Group {
        pgid: Pid::from_raw(pid.cast_signed()),
        reaped: false,
    };
    let event = |kind| ExecEvent {
        request_id: request_id.to_owned(),
        kind: Some(kind),
    };
    let mut link_open = events
        .send(event(exec_event::Kind::Started(Started {})))
        .await
        .is_ok();

    let (tx, mut chunks) = mpsc::channel::<(Pipe, Vec<u8>)>(4);
    let mut readers: Vec<JoinHandle<()>> = Vec::with_capacity(2);
    if let Some(out) = child.stdout.take() {
        readers.push(tokio::spawn(read_pipe(out, Pipe::Stdout, tx.clone())));
    }
    if let Some(err) = child.stderr.take() {
        readers.push(tokio::spawn(read_pipe(err, Pipe::Stderr, tx)));
    }

    let deadline = tokio::time::Instant::from_std(started + limits.timeout);
    let mut out = Outcome::default();
    let mut killed = !link_open;
    if killed {
        group.kill();
    }
    let mut status: Option<ExitStatus> = None;
    let mut drain_until: Option<tokio::time::Instant> = None;
    let mut pipes_open = true;
    while status.is_none() || pipes_open {
        let grace = drain_until.unwrap_or(deadline);
        tokio::select! {
            _ = cancel.cancelled(), if !killed && status.is_none() => {
                out.cancelled = true;
                killed = true;
                group.kill();
            }
            _ = sleep_until(deadline), if !killed && status.is_none() => {
                out.timed_out = true;
                killed = true;
                group.kill();
            }
            _ = sleep_until(grace), if drain_until.is_some() => break,
            exited = child.wait(), if status.is_none() => {
                // Whatever the command left behind in its group goes with it.
                group.kill();
                status = Some(exited.unwrap_or_else(|_| ExitStatus::from_raw(Signal::SIGKILL as i32)));
                drain_until = Some(tokio::time::Instant::now() + DRAIN_GRACE);
            }
            chunk = chunks.recv(), if pipes_open => match chunk {
                None => pipes_open = false,
                Some(_) if out.truncated || !link_open => {}
                Some((pipe, mut bytes)) => {
                    let room = limits.output_cap.saturating_sub(out.output_bytes);
                    if bytes.len() as u64 > room {
                        bytes.truncate(usize::try_from(room).unwrap_or(usize::MAX));
                        out.truncated = true;
                        killed = true;
                        group.kill();
                    }
                    if !bytes.is_empty() {
                        out.output_bytes += bytes.len() as u64;
                        let kind = match pipe {
                            Pipe::Stdout => exec_event::Kind::StdoutChunk(bytes),
                            Pipe::Stderr => exec_event::Kind::StderrChunk(bytes),
                        };
                        // Biased: output that is ready to go is sent even after a kill.
                        let sent = tokio::select! {
                            biased;
                            r = events.send(event(kind)) => r.is_ok(),
                            _ = cancel.cancelled() => false,
                            _ = sleep_until(deadline) => false,
                        };
                        if !sent {
                            link_open = !events.is_closed();
                            out.cancelled |= cancel.is_cancelled();
                            out.timed_out |= !out.cancelled && link_open;
                            killed = true;
                            group.kill();
                        }
                    }
                }
            },
        }
    }
    // The group was killed when its leader was reaped; never signal the id again.
    group.reaped = true;
    for reader in readers {
        reader.abort();
    }
    out.duration = started.elapsed();
    if let Some(status) = status {
        out.exit_code = status.code();
        out.signal = status.signal();
    }
    if link_open {
        send_finished(request_id, events, &out).await;
    }
    Some(out)
}

/// Send the one `Finished` event of `out` (exit code, else signal), waiting a little for
/// room on the link; every backend ends a started command with this.
pub async fn send_finished(request_id: &str, events: &mpsc::Sender<ExecEvent>, out: &Outcome) {
    let status = match (out.exit_code, out.signal) {
        (Some(code), _) => Some(finished::Status::ExitCode(code)),
        (None, Some(signal)) => Some(finished::Status::Signal(signal)),
        (None, None) => None,
    };
    let done = ExecEvent {
        request_id: request_id.to_owned(),
        kind: Some(exec_event::Kind::Finished(Finished {
            status,
            duration_ms: u64::try_from(out.duration.as_millis()).unwrap_or(u64::MAX),
            truncated: out.truncated,
        })),
    };
    if tokio::time::timeout(FINISH_SEND_WAIT, events.send(done))
        .await
        .is_err()
    {
        debug!(request = %request_id, "no room on the link for the finished event");
    }
}

/// Forward everything read from one pipe, in chunks of at most [`CHUNK_BYTES`].
async fn read_pipe(
    mut pipe: impl AsyncRead + Unpin,
    which: Pipe,
    tx: mpsc::Sender<(Pipe, Vec<u8>)>,
) {
    let mut buf = vec![0u8; CHUNK_BYTES];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if tx.send((which, buf[..n].to_vec())).await.is_err() {
                    return;
                }
            }
        }
    }
}
