//! The queue in front of each agent, through a real controller and a real agent: a burst
//! of reads far beyond the agent's limit all run, never more than the limit at once, with
//! the time each waited reported as `queued_ms`; past the queue's bound the answer is
//! `429 AGENT_BUSY` with `Retry-After`; and a caller flooding one agent does not make
//! another caller wait behind the whole flood.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::time::Duration;

use serde_json::{Value, json};
use vigil_tests::{Agent, AgentOptions, Controller, ControllerOptions};

/// Each command prints when it started and when it ended (ns since the epoch).
const TIMED: &str = "date +%s%N; sleep 0.3; date +%s%N";

async fn setup(extra_args: &[&str]) -> (Controller, Agent) {
    let ctrl = Controller::start(ControllerOptions {
        extra_args: extra_args.iter().map(|a| (*a).to_owned()).collect(),
        ..Default::default()
    })
    .await;
    let agent = Agent::join_connected(&ctrl, AgentOptions::default()).await;
    (ctrl, agent)
}

/// `POST /api/exec` with `token`, as JSON: the status, the `Retry-After` header, the body.
async fn exec(
    ctrl: &Controller,
    token: &str,
    agent: &str,
    command: &str,
) -> (u16, Option<String>, Value) {
    let response = reqwest::Client::new()
        .post(format!("{}/api/exec", ctrl.api.base()))
        .bearer_auth(token)
        .header("accept", "application/json")
        .json(&json!({"agent": agent, "command": command, "timeout_s": 120}))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    (
        status,
        retry_after,
        response.json().await.unwrap_or(Value::Null),
    )
}

/// The (start, end) the command printed.
fn span(body: &Value) -> (u128, u128) {
    let mut lines = body["stdout"].as_str().unwrap().lines();
    let mut next = || lines.next().unwrap().trim().parse::<u128>().unwrap();
    (next(), next())
}

/// The most spans that overlap at one instant.
fn most_at_once(spans: &[(u128, u128)]) -> usize {
    let mut edges: Vec<(u128, i32)> = spans
        .iter()
        .flat_map(|&(start, end)| [(start, 1), (end, -1)])
        .collect();
    edges.sort_by_key(|&(at, delta)| (at, delta));
    let (mut now, mut most) = (0i32, 0i32);
    for (_, delta) in edges {
        now += delta;
        most = most.max(now);
    }
    usize::try_from(most).unwrap()
}

async fn burst(
    ctrl: &Controller,
    token: &str,
    agent: &str,
    n: usize,
) -> Vec<(u16, Option<String>, Value)> {
    let calls = (0..n).map(|_| exec(ctrl, token, agent, TIMED));
    futures_util::future::join_all(calls).await
}

#[tokio::test(flavor = "multi_thread")]
async fn two_hundred_reads_at_once_all_run_never_more_than_the_limit_at_a_time() {
    let (ctrl, agent) = setup(&[]).await;
    let token = ctrl.api.token().to_owned();
    let answers = burst(&ctrl, &token, &agent.state.id, 200).await;
    let refused: Vec<_> = answers.iter().filter(|(s, _, _)| *s != 200).collect();
    assert!(refused.is_empty(), "refused: {:?}", refused.first());
    assert!(answers.iter().all(|(_, _, body)| body["exit_code"] == 0));
    let spans: Vec<_> = answers.iter().map(|(_, _, body)| span(body)).collect();
    let most = most_at_once(&spans);
    assert!(most <= 8, "{most} commands ran at once; the limit is 8");
    let waited = answers
        .iter()
        .filter(|(_, _, body)| body["queued_ms"].as_u64().unwrap() > 0)
        .count();
    assert!(
        waited >= 192,
        "only {waited} of 200 report a wait in the queue"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn past_the_bound_the_answer_is_429_with_retry_after() {
    let (ctrl, agent) = setup(&["--agent-concurrency", "2", "--agent-queue", "3"]).await;
    let token = ctrl.api.token().to_owned();
    let answers = burst(&ctrl, &token, &agent.state.id, 8).await;
    let ok = answers.iter().filter(|(s, _, _)| *s == 200).count();
    let busy: Vec<_> = answers.iter().filter(|(s, _, _)| *s == 429).collect();
    assert_eq!(ok + busy.len(), 8, "{answers:?}");
    assert!(ok >= 5, "2 running and 3 queued all finish: {ok}");
    assert!(!busy.is_empty(), "8 at once into 2 + 3 places");
    for (_, retry_after, body) in busy {
        assert_eq!(body["error"]["code"], "AGENT_BUSY", "{body}");
        assert_eq!(retry_after.as_deref(), Some("1"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_flood_from_one_caller_does_not_hold_up_another() {
    let (ctrl, agent) = setup(&["--agent-concurrency", "2"]).await;
    let flood_token = ctrl.api.token().to_owned();
    let (code, out, err) = ctrl.cli(&["apitoken", "create", "--role", "viewer", "--name", "other"]);
    assert_eq!(code, 0, "{out}{err}");
    let other_token = out.lines().last().unwrap().trim().to_owned();
    let id = agent.state.id.clone();

    let flood = burst(&ctrl, &flood_token, &id, 30);
    let other = async {
        // Once the flood is queued, the other caller asks once.
        tokio::time::sleep(Duration::from_millis(500)).await;
        exec(&ctrl, &other_token, &id, TIMED).await
    };
    let (flood, (status, _, other)) = tokio::join!(flood, other);
    assert_eq!(status, 200, "{other}");
    let (other_start, _) = span(&other);
    let after = flood
        .iter()
        .filter(|(_, _, body)| span(body).0 > other_start)
        .count();
    // Strict turns let it through at the next free slot: at most the two running flood
    // commands and the one that took the other free slot start before it; without turns it
    // would start after every flood command.
    assert!(
        after >= 20,
        "only {after} of 30 flood commands started after the other caller's"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_runaway_script_meets_its_rate_limit_and_others_do_not() {
    let (ctrl, agent) = setup(&["--rate-exec-per-s", "1"]).await;
    let script = ctrl.api.token().to_owned();
    let (code, out, err) =
        ctrl.cli(&["apitoken", "create", "--role", "viewer", "--name", "person"]);
    assert_eq!(code, 0, "{out}{err}");
    let person = out.lines().last().unwrap().trim().to_owned();
    let id = agent.state.id.clone();
    // A bucket holds ten seconds' worth: ten pass at once, the next ones are refused.
    let mut answers = Vec::new();
    for _ in 0..14 {
        answers.push(exec(&ctrl, &script, &id, "true").await);
    }
    let passed = answers.iter().filter(|(s, _, _)| *s == 200).count();
    assert!((10..14).contains(&passed), "{passed} of 14 passed");
    let (status, retry_after, body) = answers.last().unwrap();
    assert_eq!(*status, 429, "{body}");
    assert_eq!(body["error"]["code"], "RATE_LIMITED");
    assert_eq!(body["error"]["details"]["class"], "exec");
    assert!(
        retry_after
            .as_deref()
            .is_some_and(|s| s.parse::<u32>().unwrap() >= 1)
    );
    let (status, _, body) = exec(&ctrl, &person, &id, "true").await;
    assert_eq!(status, 200, "another caller has its own budget: {body}");
    let (status, metrics) = ctrl.api.get_text("/metrics").await;
    assert_eq!(status, 200);
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("vigil_rate_limited_total{class=\"exec\"}")),
        "{metrics}"
    );
}
