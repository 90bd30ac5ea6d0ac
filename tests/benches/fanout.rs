//! Fan-out benchmark: a controller in this process (SQLite) and `VIGIL_BENCH_FANOUT_AGENTS`
//! scripted agents (default 1000), each on its own real mutual-TLS stream, answering every
//! command with a short output. Times `POST /api/exec/fanout {all: true}` in its JSON form
//! `VIGIL_BENCH_FANOUT_RUNS` times (default 10) and reports the time to all, the median
//! and worst, and results lost (targets not `ok`). The agents run in the same process, so
//! the figure is an upper bound on the controller's own cost.
//!
//! `cargo bench -p vigil-tests --bench fanout`

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::mpsc;
use vigil_tests::in_process::TestController;
use vigil_tests::in_process::clients::{connect, enroll, hello};
use vigil_tests::in_process::fake_agent::{Reports, Script, respond_with};
use vigil_tests::wait_until;

fn env_num(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

async fn connected(ctrl: &TestController) -> usize {
    let agents: Vec<Value> = ctrl
        .api(reqwest::Method::GET, "/api/agents")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    agents.iter().filter(|a| a["connected"] == true).count()
}

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return; // `cargo test --benches` only checks that this builds
    }
    let agents = env_num("VIGIL_BENCH_FANOUT_AGENTS", 1000);
    let runs = env_num("VIGIL_BENCH_FANOUT_RUNS", 10);
    let ctrl = TestController::start(false, Duration::from_secs(300)).await;
    let token = ctrl
        .token(u32::try_from(agents).unwrap(), 3600, &[("bench", "fanout")])
        .await;
    let started = Instant::now();
    let (cancels, _cancelled) = mpsc::unbounded_channel();
    for i in 0..agents {
        let agent = enroll(&ctrl, &token, &format!("bench-{i}"), "")
            .await
            .unwrap();
        let stream = connect(&ctrl, &agent, hello(&agent.id, false))
            .await
            .unwrap();
        let reports = Reports {
            cancels: cancels.clone(),
            commands: None,
        };
        tokio::spawn(respond_with(stream, Script::ByCommand, reports));
    }
    assert!(
        wait_until(Duration::from_secs(120), || async {
            connected(&ctrl).await == agents
        })
        .await
    );
    println!(
        "{agents} agents enrolled and connected in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let mut times = Vec::with_capacity(runs);
    let mut lost = 0;
    for _ in 0..runs {
        let started = Instant::now();
        let answer: Value = ctrl
            .api(reqwest::Method::POST, "/api/exec/fanout")
            .header("accept", "application/json")
            .json(&json!({"all": true, "command": "uptime", "timeout_s": 30}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        times.push(started.elapsed());
        let summary = &answer["summary"];
        assert_eq!(summary["targets"], agents);
        lost += agents - summary["ok"].as_u64().unwrap_or(0) as usize;
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "fan-out to {agents} agents, {runs} runs: median {:.0} ms, best {:.0} ms, worst {:.0} ms; {lost} results lost",
        ms(times[runs / 2]),
        ms(times[0]),
        ms(times[runs - 1]),
    );
    ctrl.stop().await;
}
