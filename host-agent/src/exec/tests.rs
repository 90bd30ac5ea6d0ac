//! Real processes, real pipes, real signals.

use super::*;
use std::time::Instant;
use vigil_proto::agent::v1::{Finished, finished};

fn marker() -> String {
    let mut b = [0u8; 3];
    getrandom::fill(&mut b).unwrap();
    // A unique `sleep` argument: 100.<digits> seconds.
    format!("100.{}", u32::from_be_bytes([0, b[0], b[1], b[2]]))
}

/// Live (not zombie) processes whose command line contains `marker`.
fn live_processes(marker: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter_map(|e| {
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let state = stat
                .rsplit(')')
                .next()?
                .split_whitespace()
                .next()?
                .to_owned();
            (cmdline.contains(marker) && state != "Z").then(|| format!("{cmdline} [{state}]"))
        })
        .collect()
}

async fn no_process_left(marker: &str) -> bool {
    for _ in 0..40 {
        if live_processes(marker).is_empty() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

struct Run {
    events: Vec<(Instant, ExecEvent)>,
    outcome: Option<Outcome>,
    started: Instant,
}

impl Run {
    fn stdout(&self) -> String {
        self.bytes(|k| match k {
            exec_event::Kind::StdoutChunk(b) => Some(b),
            _ => None,
        })
    }

    fn stderr(&self) -> String {
        self.bytes(|k| match k {
            exec_event::Kind::StderrChunk(b) => Some(b),
            _ => None,
        })
    }

    fn bytes(&self, pick: impl Fn(&exec_event::Kind) -> Option<&Vec<u8>>) -> String {
        let all: Vec<u8> = self
            .events
            .iter()
            .filter_map(|(_, e)| e.kind.as_ref().and_then(&pick))
            .flatten()
            .copied()
            .collect();
        String::from_utf8_lossy(&all).into_owned()
    }

    fn finished(&self) -> Finished {
        match self.events.last().and_then(|(_, e)| e.kind.clone()) {
            Some(exec_event::Kind::Finished(f)) => f,
            other => panic!("last event is not Finished: {other:?}"),
        }
    }
}

async fn run_with(command: &str, limits: Limits, cancel: CancellationToken) -> Run {
    let (tx, mut rx) = mpsc::channel(16);
    let collector = tokio::spawn(async move {
        let mut events = Vec::new();
        while let Some(event) = rx.recv().await {
            events.push((Instant::now(), event));
        }
        events
    });
    let started = Instant::now();
    let process = HostRunner::new()
        .command(&ExecTarget::Host, command)
        .unwrap();
    let outcome = supervise("req", process, limits, cancel, &tx).await;
    drop(tx);
    let events = collector.await.unwrap();
    assert!(events.iter().all(|(_, e)| e.request_id == "req"));
    Run {
        events,
        outcome,
        started,
    }
}

async fn run_cmd(command: &str, timeout_s: u32) -> Run {
    let limits = Limits::for_request(timeout_s, 0, crate::config::DEFAULT_MAX_OUTPUT_CAP);
    run_with(command, limits, CancellationToken::new()).await
}

#[test]
fn limits_apply_defaults_and_maxima() {
    let max = 16 << 20;
    assert_eq!(
        Limits::for_request(0, 0, max),
        Limits {
            timeout: Duration::from_secs(30),
            output_cap: 1 << 20
        }
    );
    assert_eq!(
        Limits::for_request(301, 0, max).timeout,
        Duration::from_secs(300)
    );
    assert_eq!(Limits::for_request(5, 1 << 30, max).output_cap, max);
    assert_eq!(Limits::for_request(5, 0, 4096).output_cap, 4096);
}

#[test]
fn bash_is_preferred() {
    let shell = find_shell();
    if std::path::Path::new("/usr/bin/bash").exists() || std::path::Path::new("/bin/bash").exists()
    {
        assert!(shell.ends_with("bash"), "{}", shell.display());
    }
}

#[tokio::test]
async fn output_streams_before_the_command_ends() {
    let run = run_cmd("for i in 1 2 3; do echo $i; sleep 1; done", 10).await;
    assert!(matches!(
        run.events.first().and_then(|(_, e)| e.kind.clone()),
        Some(exec_event::Kind::Started(_))
    ));
    let first_chunk = run
        .events
        .iter()
        .find(|(_, e)| matches!(e.kind, Some(exec_event::Kind::StdoutChunk(_))))
        .map(|(t, _)| *t)
        .unwrap();
    let (end, _) = run.events.last().unwrap();
    assert!(first_chunk.duration_since(run.started) < Duration::from_millis(1500));
    assert!(end.duration_since(first_chunk) >= Duration::from_millis(1500));
    assert_eq!(run.stdout(), "1\n2\n3\n");
    let finished = run.finished();
    assert_eq!(finished.status, Some(finished::Status::ExitCode(0)));
    assert!(finished.duration_ms >= 2000 && !finished.truncated);
}

#[tokio::test]
async fn exit_codes_and_stderr_are_reported() {
    let run = run_cmd("echo oops >&2; exit 3", 5).await;
    assert_eq!(run.stderr(), "oops\n");
    assert_eq!(run.stdout(), "");
    assert_eq!(run.finished().status, Some(finished::Status::ExitCode(3)));
}

#[tokio::test]
async fn a_timeout_kills_the_whole_process_tree() {
    let m = marker();
    let run = run_cmd(&format!("sleep {m} & sleep {m}"), 2).await;
    let finished = run.finished();
    assert_eq!(finished.status, Some(finished::Status::Signal(9)));
    assert!((1900..5000).contains(&finished.duration_ms), "{finished:?}");
    assert!(run.outcome.unwrap().timed_out);
    assert!(no_process_left(&m).await, "left: {:?}", live_processes(&m));
}

#[tokio::test]
async fn processes_left_in_the_background_are_killed_when_the_command_ends() {
    let m = marker();
    let run = run_cmd(&format!("sleep {m} & echo started"), 10).await;
    assert_eq!(run.stdout(), "started\n");
    let finished = run.finished();
    assert_eq!(finished.status, Some(finished::Status::ExitCode(0)));
    assert!(finished.duration_ms < 3000, "{finished:?}");
    assert!(no_process_left(&m).await, "left: {:?}", live_processes(&m));
}

#[tokio::test]
async fn the_output_cap_truncates_and_kills() {
    let limits = Limits::for_request(20, 100_000, crate::config::DEFAULT_MAX_OUTPUT_CAP);
    let run = run_with("yes | head -c 50000000", limits, CancellationToken::new()).await;
    let out = run.stdout();
    assert!(out.len() <= 100_000, "{} bytes", out.len());
    assert!(out.len() > 50_000, "{} bytes", out.len());
    let finished = run.finished();
    assert!(finished.truncated);
    assert!(finished.duration_ms < 10_000);
    assert!(run.outcome.unwrap().truncated);
}

#[tokio::test]
async fn chunks_are_at_most_16_kib_and_nothing_is_lost() {
    let run = run_cmd("head -c 200000 /dev/zero", 10).await;
    let sizes: Vec<usize> = run
        .events
        .iter()
        .filter_map(|(_, e)| match &e.kind {
            Some(exec_event::Kind::StdoutChunk(b)) => Some(b.len()),
            _ => None,
        })
        .collect();
    assert!(sizes.iter().all(|n| *n <= CHUNK_BYTES), "{sizes:?}");
    assert_eq!(sizes.iter().sum::<usize>(), 200_000);
    assert!(!run.finished().truncated);
}

#[tokio::test]
async fn cancel_kills_the_group() {
    let m = marker();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let limits = Limits::for_request(30, 0, 1 << 20);
    let run = run_with(&format!("sleep {m} | sleep {m}"), limits, cancel).await;
    let finished = run.finished();
    assert_eq!(finished.status, Some(finished::Status::Signal(9)));
    assert!(finished.duration_ms < 5000);
    assert!(run.outcome.unwrap().cancelled);
    assert!(no_process_left(&m).await, "left: {:?}", live_processes(&m));
}

#[tokio::test]
async fn the_environment_is_reset() {
    let run = run_cmd(
        "echo \"[$HOME$SSH_AUTH_SOCK$USER]\"; echo $PAGER $GIT_PAGER $TERM $LANG; echo \"$PATH\"; pwd",
        5,
    )
    .await;
    assert_eq!(
        run.stdout(),
        format!("[]\ncat cat dumb C.UTF-8\n{}\n/\n", host::FIXED_PATH)
    );
    let env = run_cmd("env | sort", 5).await.stdout();
    let names: Vec<&str> = env.lines().filter_map(|l| l.split('=').next()).collect();
    for name in &names {
        assert!(
            FIXED_ENV.iter().any(|(k, _)| k == name) || ["PWD", "SHLVL", "_"].contains(name),
            "unexpected variable {name} in {env}"
        );
    }
}

#[tokio::test]
async fn stdin_is_dev_null() {
    let run = run_cmd("cat; readlink /proc/self/fd/0; echo done", 5).await;
    assert_eq!(run.stdout(), "/dev/null\ndone\n");
}

#[tokio::test]
async fn a_command_that_cannot_start_is_rejected() {
    let (tx, mut rx) = mpsc::channel(4);
    let cmd = std::process::Command::new("/nonexistent/shell");
    let limits = Limits::for_request(1, 0, 1 << 20);
    let outcome = supervise("req", cmd, limits, CancellationToken::new(), &tx).await;
    assert!(outcome.is_none());
    let event = rx.recv().await.unwrap();
    assert!(matches!(
        event.kind,
        Some(exec_event::Kind::Rejected(ref r)) if r.code == "EXECUTION_FAILED"
    ));
}

#[tokio::test]
async fn a_closed_link_kills_the_command() {
    let m = marker();
    let (tx, rx) = mpsc::channel(4);
    drop(rx);
    let process = HostRunner::new()
        .command(&ExecTarget::Host, &format!("sleep {m}"))
        .unwrap();
    let limits = Limits::for_request(30, 0, 1 << 20);
    let started = Instant::now();
    supervise("req", process, limits, CancellationToken::new(), &tx).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(no_process_left(&m).await);
}

#[test]
fn a_host_read_this_agent_cannot_confine_is_refused_as_sandbox_unavailable() {
    // Found in a review: the refusal travelled as ACTION_NOT_ALLOWED with its real code
    // only as the first word of the reason, so the controller and the model saw the
    // wrong one.
    let unconfinable = Err(sandbox::SandboxError::Confine("no landlock syscall".into()));
    let executor = Executor::new(
        HostRunner::new(),
        Backends::default(),
        crate::config::DEFAULT_MAX_OUTPUT_CAP,
        Arc::new(sandbox::ReadSandbox::with_probe(unconfinable, false)),
    );
    let refusal = executor.host_command(Mode::Read, "uname -s").unwrap_err();
    assert_eq!(refusal.code, RejectCode::SandboxUnavailable);
    assert_eq!(refusal.code.as_str(), "SANDBOX_UNAVAILABLE");
    assert!(
        refusal.reason.contains("no landlock syscall"),
        "{}",
        refusal.reason
    );
    // A write does not use the read sandbox.
    assert!(executor.host_command(Mode::Write, "true").is_ok());
}
