//! `vm:V`: `qm guest exec V --timeout T -- sh -c CMD`. qm waits up to T seconds for the
//! QEMU guest agent and prints one JSON object at the end (`exited`, `exitcode` or
//! `signal`, `out-data`, `err-data`, `out-truncated`, …). That object becomes pieces for
//! the [`pump`](crate::exec::pump), which sends `Started` when qm starts, the output as
//! chunks under the cap, then `Finished`; its deadline is the guest timeout plus
//! [`QM_GRACE`], and its kill action stops qm (the command in the guest may run on).

use super::ProxmoxTools;
use super::tools::capture;
use crate::exec::ExecError;
use crate::exec::pump::{Exit, Kill, Piece, Pump, Stop};
use crate::exec::{Limits, Outcome, Run};
use futures_util::future::BoxFuture;
use serde_json::{Map, Value};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How much longer than the guest timeout qm itself may take before it is killed.
const QM_GRACE: Duration = Duration::from_secs(5);
/// The most qm may print (its JSON carries up to 16 MiB of guest output, escaped).
const QM_STDOUT_CAP: u64 = 48 * 1024 * 1024;
/// How long qm's answer is still awaited after the pump stopped it.
const STOP_DRAIN: Duration = Duration::from_secs(2);

/// The JSON object `qm guest exec` prints.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GuestExecResult {
    /// The command ended (else it was still running when qm's timeout passed).
    pub exited: bool,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub out_data: String,
    pub err_data: String,
    /// The guest agent cut the output.
    pub truncated: bool,
}

/// The result object in qm's stdout, or `None` when there is none.
pub fn parse_guest_exec(stdout: &[u8]) -> Option<GuestExecResult> {
    let text = String::from_utf8_lossy(stdout);
    let text = text.trim();
    let value = serde_json::from_str::<Value>(text).ok().or_else(|| {
        let start = text.find('{')?;
        let end = text.rfind('}')?;
        serde_json::from_str(text.get(start..=end)?).ok()
    })?;
    let Value::Object(map) = value else {
        return None;
    };
    if !map.contains_key("exited") {
        return None;
    }
    let int = |key: &str| {
        let n = map.get(key)?.as_i64()?;
        i32::try_from(n.clamp(i64::from(i32::MIN), i64::from(i32::MAX))).ok()
    };
    let data = |key: &str| {
        map.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    Some(GuestExecResult {
        exited: flag(&map, "exited"),
        exit_code: int("exitcode"),
        signal: int("signal"),
        out_data: data("out-data"),
        err_data: data("err-data"),
        truncated: flag(&map, "out-truncated") || flag(&map, "err-truncated"),
    })
}

fn flag(map: &Map<String, Value>, key: &str) -> bool {
    match map.get(key) {
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|n| n != 0.0),
        Some(Value::String(s)) => matches!(s.as_str(), "1" | "true"),
        _ => false,
    }
}

/// What the feeder and the kill action share: why the pump stopped qm, and whether qm
/// had already returned.
#[derive(Debug, Default)]
struct Shared {
    why: Option<Stop>,
    done: bool,
}

/// The pump's kill action: stop qm (the command in the guest may run on).
#[derive(Debug)]
struct StopQm {
    stop: CancellationToken,
    shared: Arc<Mutex<Shared>>,
}

impl Kill for StopQm {
    fn kill(&mut self, why: Stop) -> BoxFuture<'_, Result<bool, ExecError>> {
        let running = match self.shared.lock() {
            Ok(mut shared) => {
                shared.why = Some(why);
                !shared.done
            }
            Err(_) => true,
        };
        self.stop.cancel();
        Box::pin(async move { Ok(running) })
    }
}

/// Run the command in VM `vmid` and send its events; the VM was checked beforehand.
pub(super) async fn run(qm: &Path, vmid: u32, run: Run<'_>) -> Outcome {
    let started = tokio::time::Instant::now();
    let timeout_s = run.limits.timeout.as_secs().max(1);
    let (vmid_text, timeout_text) = (vmid.to_string(), timeout_s.to_string());
    let argv = [
        "guest",
        "exec",
        &vmid_text,
        "--timeout",
        &timeout_text,
        "--",
        "sh",
        "-c",
        run.command,
    ];
    let command = ProxmoxTools::command(qm, &argv);
    let mut pump = Pump::for_run(&run);
    pump.limits.timeout = Duration::from_secs(timeout_s) + QM_GRACE;
    pump.drain = STOP_DRAIN;
    let mut kill = StopQm {
        stop: CancellationToken::new(),
        shared: Arc::default(),
    };
    let (tx, pieces) = mpsc::channel(4);
    let qm_run = Qm {
        vmid,
        timeout_s,
        wait: pump.limits.timeout,
        stop: kill.stop.clone(),
        shared: Arc::clone(&kill.shared),
    };
    // Nothing is started for a link that is already gone.
    let feeder = (!run.events.is_closed()).then(|| tokio::spawn(qm_run.feed(command, tx)));
    let outcome = pump.run(started, pieces, &mut kill).await;
    if let Some(feeder) = feeder {
        feeder.abort();
    }
    outcome
}

/// One `qm guest exec` call and what it printed, as pieces.
#[derive(Debug)]
struct Qm {
    vmid: u32,
    timeout_s: u64,
    /// The pump's deadline for qm.
    wait: Duration,
    stop: CancellationToken,
    shared: Arc<Mutex<Shared>>,
}

impl Qm {
    async fn feed(self, command: Command, tx: mpsc::Sender<Piece>) {
        let vmid = self.vmid;
        let limits = Limits {
            timeout: self.wait + QM_GRACE,
            output_cap: QM_STDOUT_CAP,
        };
        let got = capture(command, limits, self.stop.clone()).await;
        let why = match self.shared.lock() {
            Ok(mut shared) => {
                shared.done = true;
                shared.why
            }
            Err(_) => None,
        };
        let killed = Exit {
            signal: Some(9),
            ..Exit::default()
        };
        let timeout_note = format!(
            "qm guest exec did not return within {}s; the command may still be running in VM {vmid}",
            self.wait.as_secs()
        );
        let pieces = match got {
            Err(reason) => vec![
                Piece::Note(format!("qm guest exec could not run: {reason}")),
                Piece::Exit(Exit::default()),
            ],
            Ok(got) if got.timed_out || (got.cancelled && why == Some(Stop::Timeout)) => {
                let exit = Exit {
                    timed_out: true,
                    ..killed
                };
                vec![Piece::Note(timeout_note), Piece::Exit(exit)]
            }
            Ok(got) if got.cancelled => vec![
                Piece::Note(format!(
                    "cancelled; qm was stopped, the command may still be running in VM {vmid}"
                )),
                Piece::Exit(killed),
            ],
            Ok(got) => match parse_guest_exec(&got.stdout) {
                Some(result) => self.result(result),
                None => {
                    let code = got.exit_code.filter(|c| *c != 0).unwrap_or(1);
                    let qm_code = got
                        .exit_code
                        .map_or_else(|| "none".to_owned(), |c| c.to_string());
                    vec![
                        Piece::Stderr(got.stderr),
                        Piece::Note(format!(
                            "qm guest exec printed no result (qm exit code {qm_code}), see its message above"
                        )),
                        Piece::Exit(Exit::code(code)),
                    ]
                }
            },
        };
        for piece in pieces {
            if tx.send(piece).await.is_err() {
                return;
            }
        }
    }

    /// The pieces of the guest agent's result.
    fn result(&self, result: GuestExecResult) -> Vec<Piece> {
        let mut pieces = vec![
            Piece::Stdout(result.out_data.into_bytes()),
            Piece::Stderr(result.err_data.into_bytes()),
        ];
        let exit = if result.exited {
            Exit {
                code: result.exit_code,
                signal: result
                    .exit_code
                    .is_none()
                    .then_some(result.signal)
                    .flatten(),
                truncated: result.truncated,
                timed_out: false,
            }
        } else {
            pieces.push(Piece::Note(format!(
                "the command was still running in VM {} after {}s and may still be running there",
                self.vmid, self.timeout_s
            )));
            Exit {
                signal: Some(9),
                timed_out: true,
                truncated: result.truncated,
                code: None,
            }
        };
        pieces.push(Piece::Exit(exit));
        pieces
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qm_results_parse_in_every_shape() {
        let pretty = b"{\n   \"err-data\" : \"warn\\n\",\n   \"exitcode\" : 3,\n   \"exited\" : 1,\n   \"out-data\" : \"a \\\"b\\\"\\n\"\n}\n";
        assert_eq!(
            parse_guest_exec(pretty),
            Some(GuestExecResult {
                exited: true,
                exit_code: Some(3),
                signal: None,
                out_data: "a \"b\"\n".into(),
                err_data: "warn\n".into(),
                truncated: false,
            })
        );
        let running = parse_guest_exec(b"noise before\n{\"exited\":0,\"pid\":77}\n").unwrap();
        assert!(!running.exited);
        assert_eq!(running.exit_code, None);
        let cut = parse_guest_exec(br#"{"exited":true,"signal":9,"out-truncated":1}"#).unwrap();
        assert_eq!((cut.signal, cut.truncated), (Some(9), true));
        let huge = parse_guest_exec(br#"{"exited":1,"exitcode":99999999999}"#).unwrap();
        assert_eq!(huge.exit_code, Some(i32::MAX));
        for bad in [
            &b""[..],
            b"No QEMU guest agent configured\n",
            b"[1,2]",
            b"{\"pid\":3}",
            b"{\"exited\":",
            b"{ } {",
        ] {
            assert_eq!(
                parse_guest_exec(bad),
                None,
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
