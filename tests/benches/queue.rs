//! The agent's queue and slow readers, with the release binaries (`make bench` builds
//! them): 200 reads sent at once to one agent whose limit is 8 (wall time, throughput and
//! the waits in the queue), and a client that reads a 1 GiB stream slowly while the
//! controller's resident memory is sampled.
//!
//! Environment: `VIGIL_BENCH_BURST` (default 200), `VIGIL_BENCH_SLOW_BYTES` (default 1 GiB),
//! `VIGIL_BENCH_SLOW_MBPS` (the slow reader's pace, default 32 MB/s).

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::{Value, json};
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

fn pct(sorted: &[u64], p: f64) -> u64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

async fn exec(client: &reqwest::Client, ctrl: &Controller, agent: &str, command: &str) -> Value {
    client
        .post(format!("{}/api/exec", ctrl.api.base()))
        .bearer_auth(ctrl.api.token())
        .header("accept", "application/json")
        .json(&json!({"agent": agent, "command": command, "timeout_s": 300}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return; // `cargo test --benches` only checks that this builds
    }
    let burst = env_num("VIGIL_BENCH_BURST", 200) as usize;
    let slow_bytes = env_num("VIGIL_BENCH_SLOW_BYTES", 1 << 30);
    let slow_mbps = env_num("VIGIL_BENCH_SLOW_MBPS", 32);
    let ctrl = Controller::start(ControllerOptions {
        // raw-exec lets the slow reader's command carry an output cap of 1 GiB.
        raw_exec: true,
        extra_args: vec!["--rate-exec-per-s".into(), "0".into()],
        ..Default::default()
    })
    .await;
    let config = format!("max_output_cap_bytes = {}\n", slow_bytes + (1 << 20));
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
    let client = reqwest::Client::new();
    for _ in 0..10 {
        exec(&client, &ctrl, &id, "true").await;
    }

    // 1. A burst far past the agent's limit of 8.
    for command in ["true", "sleep 0.1"] {
        let started = Instant::now();
        let calls = (0..burst).map(|_| exec(&client, &ctrl, &id, command));
        let answers = futures_util::future::join_all(calls).await;
        let wall = started.elapsed();
        let ok = answers.iter().filter(|a| a["exit_code"] == 0).count();
        let mut queued: Vec<u64> = answers
            .iter()
            .map(|a| a["queued_ms"].as_u64().unwrap_or(0))
            .collect();
        queued.sort_unstable();
        println!(
            "burst of {burst} `{command}` at once, limit 8: {ok}/{burst} ok in {:.2} s ({:.0} commands/s); queued_ms p50 {} p99 {} max {}",
            wall.as_secs_f64(),
            burst as f64 / wall.as_secs_f64(),
            pct(&queued, 0.5),
            pct(&queued, 0.99),
            queued.last().copied().unwrap_or(0)
        );
    }

    // 2. A slow reader of a large stream: the controller's memory stays bounded.
    let pid = ctrl.pid().expect("controller pid");
    let before = rss_kib(pid);
    let response = client
        .post(format!("{}/api/raw-exec", ctrl.api.base()))
        .bearer_auth(ctrl.api.token())
        .json(&json!({"agent": id, "mode": "read", "command": format!("head -c {slow_bytes} /dev/zero"),
            "timeout_s": 300, "output_cap_bytes": slow_bytes + (1 << 20)}))
        .send()
        .await
        .unwrap();
    let mut body = response.bytes_stream();
    let (mut read, mut peak) = (0u64, before);
    let started = Instant::now();
    let pace = slow_mbps as f64 * 1e6;
    let mut last_event = String::new();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.unwrap();
        read += chunk.len() as u64;
        if let Some(at) = chunk.windows(6).position(|w| w == b"event:") {
            last_event =
                String::from_utf8_lossy(&chunk[at..(at + 40).min(chunk.len())]).into_owned();
        }
        let due = Duration::from_secs_f64(read as f64 / pace);
        if let Some(wait) = due.checked_sub(started.elapsed()) {
            tokio::time::sleep(wait).await;
        }
        peak = peak.max(rss_kib(pid));
    }
    println!(
        "slow reader: {:.0} MB of SSE read at about {slow_mbps} MB/s in {:.1} s; controller RSS {:.1} → peak {:.1} MiB (+{:.1} MiB); last event: {}",
        read as f64 / 1e6,
        started.elapsed().as_secs_f64(),
        before as f64 / 1024.0,
        peak as f64 / 1024.0,
        (peak - before) as f64 / 1024.0,
        last_event.lines().next().unwrap_or("")
    );
}
