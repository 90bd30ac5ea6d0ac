//! Canned answers to exec requests; nothing is ever run. A read answers at once with
//! `Started`, one stdout chunk (`vigil-fleet <hostname>`) and `Finished` with exit code 0.
//! `sleep N` answers the same after N seconds (killed with signal 9 at the request's
//! timeout or on a `Cancel`), which gives tests a slow agent. A write is rejected: the
//! simulator verifies no grants, so it accepts none.

use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use vigil_proto::agent::v1::{
    AgentMessage, ExecEvent, ExecMode, ExecRequest, Finished, Rejected, Started, agent_message,
    exec_event, finished,
};

/// The timeout of a request that names none (the agent's default).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest timeout a request may ask for.
const MAX_TIMEOUT: Duration = Duration::from_secs(300);

/// How a request will be answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// One `Rejected` event.
    Reject {
        /// The machine-readable code.
        code: &'static str,
        /// The sentence.
        reason: &'static str,
    },
    /// `Started`, then after `delay` the output and `Finished` (exit 0), or signal 9 when
    /// `killed` (the delay reached the timeout).
    Run {
        /// How long the command "runs".
        delay: Duration,
        /// Whether it ends by the timeout.
        killed: bool,
    },
}

/// The plan for `request`.
pub fn plan(request: &ExecRequest) -> Plan {
    if request.mode != ExecMode::Read as i32 {
        return Plan::Reject {
            code: "POLICY_BLOCKED",
            reason: "vigil-fleet simulates agents for reads only and accepts no write",
        };
    }
    let timeout = match request.timeout_s {
        0 => DEFAULT_TIMEOUT,
        s => Duration::from_secs(s.into()).min(MAX_TIMEOUT),
    };
    let mut words = request.command.split_whitespace();
    let asked = match (words.next(), words.next(), words.next()) {
        (Some("sleep"), Some(n), None) => n
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| Duration::from_secs_f64(s.min(MAX_TIMEOUT.as_secs_f64()))),
        _ => None,
    };
    let delay = asked.unwrap_or(Duration::ZERO);
    Plan::Run {
        delay: delay.min(timeout),
        killed: delay > timeout,
    }
}

/// The stdout of every successful command on `hostname`.
pub fn canned_stdout(hostname: &str) -> String {
    format!("vigil-fleet {hostname}\n")
}

fn message(request_id: &str, kind: exec_event::Kind) -> AgentMessage {
    AgentMessage {
        kind: Some(agent_message::Kind::ExecEvent(ExecEvent {
            request_id: request_id.to_owned(),
            kind: Some(kind),
        })),
    }
}

/// Sends the events of `plan` for `request_id` on `out`.
pub async fn play(plan: Plan, request_id: String, hostname: &str, out: mpsc::Sender<AgentMessage>) {
    let send = |kind| out.send(message(&request_id, kind));
    let (delay, killed) = match plan {
        Plan::Reject { code, reason } => {
            let rejected = Rejected {
                code: code.to_owned(),
                reason: reason.to_owned(),
            };
            let _ = send(exec_event::Kind::Rejected(rejected)).await;
            return;
        }
        Plan::Run { delay, killed } => (delay, killed),
    };
    let started = Instant::now();
    if send(exec_event::Kind::Started(Started {})).await.is_err() {
        return;
    }
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let status = if killed {
        finished::Status::Signal(9)
    } else {
        let stdout = canned_stdout(hostname).into_bytes();
        if send(exec_event::Kind::StdoutChunk(stdout)).await.is_err() {
            return;
        }
        finished::Status::ExitCode(0)
    };
    let _ = send(finished_event(status, started)).await;
}

/// The `Finished` event of a command cancelled now.
pub fn cancelled(request_id: &str, started: Instant) -> AgentMessage {
    message(
        request_id,
        finished_event(finished::Status::Signal(9), started),
    )
}

fn finished_event(status: finished::Status, started: Instant) -> exec_event::Kind {
    exec_event::Kind::Finished(Finished {
        status: Some(status),
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        truncated: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(command: &str, mode: ExecMode, timeout_s: u32) -> ExecRequest {
        ExecRequest {
            request_id: "r1".into(),
            command: command.into(),
            mode: mode as i32,
            timeout_s,
            ..ExecRequest::default()
        }
    }

    #[test]
    fn reads_run_at_once_sleeps_wait_and_writes_are_refused() {
        let run = |delay_ms, killed| Plan::Run {
            delay: Duration::from_millis(delay_ms),
            killed,
        };
        assert_eq!(plan(&request("uname -s", ExecMode::Read, 0)), run(0, false));
        assert_eq!(
            plan(&request("sleep 2.5", ExecMode::Read, 0)),
            run(2500, false)
        );
        assert_eq!(
            plan(&request("sleep 9", ExecMode::Read, 3)),
            run(3000, true)
        );
        assert_eq!(plan(&request("sleep x", ExecMode::Read, 0)), run(0, false));
        assert_eq!(plan(&request("sleep -1", ExecMode::Read, 0)), run(0, false));
        assert!(matches!(
            plan(&request("rm -rf /", ExecMode::Write, 0)),
            Plan::Reject {
                code: "POLICY_BLOCKED",
                ..
            }
        ));
        assert!(matches!(
            plan(&request("uname", ExecMode::Unspecified, 0)),
            Plan::Reject { .. }
        ));
    }

    #[tokio::test]
    async fn a_read_streams_started_stdout_and_exit_zero() {
        let (tx, mut rx) = mpsc::channel(8);
        play(
            plan(&request("uname -s", ExecMode::Read, 0)),
            "r1".into(),
            "fleet-00001",
            tx,
        )
        .await;
        let mut kinds = Vec::new();
        while let Some(AgentMessage {
            kind: Some(agent_message::Kind::ExecEvent(event)),
        }) = rx.recv().await
        {
            assert_eq!(event.request_id, "r1");
            kinds.push(event.kind.unwrap());
        }
        assert!(matches!(kinds[0], exec_event::Kind::Started(_)));
        assert_eq!(
            kinds[1],
            exec_event::Kind::StdoutChunk(b"vigil-fleet fleet-00001\n".to_vec())
        );
        assert!(matches!(
            &kinds[2],
            exec_event::Kind::Finished(Finished {
                status: Some(finished::Status::ExitCode(0)),
                ..
            })
        ));
        assert_eq!(kinds.len(), 3);
    }
}
