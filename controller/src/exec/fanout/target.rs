//! Running one target of a fan-out: no stream → `offline` without sending anything;
//! otherwise the request goes out, its events are collected under the target's own
//! deadline with each output stream capped, and the end becomes a [`TargetResult`].
//! Dropping the future (the client left) drops the [`ExecStream`], which cancels the
//! command on the agent.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use vigil_proto::agent::v1::{ExecMode, ExecRequest, exec_event};

use super::outcome::{TargetError, TargetResult, TargetStatus};
use super::select::{Plan, Target};
use super::{FANOUT_GRACE, FANOUT_OUTPUT_CAP};
use crate::agents::Agents;
use crate::exec::ExecExit;
use crate::gateway::convert::target_to_proto;
use crate::gateway::{Dispatcher, ExecStream};
use crate::{Error, Result};

/// The signal the agent's timer kills with.
const SIGKILL: i32 = 9;

/// What every target of one fan-out shares.
#[derive(Debug)]
pub struct FanoutContext {
    /// Sends the requests.
    pub dispatcher: Dispatcher,
    /// The agents (one without a stream on any replica is offline).
    pub agents: Agents,
    /// The command, as classified.
    pub command: String,
    /// The command's timeout in seconds (already defaulted).
    pub timeout_s: u32,
    /// Who asked: its turn in each agent's queue.
    pub caller: String,
}

/// Runs `target` to its end.
pub async fn run(context: Arc<FanoutContext>, target: Target) -> TargetResult {
    let Target {
        index,
        name,
        host,
        plan,
    } = target;
    let route = match plan {
        Plan::Run(route) => route,
        Plan::Unresolved(error) => {
            return TargetResult::error(index, name, None, host, &error, false, 0);
        }
    };
    let agent = route.agent;
    let started = Instant::now();
    let elapsed = || duration_ms(started.elapsed());
    if !context.agents.is_connected(agent) {
        let error = Error::AgentOffline(agent);
        return TargetResult::error(index, name, Some(agent.to_string()), host, &error, false, 0);
    }
    let request = ExecRequest {
        request_id: String::new(),
        target: Some(target_to_proto(&route.target)),
        command: context.command.clone(),
        mode: ExecMode::Read as i32,
        grant: None,
        timeout_s: context.timeout_s,
        // Both streams together; each is cut at the cap here.
        output_cap_bytes: 2 * FANOUT_OUTPUT_CAP as u64,
    };
    let stream = match context
        .dispatcher
        .exec(agent, request, &context.caller)
        .await
    {
        Ok(stream) => stream,
        Err(error) => {
            let agent = Some(agent.to_string());
            return TargetResult::error(index, name, agent, host, &error, false, elapsed());
        }
    };
    let deadline = started + Duration::from_secs(u64::from(context.timeout_s)) + FANOUT_GRACE;
    let collected = match tokio::time::timeout_at(deadline, collect(stream)).await {
        Ok(collected) => collected,
        Err(_) => Err(Error::ExecTimeout(u64::from(context.timeout_s))),
    };
    let agent_id = Some(agent.to_string());
    match collected {
        Ok((exit, output)) => {
            let truncated = exit.truncated || output.stdout.cut || output.stderr.cut;
            let status = if exit.exit_code == Some(0) {
                TargetStatus::Ok
            } else {
                TargetStatus::Failed
            };
            TargetResult {
                target: name,
                agent: agent_id,
                host,
                status,
                exit_code: exit.exit_code,
                signal: exit.signal,
                stdout: output.stdout.text(),
                stderr: output.stderr.text(),
                truncated,
                duration_ms: exit.duration_ms,
                error: killed_at_timeout(&exit, context.timeout_s),
                index,
            }
        }
        Err(error) => {
            tracing::debug!(%agent, code = error.api_code(), "a fan-out target failed");
            TargetResult::error(index, name, agent_id, host, &error, true, elapsed())
        }
    }
}

/// `TIMEOUT` for a command the agent killed at its timer (it reports SIGKILL after at
/// least `timeout_s`); `None` for any other end.
fn killed_at_timeout(exit: &ExecExit, timeout_s: u32) -> Option<TargetError> {
    let killed = exit.exit_code.is_none() && exit.signal == Some(SIGKILL);
    (killed && exit.duration_ms >= u64::from(timeout_s) * 1000)
        .then(|| TargetError::from(&Error::ExecTimeout(u64::from(timeout_s))))
}

fn duration_ms(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
}

/// The output of a command.
#[derive(Debug, Default)]
struct Output {
    stdout: Capped,
    stderr: Capped,
}

/// One output stream, cut at [`FANOUT_OUTPUT_CAP`] bytes.
#[derive(Debug, Default)]
struct Capped {
    bytes: Vec<u8>,
    cut: bool,
}

impl Capped {
    fn push(&mut self, chunk: &[u8]) {
        let room = FANOUT_OUTPUT_CAP.saturating_sub(self.bytes.len());
        if chunk.len() > room {
            self.cut = true;
        }
        self.bytes
            .extend_from_slice(&chunk[..chunk.len().min(room)]);
    }

    /// The text (UTF-8, lossy); a character split by the cap is dropped.
    fn text(self) -> String {
        match String::from_utf8(self.bytes) {
            Ok(text) => text,
            Err(error) => {
                let mut text = String::from_utf8_lossy(error.as_bytes()).into_owned();
                if self.cut && text.ends_with(char::REPLACEMENT_CHARACTER) {
                    text.pop();
                }
                text
            }
        }
    }
}

/// Reads the command's events to its end.
async fn collect(mut stream: ExecStream) -> Result<(ExecExit, Output)> {
    let mut output = Output::default();
    loop {
        match stream.next().await {
            None => return Err(stream.lost_error()),
            Some(exec_event::Kind::Started(_)) => {}
            Some(exec_event::Kind::StdoutChunk(chunk)) => output.stdout.push(&chunk),
            Some(exec_event::Kind::StderrChunk(chunk)) => output.stderr.push(&chunk),
            Some(exec_event::Kind::Finished(finished)) => {
                return Ok((ExecExit::from_finished(&finished), output));
            }
            Some(exec_event::Kind::Rejected(rejected)) => {
                return Err(Error::AgentRejected {
                    code: rejected.code,
                    reason: rejected.reason,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_capped_per_stream_and_keeps_characters_whole() {
        let mut capped = Capped::default();
        capped.push(&vec![b'x'; FANOUT_OUTPUT_CAP - 1]);
        assert!(!capped.cut);
        capped.push("€uro".as_bytes());
        assert!(capped.cut);
        let text = capped.text();
        assert_eq!(text.len(), FANOUT_OUTPUT_CAP - 1, "the split € is dropped");
        assert!(text.bytes().all(|b| b == b'x'));
    }

    #[test]
    fn a_kill_at_the_timeout_is_a_timeout() {
        let exit = |exit_code, signal, duration_ms| ExecExit {
            exit_code,
            signal,
            truncated: false,
            duration_ms,
            queued_ms: 0,
        };
        let timeout = killed_at_timeout(&exit(None, Some(9), 5_002), 5).unwrap();
        assert_eq!(timeout.code, "TIMEOUT");
        assert!(timeout.message.contains("5 s"), "{}", timeout.message);
        assert!(
            killed_at_timeout(&exit(None, Some(9), 1_000), 5).is_none(),
            "killed early: by someone else"
        );
        assert!(killed_at_timeout(&exit(None, Some(15), 9_000), 5).is_none());
        assert!(killed_at_timeout(&exit(Some(1), None, 9_000), 5).is_none());
    }

    #[test]
    fn invalid_bytes_become_replacement_characters() {
        let mut capped = Capped::default();
        capped.push(b"ok \xff end");
        assert!(!capped.cut);
        assert_eq!(capped.text(), "ok \u{fffd} end");
    }
}
