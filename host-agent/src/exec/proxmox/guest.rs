//! `vm:V`: `qm guest exec V --timeout T -- sh -c CMD`. qm waits up to T seconds for the
//! QEMU guest agent and prints one JSON object at the end (`exited`, `exitcode` or
//! `signal`, `out-data`, `err-data`, `out-truncated`, …). That object becomes the events:
//! `Started` when qm starts, then the output as chunks, then `Finished`.

use super::ProxmoxTools;
use super::tools::capture;
use crate::exec::{CHUNK_BYTES, Limits, Outcome, Run};
use serde_json::{Map, Value};
use std::path::Path;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use vigil_proto::agent::v1::exec_event::Kind;
use vigil_proto::agent::v1::{ExecEvent, Finished, Started, finished};

/// How much longer than the guest timeout qm itself may take before it is killed.
const QM_GRACE: Duration = Duration::from_secs(5);
/// The most qm may print (its JSON carries up to 16 MiB of guest output, escaped).
const QM_STDOUT_CAP: u64 = 48 * 1024 * 1024;
/// How long the final event may wait for room on the link.
const FINISH_SEND_WAIT: Duration = Duration::from_secs(5);

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

/// Sends one command's events, keeping to its output cap.
#[derive(Debug)]
struct Emitter<'a> {
    request_id: &'a str,
    events: &'a mpsc::Sender<ExecEvent>,
    cap: u64,
    sent: u64,
    truncated: bool,
    open: bool,
}

impl Emitter<'_> {
    async fn send(&mut self, kind: Kind) {
        if self.open {
            let event = ExecEvent {
                request_id: self.request_id.to_owned(),
                kind: Some(kind),
            };
            self.open = self.events.send(event).await.is_ok();
        }
    }

    /// Output as chunks of at most [`CHUNK_BYTES`], cut at the cap.
    async fn output(&mut self, stderr: bool, bytes: &[u8]) {
        let room = usize::try_from(self.cap.saturating_sub(self.sent)).unwrap_or(usize::MAX);
        let bytes = match bytes.get(..room) {
            Some(kept) if kept.len() < bytes.len() => {
                self.truncated = true;
                kept
            }
            _ => bytes,
        };
        for chunk in bytes.chunks(CHUNK_BYTES) {
            self.sent += chunk.len() as u64;
            let chunk = chunk.to_vec();
            self.send(if stderr {
                Kind::StderrChunk(chunk)
            } else {
                Kind::StdoutChunk(chunk)
            })
            .await;
        }
    }

    /// A line of the agent's own on stderr (not counted against the cap).
    async fn note(&mut self, text: &str) {
        self.send(Kind::StderrChunk(
            format!("vigil-agent: {text}\n").into_bytes(),
        ))
        .await;
    }
}

/// Run the command in VM `vmid` and send its events; the VM was checked beforehand.
pub(super) async fn run(qm: &Path, vmid: u32, run: Run<'_>) -> Outcome {
    let started = Instant::now();
    let mut emit = Emitter {
        request_id: run.request_id,
        events: run.events,
        cap: run.limits.output_cap,
        sent: 0,
        truncated: false,
        open: true,
    };
    let mut outcome = Outcome::default();
    emit.send(Kind::Started(Started {})).await;
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
    let limits = Limits {
        timeout: Duration::from_secs(timeout_s) + QM_GRACE,
        output_cap: QM_STDOUT_CAP,
    };
    let got = if emit.open {
        capture(ProxmoxTools::command(qm, &argv), limits, run.cancel.clone()).await
    } else {
        Err("the link closed before the command started".to_owned())
    };
    let killed = finished::Status::Signal(9);
    let status = match got {
        Err(reason) => {
            emit.note(&format!("qm guest exec could not run: {reason}"))
                .await;
            None
        }
        Ok(got) if got.cancelled => {
            outcome.cancelled = true;
            emit.note(&format!(
                "cancelled; qm was stopped, the command may still be running in VM {vmid}"
            ))
            .await;
            Some(killed)
        }
        Ok(got) if got.timed_out => {
            outcome.timed_out = true;
            emit.note(&format!(
                "qm guest exec did not return within {}s; the command may still be running in VM {vmid}",
                limits.timeout.as_secs()
            ))
            .await;
            Some(killed)
        }
        Ok(got) => match parse_guest_exec(&got.stdout) {
            Some(result) => {
                emit.output(false, result.out_data.as_bytes()).await;
                emit.output(true, result.err_data.as_bytes()).await;
                emit.truncated |= result.truncated;
                if !result.exited {
                    outcome.timed_out = true;
                    emit.note(&format!(
                        "the command was still running in VM {vmid} after {timeout_s}s and may still be running there"
                    ))
                    .await;
                    Some(killed)
                } else if let Some(code) = result.exit_code {
                    Some(finished::Status::ExitCode(code))
                } else {
                    result.signal.map(finished::Status::Signal)
                }
            }
            None => {
                emit.output(true, &got.stderr).await;
                let code = got.exit_code.filter(|c| *c != 0).unwrap_or(1);
                emit.note(&format!(
                    "qm guest exec printed no result (qm exit code {}), see its message above",
                    got.exit_code
                        .map_or_else(|| "none".to_owned(), |c| c.to_string())
                ))
                .await;
                Some(finished::Status::ExitCode(code))
            }
        },
    };
    match status {
        Some(finished::Status::ExitCode(code)) => outcome.exit_code = Some(code),
        Some(finished::Status::Signal(signal)) => outcome.signal = Some(signal),
        None => {}
    }
    outcome.duration = started.elapsed();
    outcome.truncated = emit.truncated;
    outcome.output_bytes = emit.sent;
    let done = Kind::Finished(Finished {
        status,
        duration_ms: u64::try_from(outcome.duration.as_millis()).unwrap_or(u64::MAX),
        truncated: outcome.truncated,
    });
    if tokio::time::timeout(FINISH_SEND_WAIT, emit.send(done))
        .await
        .is_err()
    {
        tracing::debug!(request = %run.request_id, "no room on the link for the finished event");
    }
    outcome
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

    #[tokio::test]
    async fn output_is_chunked_and_cut_at_the_cap() {
        let (tx, mut rx) = mpsc::channel(64);
        let mut emit = Emitter {
            request_id: "r",
            events: &tx,
            cap: (CHUNK_BYTES + 10) as u64,
            sent: 0,
            truncated: false,
            open: true,
        };
        emit.output(false, &vec![b'x'; CHUNK_BYTES + 5]).await;
        emit.output(true, b"0123456789").await;
        emit.note("done").await;
        let (truncated, sent) = (emit.truncated, emit.sent);
        drop(tx);
        let mut sizes = Vec::new();
        while let Some(event) = rx.recv().await {
            match event.kind {
                Some(Kind::StdoutChunk(b)) => sizes.push(("out", b.len())),
                Some(Kind::StderrChunk(b)) => sizes.push(("err", b.len())),
                _ => {}
            }
        }
        assert_eq!(
            sizes,
            [
                ("out", CHUNK_BYTES),
                ("out", 5),
                ("err", 5),
                ("err", "vigil-agent: done\n".len())
            ]
        );
        assert!(truncated);
        assert_eq!(sent, (CHUNK_BYTES + 10) as u64);
    }
}
