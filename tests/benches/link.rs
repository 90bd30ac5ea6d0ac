//! Agent-link benchmarks with the release binaries (build them first: `make bench` does):
//! round-trip latency of `true` through controller → agent → back over the HTTP API,
//! streaming throughput of 1 GiB of output, idle agent memory and the agent binary's size.
//! Comparisons with OpenSSH come from `tests/benches/ssh-compare.sh`.
//!
//! Environment: `VIGIL_BENCH_RUNS` (default 1000), `VIGIL_BENCH_IDLE_S` (default 600),
//! `VIGIL_BENCH_STREAM_BYTES` (default 1 GiB).

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use std::time::{Duration, Instant};
use vigil_tests::stats::pct;
use vigil_tests::{Agent, AgentOptions, Controller, ControllerOptions, wait_until};

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return; // `cargo test --benches` only checks that this builds
    }
    let runs = env_num("VIGIL_BENCH_RUNS", 1000) as usize;
    let idle_s = env_num("VIGIL_BENCH_IDLE_S", 600);
    let stream_bytes = env_num("VIGIL_BENCH_STREAM_BYTES", 1 << 30);

    // The round trips go back to back, far above the default exec rate limit (0: none).
    let ctrl = Controller::start(ControllerOptions {
        raw_exec: true,
        extra_args: vec!["--rate-exec-per-s".into(), "0".into()],
        ..Default::default()
    })
    .await;
    let config = format!("max_output_cap_bytes = {}\n", stream_bytes + (1 << 20));
    let agent = Agent::join(
        &ctrl,
        AgentOptions {
            config: Some(config),
            ..Default::default()
        },
    )
    .await;
    let id = agent.state.id.clone();
    assert!(
        wait_until(Duration::from_secs(30), || ctrl.api.connected(&id)).await,
        "agent did not connect"
    );
    // A second agent that only connects and idles: the "idle agent" memory figure.
    let idle = Agent::join(&ctrl, AgentOptions::default()).await;
    let idle_id = idle.state.id.clone();
    assert!(
        wait_until(Duration::from_secs(30), || ctrl.api.connected(&idle_id)).await,
        "idle agent did not connect"
    );
    let idle_started = Instant::now();

    // 1. Round trip of `true`.
    for _ in 0..20 {
        ctrl.api.exec_json(&id, "true").await.expect("warm-up");
    }
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        let out = ctrl.api.exec_json(&id, "true").await.expect("true runs");
        samples.push(t.elapsed());
        assert_eq!(out.exit_code, Some(0));
    }
    samples.sort();
    println!(
        "round trip `true` via POST /api/exec ({runs} runs): p50 {:.2} ms, p99 {:.2} ms",
        pct(&samples, 0.5),
        pct(&samples, 0.99)
    );

    // 2. Streaming throughput.
    let cmd = format!("head -c {stream_bytes} /dev/zero");
    let t = Instant::now();
    let events = ctrl
        .api
        .raw_exec_sse(
            &id,
            "read",
            &cmd,
            None,
            json!({"output_cap_bytes": stream_bytes + (1 << 20), "timeout_s": 300}),
        )
        .await
        .expect("stream runs");
    let secs = t.elapsed().as_secs_f64();
    let bytes: usize = events
        .iter()
        .filter(|e| e.event == "stdout")
        .map(|e| e.data.len())
        .sum();
    println!(
        "stream {} MiB: {:.1} s, {:.0} MB/s ({} bytes received)",
        stream_bytes >> 20,
        secs,
        bytes as f64 / secs / 1e6,
        bytes
    );

    // 3. Memory: the working agent after the runs above, and the idle agent after idle_s.
    let pid = agent_pid(&agent);
    println!(
        "working agent RSS after the runs above: {} KiB",
        rss_kib(pid)
    );
    let idle_pid = agent_pid(&idle);
    println!("idle agent RSS after connect: {} KiB", rss_kib(idle_pid));
    tokio::time::sleep(Duration::from_secs(idle_s).saturating_sub(idle_started.elapsed())).await;
    println!(
        "idle agent RSS after {} s connected and idle: {} KiB",
        idle_started.elapsed().as_secs(),
        rss_kib(idle_pid)
    );
    println!(
        "working agent RSS after the same wait: {} KiB",
        rss_kib(pid)
    );

    // 4. Binary size.
    let bin = vigil_tests::bin("vigil-agent");
    println!(
        "vigil-agent binary: {:.1} MiB ({})",
        std::fs::metadata(&bin).map(|m| m.len()).unwrap_or(0) as f64 / 1048576.0,
        bin.display()
    );
}

fn agent_pid(agent: &Agent) -> u32 {
    let status: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(agent.file("status.json")).expect("status.json"),
    )
    .expect("json");
    status["pid"].as_u64().expect("pid") as u32
}
