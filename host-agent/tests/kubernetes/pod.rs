//! The pod backend: exec over the websocket, `kubectl logs` as log calls, refusals.

use super::server::{self, FLOOD_BYTES, LOG_TEXT, Seen};
use super::{JELLYFIN, guarded};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use vigil_agent::exec::pod::PodBackend;
use vigil_agent::exec::{Backend, Limits, Outcome, Run};
use vigil_agent::guard::{Refusal, RejectCode};
use vigil_proto::agent::v1::{ExecEvent, exec_event, finished};
use vigil_shared::ids::ExecTarget;

struct Ran {
    result: Result<Outcome, Refusal>,
    events: Vec<ExecEvent>,
}

impl Ran {
    fn stdout(&self) -> String {
        self.pipe(true)
    }

    fn stderr(&self) -> String {
        self.pipe(false)
    }

    fn pipe(&self, stdout: bool) -> String {
        let mut out = Vec::new();
        for e in &self.events {
            match (&e.kind, stdout) {
                (Some(exec_event::Kind::StdoutChunk(b)), true)
                | (Some(exec_event::Kind::StderrChunk(b)), false) => {
                    assert!(b.len() <= vigil_agent::exec::CHUNK_BYTES);
                    out.extend_from_slice(b);
                }
                _ => {}
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    fn finished(&self) -> Option<finished::Status> {
        let last = self.events.last().and_then(|e| e.kind.clone());
        match last {
            Some(exec_event::Kind::Finished(f)) => f.status,
            other => panic!("last event is not Finished: {other:?}"),
        }
    }
}

/// Run `command` in `pod`, cancelling as soon as it started when `cancel_on_start`.
async fn exec(
    api: &server::FakeApi,
    pod: (&str, &str, &str),
    command: &str,
    output_cap: u64,
    cancel_on_start: bool,
) -> Ran {
    let backend = PodBackend::new(api.client());
    let target = ExecTarget::Pod {
        namespace: pod.0.into(),
        name: pod.1.into(),
        container: pod.2.into(),
    };
    let cancel = CancellationToken::new();
    let (tx, mut rx) = mpsc::channel(1024);
    let running = {
        let cancel = cancel.clone();
        let target = &target;
        let backend = &backend;
        async move {
            let result = backend
                .run(Run {
                    request_id: "r1",
                    target,
                    command,
                    limits: Limits {
                        timeout: Duration::from_secs(30),
                        output_cap,
                    },
                    cancel,
                    events: &tx,
                })
                .await;
            drop(tx);
            result
        }
    };
    let collect = async {
        let mut events = Vec::new();
        while let Some(e) = rx.recv().await {
            if cancel_on_start && matches!(e.kind, Some(exec_event::Kind::Started(_))) {
                cancel.cancel();
            }
            events.push(e);
        }
        events
    };
    let (result, events) = guarded(async { tokio::join!(running, collect) }).await;
    Ran { result, events }
}

fn exec_requests(api: &server::FakeApi) -> Vec<Seen> {
    api.seen()
        .into_iter()
        .filter(|s| s.path.ends_with("/exec"))
        .collect()
}

#[tokio::test]
async fn exec_sends_sh_c_and_maps_output_and_the_exit_code() {
    let api = server::start().await;
    let payload = r#"echo "it's  two words" 'and $HOME'; exit 3"#;
    let ran = exec(&api, ("media", JELLYFIN, "server"), payload, 1 << 20, false).await;
    let outcome = ran.result.clone().unwrap_or_else(|r| panic!("{r:?}"));
    assert_eq!(outcome.exit_code, Some(3));
    assert_eq!(ran.finished(), Some(finished::Status::ExitCode(3)));
    assert_eq!(ran.stdout(), format!("ran: {payload}\n"));
    assert_eq!(ran.stderr(), "oops\n");
    assert!(matches!(
        ran.events[0].kind,
        Some(exec_event::Kind::Started(_))
    ));
    let seen = exec_requests(&api);
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0].path,
        format!("/api/v1/namespaces/media/pods/{JELLYFIN}/exec")
    );
    assert_eq!(seen[0].values("command"), ["sh", "-c", payload]);
    assert_eq!(seen[0].values("container"), ["server"]);
    assert_eq!(seen[0].values("stdin"), Vec::<&str>::new());
    assert_eq!(seen[0].values("tty"), Vec::<&str>::new());

    let ok = exec(
        &api,
        ("media", "postgres-0", "db"),
        "uptime",
        1 << 20,
        false,
    )
    .await;
    assert_eq!(ok.finished(), Some(finished::Status::ExitCode(0)));
    assert_eq!(ok.stdout(), "ran: uptime\n");
}

#[tokio::test]
async fn exec_output_is_capped_and_cancel_stops_the_stream() {
    let api = server::start().await;
    let flood = exec(
        &api,
        ("media", JELLYFIN, "server"),
        "yes flood",
        5000,
        false,
    )
    .await;
    let outcome = flood.result.clone().unwrap_or_else(|r| panic!("{r:?}"));
    assert!(outcome.truncated);
    assert_eq!(outcome.output_bytes, 5000);
    assert_eq!(flood.stdout().len(), 5000);
    const { assert!(FLOOD_BYTES > 5000) };
    assert_eq!(flood.finished(), Some(finished::Status::Signal(9)));

    let cancelled = exec(
        &api,
        ("media", JELLYFIN, "server"),
        "sleep 600",
        1 << 20,
        true,
    )
    .await;
    let outcome = cancelled.result.clone().unwrap_or_else(|r| panic!("{r:?}"));
    assert!(outcome.cancelled);
    assert_eq!(cancelled.finished(), Some(finished::Status::Signal(9)));
}

#[tokio::test]
async fn kubectl_logs_is_served_as_a_log_call_with_its_options() {
    let api = server::start().await;
    let ran = exec(
        &api,
        ("media", JELLYFIN, "server"),
        &format!("kubectl logs {JELLYFIN} -c sidecar --tail=50 --since 5m -n media"),
        1 << 20,
        false,
    )
    .await;
    assert_eq!(ran.finished(), Some(finished::Status::ExitCode(0)));
    assert_eq!(ran.stdout(), LOG_TEXT);
    let logs: Vec<Seen> = api
        .seen()
        .into_iter()
        .filter(|s| s.path.ends_with("/log"))
        .collect();
    assert_eq!(logs.len(), 1);
    assert_eq!(
        logs[0].path,
        format!("/api/v1/namespaces/media/pods/{JELLYFIN}/log")
    );
    assert_eq!(logs[0].values("tailLines"), ["50"]);
    assert_eq!(logs[0].values("sinceSeconds"), ["300"]);
    assert_eq!(logs[0].values("container"), ["sidecar"]);
    assert!(exec_requests(&api).is_empty(), "a logs call never execs");

    // No tail and no since: the last 200 lines of the target's container; the pod need
    // not be running to have logs.
    let plain = exec(
        &api,
        ("default", "backup-29123456-q7wzp", "backup"),
        "kubectl logs --previous",
        10,
        false,
    )
    .await;
    let outcome = plain.result.clone().unwrap_or_else(|r| panic!("{r:?}"));
    assert!(outcome.truncated);
    assert_eq!(plain.stdout(), &LOG_TEXT[..10]);
    assert_eq!(plain.finished(), Some(finished::Status::ExitCode(0)));
    let logs: Vec<Seen> = api
        .seen()
        .into_iter()
        .filter(|s| s.path.ends_with("/log"))
        .collect();
    assert_eq!(logs[1].values("tailLines"), ["200"]);
    assert_eq!(logs[1].values("sinceSeconds"), Vec::<&str>::new());
    assert_eq!(logs[1].values("container"), ["backup"]);
    assert_eq!(logs[1].values("previous"), ["true"]);
}

fn refused(ran: &Ran) -> Refusal {
    assert!(ran.events.is_empty(), "nothing starts: {:?}", ran.events);
    ran.result
        .clone()
        .err()
        .unwrap_or_else(|| panic!("expected a refusal"))
}

#[tokio::test]
async fn missing_or_stopped_pods_and_other_pods_logs_are_refused_before_anything_starts() {
    let api = server::start().await;
    let missing = exec(&api, ("media", "ghost-0", "x"), "uptime", 1024, false).await;
    let r = refused(&missing);
    assert_eq!(r.code, RejectCode::NotFound, "{r:?}");
    assert!(r.reason.contains("ghost-0"), "{r:?}");

    let done = exec(
        &api,
        ("default", "backup-29123456-q7wzp", "backup"),
        "uptime",
        1024,
        false,
    )
    .await;
    let r = refused(&done);
    assert_eq!(r.code, RejectCode::NotFound);
    assert!(r.reason.contains("Succeeded"), "{r:?}");

    let no_container = exec(&api, ("media", JELLYFIN, "nginx"), "uptime", 1024, false).await;
    assert_eq!(refused(&no_container).code, RejectCode::NotFound);

    let other = exec(
        &api,
        ("media", JELLYFIN, "server"),
        "kubectl logs postgres-0",
        1024,
        false,
    )
    .await;
    assert_eq!(refused(&other).code, RejectCode::InvalidInput);
    let other_ns = exec(
        &api,
        ("media", JELLYFIN, "server"),
        "kubectl logs -n default",
        1024,
        false,
    )
    .await;
    assert_eq!(refused(&other_ns).code, RejectCode::InvalidInput);
    assert!(exec_requests(&api).is_empty());
}
