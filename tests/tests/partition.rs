//! A network partition between a real controller and a real agent, made with nftables
//! rules that drop every packet to and from the gateway's port (so the HTTP API still
//! answers): mid-read, the caller gets `AGENT_OFFLINE` once the controller notices the
//! silence, not the command's own deadline, and the agent kills the command when it
//! notices in turn; mid-approved-write, the outcome is recorded as unknown and the write
//! never runs a second time; when the partition heals, the agent comes back.
//!
//! Needs root and nftables (`.ci/run` installs it); without them the tests say so and
//! pass vacuously, except under `CI`, where that fails.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::time::Duration;

use serde_json::{Value, json};
use vigil_tests::partition::{Partition, can_partition};
use vigil_tests::{
    Agent, AgentOptions, Controller, ControllerOptions, processes_matching, wait_until,
};

async fn setup() -> (Controller, Agent) {
    let ctrl = Controller::start(ControllerOptions {
        extra_args: vec!["--heartbeat-interval-s".into(), "1".into()],
        ..Default::default()
    })
    .await;
    let agent = Agent::join_connected(&ctrl, AgentOptions::default()).await;
    (ctrl, agent)
}

/// The agent's own backoff tops out at a minute; it must be back well within two.
const BACK: Duration = Duration::from_secs(120);
/// The agent notices a silent controller by its HTTP/2 keep-alive (20 s, then 20 s).
const AGENT_NOTICES: Duration = Duration::from_secs(90);

#[tokio::test(flavor = "multi_thread")]
async fn mid_read_the_caller_gets_agent_offline_and_the_command_stops() {
    if !can_partition() {
        return;
    }
    let (ctrl, agent) = setup().await;
    let id = agent.state.id.clone();
    let marker = format!("sleep 287.{}", std::process::id());
    let read = {
        let url = format!("{}/api/exec", ctrl.api.base());
        let (token, id, command) = (ctrl.api.token().to_owned(), id.clone(), marker.clone());
        tokio::spawn(async move {
            let response = reqwest::Client::new()
                .post(url)
                .bearer_auth(token)
                .header("accept", "application/json")
                .json(&json!({"agent": id, "command": command, "timeout_s": 300}))
                .send()
                .await
                .unwrap();
            let status = response.status().as_u16();
            (
                status,
                response.json::<Value>().await.unwrap_or(Value::Null),
            )
        })
    };
    assert!(
        wait_until(Duration::from_secs(20), || async {
            !processes_matching(&marker).is_empty()
        })
        .await,
        "the read never started"
    );
    let partition = Partition::cut(ctrl.grpc_port);
    let (status, body) = read.await.unwrap();
    // The command would run 287 s and its deadline is 315 s: only the partition ends it.
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["code"], "AGENT_OFFLINE", "{body}");
    assert!(
        wait_until(AGENT_NOTICES, || async {
            processes_matching(&marker).is_empty()
        })
        .await,
        "the agent kept running the command after losing the controller\n{}",
        agent.log()
    );
    partition.heal();
    assert!(
        wait_until(BACK, || ctrl.api.connected(&id)).await,
        "the agent did not come back after the partition healed\n{}",
        agent.log()
    );
    let after = ctrl.api.exec_json(&id, "echo back").await.unwrap();
    assert_eq!(after.stdout, "back\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn mid_write_the_outcome_is_unknown_and_it_never_runs_again() {
    if !can_partition() {
        return;
    }
    let (ctrl, agent) = setup().await;
    let id = agent.state.id.clone();
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    let marker = format!("sleep 293.{}", std::process::id());
    let command = format!(
        "echo run >> {}; {marker}; echo done >> {}",
        runs.display(),
        runs.display()
    );
    let (status, row) = ctrl
        .api
        .post("/api/exec/write", &json!({"agent": id, "command": command}))
        .await;
    assert_eq!(status, 202, "{row}");
    let approval = row["id"].as_str().unwrap().to_owned();
    let (status, body) = ctrl
        .api
        .post(&format!("/api/ai/approvals/{approval}/approve"), &json!({}))
        .await;
    assert!(status < 300, "{body}");
    assert!(
        wait_until(Duration::from_secs(20), || async {
            !processes_matching(&marker).is_empty()
        })
        .await,
        "the write never started"
    );
    let partition = Partition::cut(ctrl.grpc_port);
    let row = |ctrl: &Controller| {
        let api = ctrl.api.clone();
        let path = format!("/api/ai/approvals/{approval}");
        async move { api.get(&path).await.1 }
    };
    assert!(
        wait_until(Duration::from_secs(60), || async {
            row(&ctrl).await["run_state"] == "unknown"
        })
        .await,
        "the write's outcome was not recorded as unknown: {}",
        row(&ctrl).await
    );
    assert!(
        wait_until(AGENT_NOTICES, || async {
            processes_matching(&marker).is_empty()
        })
        .await,
        "the agent kept running the write after losing the controller"
    );
    partition.heal();
    assert!(
        wait_until(BACK, || ctrl.api.connected(&id)).await,
        "not back"
    );
    // Back and idle for a while: nothing runs the write again.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let written = std::fs::read_to_string(&runs).unwrap_or_default();
    assert_eq!(written, "run\n", "the write ran once and was stopped");
    let final_row: Value = row(&ctrl).await;
    assert_eq!(final_row["run_state"], "unknown", "{final_row}");
    let (_, audit) = ctrl.api.get("/api/audit").await;
    let runs_audited = audit
        .as_array()
        .or_else(|| audit["entries"].as_array())
        .map(|rows| {
            rows.iter()
                .filter(|r| r["action"] == "approval.run" && r["approval_id"] == approval.as_str())
                .map(|r| r["outcome"].as_str().unwrap_or_default().to_owned())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    assert_eq!(runs_audited.len(), 1, "one run audited: {audit}");
    assert_eq!(
        runs_audited[0], "unknown: agent_offline",
        "recorded as unknown, not as an error or a success"
    );
}
