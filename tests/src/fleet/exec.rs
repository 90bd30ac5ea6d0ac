//! Canned answers to exec requests; nothing is ever run. A read answers at once with
//! `Started`, one stdout chunk (`vigil-fleet <hostname>`) and `Finished` with exit code 0.
//! `sleep N` answers the same after N seconds (killed with signal 9 at the request's
//! timeout or on a `Cancel`), which gives tests a slow agent. The commands of the
//! controller's patrol checks get the answers of a healthy host (`patrol_answer`), so that
//! patrol on a simulated fleet finds nothing, as on an idle one. A write is rejected: the
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
        /// A patrol check's answer (stdout, exit code) instead of the canned line.
        patrol: Option<(&'static str, i32)>,
    },
}

/// A healthy host's answer to a command of the controller's patrol checks.
pub fn patrol_answer(command: &str) -> Option<(&'static str, i32)> {
    const DF: &str = "Filesystem     Type 1024-blocks    Used Available Capacity Mounted on\n\
                      /dev/sda1      ext4    41152736 9000000  30000000      24% /\n";
    const DF_I: &str = "Filesystem     Type  Inodes  IUsed   IFree IUse% Mounted on\n\
                        /dev/sda1      ext4 2621440 120000 2501440    5% /\n";
    const MEMINFO: &str = "MemTotal:        4000000 kB\nMemAvailable:    3000000 kB\n";
    let answer = match command {
        c if c.starts_with("df -P -T -i") => (DF_I, 0),
        c if c.starts_with("df -P -T") => (DF, 0),
        "cat /proc/meminfo" => (MEMINFO, 0),
        c if c.starts_with("systemctl list-units --state=failed") => ("", 0),
        c if c.starts_with("docker ps --all") => ("web\trunning\tUp 3 days (healthy)\n", 0),
        c if c.starts_with("zpool list") => ("rpool\tONLINE\n", 0),
        // No such file, no certificate served: the check skips it.
        c if c.starts_with("openssl ") => ("", 1),
        c if c.starts_with("grep -s -H '^onboot") => ("", 1),
        _ => return None,
    };
    Some(answer)
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
        patrol: patrol_answer(&request.command),
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
    let (delay, killed, patrol) = match plan {
        Plan::Reject { code, reason } => {
            let rejected = Rejected {
                code: code.to_owned(),
                reason: reason.to_owned(),
            };
            let _ = send(exec_event::Kind::Rejected(rejected)).await;
            return;
        }
        Plan::Run {
            delay,
            killed,
            patrol,
        } => (delay, killed, patrol),
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
        let (stdout, code) = match patrol {
            Some((text, code)) => (text.to_owned(), code),
            None => (canned_stdout(hostname), 0),
        };
        if !stdout.is_empty()
            && send(exec_event::Kind::StdoutChunk(stdout.into_bytes()))
                .await
                .is_err()
        {
            return;
        }
        finished::Status::ExitCode(code)
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
            patrol: None,
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

    #[test]
    fn patrol_commands_get_a_healthy_hosts_answers() {
        use vigil_controller::patrol::checks::{Check, Context, Output, Verdict, evaluate};
        for check in Check::ALL {
            let commands = check.commands(&["/etc/ssl/site.pem".to_owned()], &[443]);
            let outputs: Vec<Output> = commands
                .iter()
                .map(|command| {
                    let (stdout, code) = patrol_answer(command)
                        .unwrap_or_else(|| panic!("no canned answer to {command:?}"));
                    Output {
                        command: command.clone(),
                        stdout: stdout.into(),
                        exit_code: Some(code),
                    }
                })
                .collect();
            if outputs.is_empty() {
                continue;
            }
            let ctx = Context {
                children: &[],
                thresholds: check.default_thresholds(),
                now: 0,
            };
            match evaluate(check, &outputs, &ctx) {
                Verdict::Checked(problems) => {
                    assert!(problems.is_empty(), "{check:?}: {problems:?}")
                }
                Verdict::Skipped(why) => panic!("{check:?} skipped: {why}"),
            }
        }
    }
}
