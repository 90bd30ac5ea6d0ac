//! The `docker:C` exec backend: output, exit codes, limits and refusals.

use super::{HANG_GUARD, platform};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use vigil_agent::exec::{CHUNK_BYTES, Limits, Outcome, Run};
use vigil_agent::guard::{Refusal, RejectCode};
use vigil_agent::platform::Detected;
use vigil_proto::agent::v1::exec_event::Kind;
use vigil_proto::agent::v1::{ExecEvent, finished};
use vigil_shared::ids::ExecTarget;
use vigil_tests::docker::{Container, require};
use vigil_tests::wait_until;

/// Run `command` in `target` through the backend, collecting its events.
async fn exec_with(
    found: &Detected,
    target: &str,
    command: &str,
    limits: Limits,
    cancel: CancellationToken,
    on_output: impl Fn() + Send + 'static,
) -> (Result<Outcome, Refusal>, Vec<ExecEvent>) {
    let (tx, mut rx) = mpsc::channel::<ExecEvent>(16);
    let collect = tokio::spawn(async move {
        let mut events = Vec::new();
        while let Some(e) = rx.recv().await {
            if matches!(e.kind, Some(Kind::StdoutChunk(_))) {
                on_output();
            }
            events.push(e);
        }
        events
    });
    let target: ExecTarget = target.parse().unwrap();
    let result = tokio::time::timeout(
        limits.timeout + HANG_GUARD,
        found.backend.run(Run {
            request_id: "r1",
            target: &target,
            command,
            limits,
            cancel,
            events: &tx,
        }),
    )
    .await
    .expect("the backend returned");
    drop(tx);
    (result, collect.await.unwrap())
}

fn limits(timeout_s: u64, cap: u64) -> Limits {
    Limits {
        timeout: Duration::from_secs(timeout_s),
        output_cap: cap,
    }
}

async fn exec(
    found: &Detected,
    c: &Container,
    command: &str,
    limits: Limits,
) -> (Outcome, Vec<ExecEvent>) {
    let target = format!("docker:{}", c.short_id());
    let (result, events) = exec_with(
        found,
        &target,
        command,
        limits,
        CancellationToken::new(),
        || {},
    )
    .await;
    let outcome = result.unwrap_or_else(|r| panic!("{command}: refused: {r:?}"));
    check_shape(&events);
    (outcome, events)
}

/// `Started` first, exactly one `Finished` last, chunks of at most 16 KiB in between.
fn check_shape(events: &[ExecEvent]) {
    assert!(
        matches!(
            events.first().and_then(|e| e.kind.as_ref()),
            Some(Kind::Started(_))
        ),
        "{events:?}"
    );
    assert!(
        matches!(
            events.last().and_then(|e| e.kind.as_ref()),
            Some(Kind::Finished(_))
        ),
        "{events:?}"
    );
    let finished = events
        .iter()
        .filter(|e| matches!(e.kind, Some(Kind::Finished(_))))
        .count();
    assert_eq!(finished, 1);
    for e in &events[1..events.len() - 1] {
        match &e.kind {
            Some(Kind::StdoutChunk(b) | Kind::StderrChunk(b)) => {
                assert!(!b.is_empty() && b.len() <= CHUNK_BYTES)
            }
            other => panic!("unexpected event {other:?}"),
        }
        assert_eq!(e.request_id, "r1");
    }
}

fn stdout(events: &[ExecEvent]) -> Vec<u8> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            Some(Kind::StdoutChunk(b)) => Some(b.as_slice()),
            _ => None,
        })
        .flatten()
        .copied()
        .collect()
}

fn stderr(events: &[ExecEvent]) -> String {
    let bytes: Vec<u8> = events
        .iter()
        .filter_map(|e| match &e.kind {
            Some(Kind::StderrChunk(b)) => Some(b.as_slice()),
            _ => None,
        })
        .flatten()
        .copied()
        .collect();
    String::from_utf8(bytes).unwrap()
}

fn finished(events: &[ExecEvent]) -> (Option<finished::Status>, bool) {
    match events.last().and_then(|e| e.kind.as_ref()) {
        Some(Kind::Finished(f)) => (f.status, f.truncated),
        other => panic!("last event {other:?}"),
    }
}

#[tokio::test]
async fn commands_run_in_the_container_with_their_output_and_exit_code() {
    if !require() {
        return;
    }
    let c = Container::run("vigil-exec", "exec-box", &[]).unwrap();
    let found = platform().await;

    let (outcome, events) = exec(&found, &c, "cat /etc/hostname", limits(30, 1 << 20)).await;
    assert_eq!(String::from_utf8(stdout(&events)).unwrap(), "exec-box\n");
    assert_eq!(
        finished(&events),
        (Some(finished::Status::ExitCode(0)), false)
    );
    assert_eq!(
        (outcome.exit_code, outcome.signal, outcome.truncated),
        (Some(0), None, false)
    );

    // The container's name reaches it as well as its short id.
    let (result, events) = exec_with(
        &found,
        &format!("docker:{}", c.name),
        "hostname; echo $PAGER $TERM",
        limits(30, 1 << 20),
        CancellationToken::new(),
        || {},
    )
    .await;
    assert!(result.is_ok());
    assert_eq!(
        String::from_utf8(stdout(&events)).unwrap(),
        "exec-box\ncat dumb\n"
    );

    let (outcome, events) = exec(&found, &c, "cat /nonexistent", limits(30, 1 << 20)).await;
    assert_eq!(outcome.exit_code, Some(1));
    assert_eq!(finished(&events).0, Some(finished::Status::ExitCode(1)));
    assert!(stderr(&events).contains("/nonexistent"), "{events:?}");
    assert!(stdout(&events).is_empty());

    let (outcome, events) = exec(
        &found,
        &c,
        "echo out; echo err >&2; exit 7",
        limits(30, 1 << 20),
    )
    .await;
    assert_eq!(outcome.exit_code, Some(7));
    assert_eq!(stdout(&events), b"out\n");
    assert_eq!(stderr(&events), "err\n");

    // More than one chunk of output arrives whole, in chunks of at most 16 KiB.
    let (outcome, events) = exec(
        &found,
        &c,
        "head -c 100000 /bin/busybox",
        limits(30, 1 << 20),
    )
    .await;
    assert_eq!(outcome.exit_code, Some(0));
    let busybox = std::fs::read("/bin/busybox").unwrap();
    assert_eq!(stdout(&events), busybox[..100_000]);
}

#[tokio::test]
async fn a_timeout_kills_the_command_and_its_children_in_the_container() {
    if !require() {
        return;
    }
    let c = Container::run("vigil-timeout", "slow-box", &[]).unwrap();
    let found = platform().await;
    let (outcome, events) = exec(
        &found,
        &c,
        "sleep 100 & sleep 100; wait",
        limits(1, 1 << 20),
    )
    .await;
    assert!(outcome.timed_out);
    assert_eq!((outcome.exit_code, outcome.signal), (None, Some(9)));
    assert_eq!(finished(&events).0, Some(finished::Status::Signal(9)));
    let left = c.processes();
    assert!(
        !left.iter().any(|p| p.contains("sleep 100")),
        "left behind: {left:?}"
    );
    assert!(
        left.iter().any(|p| p.contains("sleep 3600")),
        "the container lives on: {left:?}"
    );
}

#[tokio::test]
async fn cancelling_kills_the_command() {
    if !require() {
        return;
    }
    let c = Container::run("vigil-cancel", "cancel-box", &[]).unwrap();
    let found = platform().await;
    let cancel = CancellationToken::new();
    let on_output = {
        let cancel = cancel.clone();
        move || cancel.cancel()
    };
    let target = format!("docker:{}", c.short_id());
    let (result, events) = exec_with(
        &found,
        &target,
        "echo ready; sleep 100",
        limits(60, 1 << 20),
        cancel,
        on_output,
    )
    .await;
    let outcome = result.unwrap();
    check_shape(&events);
    assert!(outcome.cancelled && !outcome.timed_out);
    assert_eq!(outcome.signal, Some(9));
    assert_eq!(stdout(&events), b"ready\n");
    let left = c.processes();
    assert!(
        !left.iter().any(|p| p.contains("sleep 100")),
        "left behind: {left:?}"
    );
}

#[tokio::test]
async fn an_abandoned_command_is_killed() {
    if !require() {
        return;
    }
    let c = Container::run("vigil-abandon", "abandon-box", &[]).unwrap();
    let found = platform().await;
    let backend = found.backend.clone();
    let target: ExecTarget = format!("docker:{}", c.short_id()).parse().unwrap();
    let (tx, mut rx) = mpsc::channel::<ExecEvent>(16);
    let task = tokio::spawn(async move {
        backend
            .run(Run {
                request_id: "r1",
                target: &target,
                command: "echo ready; sleep 100",
                limits: limits(60, 1 << 20),
                cancel: CancellationToken::new(),
                events: &tx,
            })
            .await
            .map(|_| ())
    });
    let ready = tokio::time::timeout(HANG_GUARD, async {
        while let Some(e) = rx.recv().await {
            if matches!(e.kind, Some(Kind::StdoutChunk(_))) {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(ready, Ok(true), "the command did not start");
    assert!(c.processes().iter().any(|p| p.contains("sleep 100")));
    // The request's task goes away (the link dropped it) without a cancel.
    task.abort();
    let gone = wait_until(HANG_GUARD, || async {
        !c.processes().iter().any(|p| p.contains("sleep 100"))
    })
    .await;
    assert!(gone, "left behind: {:?}", c.processes());
}

#[tokio::test]
async fn the_output_cap_truncates_and_stops_the_command() {
    if !require() {
        return;
    }
    let c = Container::run("vigil-cap", "cap-box", &[]).unwrap();
    let found = platform().await;
    let cap = 100 * 1024;
    let (outcome, events) = exec(&found, &c, "yes", limits(60, cap)).await;
    assert!(outcome.truncated);
    assert_eq!(outcome.output_bytes, cap);
    assert_eq!(stdout(&events).len() as u64, cap);
    assert!(stdout(&events).starts_with(b"y\ny\n"));
    assert_eq!(finished(&events), (Some(finished::Status::Signal(9)), true));
    let left = c.processes();
    assert!(
        !left.iter().any(|p| p.contains("yes")),
        "left behind: {left:?}"
    );
}

#[tokio::test]
async fn missing_and_stopped_containers_are_not_found() {
    if !require() {
        return;
    }
    let found = platform().await;
    // A reference that is no name could reach another endpoint of the engine.
    for target in ["docker:vigil-no-such-container", "docker:x/../../info"] {
        let (result, events) = exec_with(
            &found,
            target,
            "true",
            limits(10, 1024),
            CancellationToken::new(),
            || {},
        )
        .await;
        let refusal = result.unwrap_err();
        assert_eq!(refusal.code, RejectCode::NotFound, "{refusal:?}");
        assert!(events.is_empty(), "a refusal sends nothing: {events:?}");
    }

    let c = Container::run("vigil-stopped", "stopped-box", &[]).unwrap();
    c.stop();
    let target = format!("docker:{}", c.short_id());
    let (result, events) = exec_with(
        &found,
        &target,
        "true",
        limits(10, 1024),
        CancellationToken::new(),
        || {},
    )
    .await;
    let refusal = result.unwrap_err();
    assert_eq!(refusal.code, RejectCode::NotFound, "{refusal:?}");
    assert!(refusal.reason.contains("not running"), "{refusal:?}");
    assert!(events.is_empty());
}
