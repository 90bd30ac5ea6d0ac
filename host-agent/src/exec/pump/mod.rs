//! The one output pump every backend runs its command through: docs/design.md invariant 6
//! (hard timeout, cancellation, output cap, kill) is enforced here and nowhere else.
//!
//! A backend starts its command, feeds what it produces into a channel of [`Piece`]s
//! (stdout and stderr bytes, lines of the agent's own, and the command's [`Exit`]) and
//! hands the pump a [`Kill`] action. The pump sends `Started`, forwards the output as
//! chunks of at most [`CHUNK_BYTES`] under the output cap, and on the deadline, the
//! cancel token, the cap or a closed link calls the kill action exactly once, keeps
//! reading for a short drain, and sends the one `Finished` ([`send_finished`]). A command
//! that ends by itself is never killed by the pump. A killed command is reported with
//! signal 9, one that ended with its own [`Exit`]. The loop lives in `run.rs`.

mod run;
#[cfg(test)]
mod tests;

use super::{CHUNK_BYTES, ExecError, Limits};
use futures_util::future::BoxFuture;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::debug;
use vigil_proto::agent::v1::{ExecEvent, Finished, exec_event, finished};

/// How long the final event may wait for room on the link.
const FINISH_SEND_WAIT: Duration = Duration::from_secs(5);
/// How long output is still read after the command ended or was killed, by default.
pub const DRAIN_GRACE: Duration = Duration::from_secs(1);
/// The signal reported for a command the agent killed.
pub const KILLED: i32 = 9;

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
    /// The kill action failed: the command may still be running.
    pub kill_error: Option<String>,
}

/// One thing a running command produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Stdout(Vec<u8>),
    Stderr(Vec<u8>),
    /// A line of the agent's own, sent on stderr as `vigil-agent: …` and not counted
    /// against the output cap.
    Note(String),
    /// The command ended by itself (or after the kill).
    Exit(Exit),
}

/// How a command ended, as its platform tells.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exit {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    /// The platform itself gave up waiting for the command (`qm guest exec --timeout`).
    pub timed_out: bool,
    /// The platform itself cut the output.
    pub truncated: bool,
}

impl Exit {
    /// An exit with `code`.
    pub fn code(code: i32) -> Self {
        Exit {
            code: Some(code),
            ..Exit::default()
        }
    }
}

/// Why the pump stops a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Cancel,
    Timeout,
    Cap,
    /// The link to the controller closed.
    Link,
}

/// The backend's way to stop its command: SIGKILL a process group, kill a container's
/// process tree, drop a websocket. The pump calls it at most once per command.
pub trait Kill: Send {
    /// Stop the command now. `Ok(true)`: something was killed (the command is reported
    /// as killed by signal 9); `Ok(false)`: nothing was left to kill; `Err`: the command
    /// could not be stopped and may live on.
    fn kill(&mut self, why: Stop) -> BoxFuture<'_, Result<bool, ExecError>>;
}

/// One command's pump: where the events go and the bounds it runs under.
#[derive(Debug, Clone)]
pub struct Pump<'a> {
    pub request_id: &'a str,
    pub events: &'a mpsc::Sender<ExecEvent>,
    pub limits: Limits,
    pub cancel: CancellationToken,
    /// How long output is still read after the command ended or was killed.
    pub drain: Duration,
    /// The exit code reported when only the output cap stopped the command (a log read
    /// that has all it needs), instead of signal 9.
    pub cut_exit: Option<i32>,
}

impl<'a> Pump<'a> {
    /// A pump with the default drain and no `cut_exit`.
    pub fn new(
        request_id: &'a str,
        events: &'a mpsc::Sender<ExecEvent>,
        limits: Limits,
        cancel: CancellationToken,
    ) -> Self {
        Pump {
            request_id,
            events,
            limits,
            cancel,
            drain: DRAIN_GRACE,
            cut_exit: None,
        }
    }

    /// A pump for a backend's [`Run`](super::Run).
    pub fn for_run(run: &super::Run<'a>) -> Self {
        Pump::new(run.request_id, run.events, run.limits, run.cancel.clone())
    }
}

/// Forward everything read from `reader` as pieces of at most [`CHUNK_BYTES`], made by
/// `wrap`; stops at the end, on a read error or when the pump is gone.
pub async fn read_into(
    mut reader: impl AsyncRead + Unpin,
    wrap: fn(Vec<u8>) -> Piece,
    tx: mpsc::Sender<Piece>,
) {
    let mut buf = vec![0u8; CHUNK_BYTES];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if tx.send(wrap(buf[..n].to_vec())).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Send the one `Finished` event of `out` (exit code, else signal), waiting a little for
/// room on the link.
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
