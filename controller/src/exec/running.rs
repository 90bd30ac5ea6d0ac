//! [`Running`]: one command on its way, with its deadline and audit trail. The HTTP API
//! streams it as server-sent events; tools and the write path [`Running::collect`] it,
//! watching the output as it arrives.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;
use vigil_proto::agent::v1::{Finished, exec_event, finished};

use super::trail::ExecTrail;
use super::utf8::Utf8Carry;
use crate::error::ApiCode;
use crate::gateway::ExecStream;
use crate::{Error, Result};

/// Extra time past the command's own timeout before the controller gives up on it.
pub const DEADLINE_GRACE: Duration = Duration::from_secs(15);
/// Most output kept for a collected answer, per stream.
pub const MAX_COLLECTED_OUTPUT: usize = 32 * 1024 * 1024;
/// The agent's default timeout when the request says 0.
pub const DEFAULT_TIMEOUT_S: u32 = 30;

/// How a command ended.
/// The timeout a command runs with: 0 means [`DEFAULT_TIMEOUT_S`], and at most
/// [`super::MAX_TIMEOUT_S`].
pub fn effective_timeout(timeout_s: u32) -> u32 {
    match timeout_s {
        0 => DEFAULT_TIMEOUT_S,
        n => n.min(super::MAX_TIMEOUT_S),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecExit {
    /// The exit code of a command that exited.
    pub exit_code: Option<i32>,
    /// The signal that ended the command.
    pub signal: Option<i32>,
    /// True when output was cut at the output cap.
    pub truncated: bool,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// How long the command waited in the agent's queue before it was sent (ms).
    #[serde(default)]
    pub queued_ms: u64,
}

impl ExecExit {
    /// The exit of a `Finished` event.
    pub fn from_finished(finished: &Finished) -> Self {
        let (exit_code, signal) = match finished.status {
            Some(finished::Status::ExitCode(code)) => (Some(code), None),
            Some(finished::Status::Signal(signal)) => (None, Some(signal)),
            None => (None, None),
        };
        ExecExit {
            exit_code,
            signal,
            truncated: finished.truncated,
            duration_ms: finished.duration_ms,
            queued_ms: 0,
        }
    }
}

/// A finished command: its exit plus the whole output (UTF-8, lossy). The JSON is flat:
/// `{exit_code, signal, stdout, stderr, truncated, duration_ms, queued_ms}`; the exit's
/// fields read through (`outcome.exit_code`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecOutcome {
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// How it ended.
    #[serde(flatten)]
    pub exit: ExecExit,
}

impl std::ops::Deref for ExecOutcome {
    type Target = ExecExit;

    fn deref(&self) -> &ExecExit {
        &self.exit
    }
}

impl ExecOutcome {
    /// True when the command exited with 0.
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0)
    }
}

/// Which output stream a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputStream {
    Stdout,
    Stderr,
}

impl OutputStream {
    /// `stdout` or `stderr`.
    pub fn as_str(self) -> &'static str {
        match self {
            OutputStream::Stdout => "stdout",
            OutputStream::Stderr => "stderr",
        }
    }
}

/// A command the agent accepted (its first event was not a refusal).
#[derive(Debug)]
pub struct Running {
    stream: ExecStream,
    trail: ExecTrail,
    deadline: Instant,
    timeout_s: u32,
    first: Option<exec_event::Kind>,
}

impl Running {
    /// Waits for the first event: a refusal by the agent is an error.
    pub(super) async fn start(
        stream: ExecStream,
        trail: ExecTrail,
        timeout_s: u32,
    ) -> Result<Self> {
        let timeout_s = effective_timeout(timeout_s);
        let deadline = Instant::now() + Duration::from_secs(u64::from(timeout_s)) + DEADLINE_GRACE;
        let mut running = Running {
            stream,
            trail,
            deadline,
            timeout_s,
            first: None,
        };
        match running.next_event().await? {
            exec_event::Kind::Rejected(rejected) => {
                tracing::info!(code = %rejected.code, reason = %rejected.reason, "the agent refused a command");
                Err(Error::AgentRejected {
                    code: rejected.code,
                    reason: rejected.reason,
                })
            }
            first => {
                running.first = Some(first);
                Ok(running)
            }
        }
    }

    /// How long the command waited in the agent's queue (ms).
    pub fn queued_ms(&self) -> u64 {
        self.stream.queued_ms()
    }

    /// The request id of the command.
    pub fn request_id(&self) -> &str {
        self.stream.request_id()
    }

    /// True once the command's last event arrived.
    pub fn ended(&self) -> bool {
        self.first.is_none() && self.stream.ended()
    }

    /// The next event, or an error when the deadline passes or the agent goes away.
    pub async fn next_event(&mut self) -> Result<exec_event::Kind> {
        if let Some(first) = self.first.take() {
            return Ok(first);
        }
        let next = match tokio::time::timeout_at(self.deadline, self.stream.next()).await {
            Err(_) => Err(Error::ExecTimeout(u64::from(self.timeout_s))),
            Ok(None) if self.stream.overrun() => Err(Error::coded(
                ApiCode::SlowReader,
                format!(
                    "the output was not read fast enough: the command was cut off after {} buffered events",
                    crate::agents::sessions::EVENT_BUFFER
                ),
            )),
            Ok(None) => Err(self.stream.lost_error()),
            Ok(Some(kind)) => Ok(kind),
        };
        match &next {
            Ok(kind) => self.trail.observe(kind),
            Err(error) => self.trail.failed(error.api_code()),
        }
        next
    }

    /// Runs the command to its end, handing each piece of decoded output to `watch`, and
    /// answers the whole output (each stream capped at [`MAX_COLLECTED_OUTPUT`]).
    pub async fn collect(
        mut self,
        mut watch: impl FnMut(OutputStream, &str),
    ) -> Result<ExecOutcome> {
        let (mut stdout, mut stderr, mut cut) = (String::new(), String::new(), false);
        let (mut out_carry, mut err_carry) = (Utf8Carry::default(), Utf8Carry::default());
        loop {
            let (which, text) = match self.next_event().await? {
                exec_event::Kind::Started(_) => continue,
                exec_event::Kind::StdoutChunk(chunk) => {
                    (OutputStream::Stdout, out_carry.push(&chunk))
                }
                exec_event::Kind::StderrChunk(chunk) => {
                    (OutputStream::Stderr, err_carry.push(&chunk))
                }
                exec_event::Kind::Finished(finished) => {
                    for (which, text) in [
                        (OutputStream::Stdout, out_carry.finish()),
                        (OutputStream::Stderr, err_carry.finish()),
                    ] {
                        if !text.is_empty() {
                            watch(which, &text);
                            let buffer = if which == OutputStream::Stdout {
                                &mut stdout
                            } else {
                                &mut stderr
                            };
                            append_capped(buffer, &text, &mut cut);
                        }
                    }
                    let exit = ExecExit::from_finished(&finished);
                    return Ok(ExecOutcome {
                        stdout,
                        stderr,
                        exit: ExecExit {
                            truncated: exit.truncated || cut,
                            queued_ms: self.stream.queued_ms(),
                            ..exit
                        },
                    });
                }
                exec_event::Kind::Rejected(rejected) => {
                    return Err(Error::AgentRejected {
                        code: rejected.code,
                        reason: rejected.reason,
                    });
                }
            };
            if text.is_empty() {
                continue;
            }
            watch(which, &text);
            let buffer = if which == OutputStream::Stdout {
                &mut stdout
            } else {
                &mut stderr
            };
            append_capped(buffer, &text, &mut cut);
        }
    }
}

fn append_capped(buffer: &mut String, text: &str, truncated: &mut bool) {
    let room = MAX_COLLECTED_OUTPUT.saturating_sub(buffer.len());
    if text.len() <= room {
        buffer.push_str(text);
        return;
    }
    *truncated = true;
    let mut end = room;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    buffer.push_str(&text[..end]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exits_report_code_or_signal() {
        let exit = ExecExit::from_finished(&Finished {
            status: Some(finished::Status::Signal(9)),
            duration_ms: 5,
            truncated: true,
        });
        assert_eq!(
            (exit.exit_code, exit.signal, exit.truncated),
            (None, Some(9), true)
        );
    }

    #[test]
    fn capping_keeps_characters_whole() {
        let mut buffer = "x".repeat(MAX_COLLECTED_OUTPUT - 1);
        let mut cut = false;
        append_capped(&mut buffer, "€", &mut cut);
        assert!(cut);
        assert_eq!(buffer.len(), MAX_COLLECTED_OUTPUT - 1);
    }
}
