//! End-to-end: writes through approvals, without any model. A real controller and a real
//! agent; the write runs only after a person approves it, with a grant the agent verifies,
//! at most once (racing approvals, a controller restart between request and approval), and
//! the audit chain shows the approval.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::time::Duration;

use serde_json::{Value, json};
use vigil_tests::{Agent, AgentOptions, Controller, ControllerOptions, wait_until};

const CONNECT: Duration = Duration::from_secs(30);

async fn setup() -> (Controller, Agent) {
    let ctrl = Controller::start(ControllerOptions::default()).await;
    let agent = Agent::join(&ctrl, AgentOptions::default()).await;
    let id = agent.state.id.clone();
    assert!(
        wait_until(CONNECT, || ctrl.api.connected(&id)).await,
        "agent never connected\n{}\n{}",
        ctrl.log(),
        agent.log()
    );
    (ctrl, agent)
}

async fn request_write(ctrl: &Controller, agent: &str, command: &str) -> Value {
    let (status, row) = ctrl
        .api
        .post(
            "/api/exec/write",
            &json!({ "agent": agent, "command": command }),
        )
        .await;
    assert_eq!(status, 202, "{row}");
    assert_eq!(row["status"], "pending");
    row
}

async fn approval(ctrl: &Controller, id: &str) -> Value {
    let (status, row) = ctrl.api.get(&format!("/api/ai/approvals/{id}")).await;
    assert_eq!(status, 200, "{row}");
    row
}

async fn wait_run_ended(ctrl: &Controller, id: &str) -> Value {
    let ended = wait_until(Duration::from_secs(30), || async {
        let row = approval(ctrl, id).await;
        row["run_state"] == "done" || row["run_state"] == "unknown"
    })
    .await;
    assert!(ended, "the write never ended:\n{}", ctrl.log());
    approval(ctrl, id).await
}

fn lines(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_write_runs_once_after_approval_with_a_grant_and_is_audited() {
    let (ctrl, agent) = setup().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("written");
    let command = format!("echo changed >> {}", file.display());
    let row = request_write(&ctrl, &agent.state.id, &command).await;
    let id = row["id"].as_str().unwrap().to_owned();
    assert_eq!(row["risk"], "medium", "{row}");
    assert!(
        row["reasons"][0].as_str().unwrap().contains("redirection"),
        "{row}"
    );

    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(lines(&file), 0, "nothing runs before a person approves");

    // Twenty operators approve at once: one wins, the write runs once.
    let mut racers = Vec::new();
    for _ in 0..20 {
        let api = ctrl.api.clone();
        let path = format!("/api/ai/approvals/{id}/approve");
        racers.push(tokio::spawn(
            async move { api.post(&path, &json!({})).await.0 },
        ));
    }
    let mut statuses = Vec::new();
    for racer in racers {
        statuses.push(racer.await.unwrap());
    }
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        1,
        "{statuses:?}"
    );
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 409),
        "{statuses:?}"
    );

    let row = wait_run_ended(&ctrl, &id).await;
    assert_eq!(
        (row["run_state"].as_str(), row["exit_code"].as_i64()),
        (Some("done"), Some(0)),
        "{row}"
    );
    assert_eq!(lines(&file), 1, "the write ran exactly once");

    let (_, audit) = ctrl.api.get("/api/audit").await;
    let rows = audit.as_array().cloned().unwrap_or_default();
    let run = rows
        .iter()
        .find(|r| r["action"] == "approval.run" && r["approval_id"] == id.as_str())
        .unwrap_or_else(|| panic!("no audited run of {id}: {audit}"));
    assert_eq!(run["outcome"], "ok", "{run}");
    assert!(
        rows.iter()
            .any(|r| r["action"] == "approval.approve" && r["approval_id"] == id.as_str())
    );

    // Approving again is refused and runs nothing.
    let (status, body) = ctrl
        .api
        .post(&format!("/api/ai/approvals/{id}/approve"), &json!({}))
        .await;
    assert_eq!(status, 409, "{body}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(lines(&file), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_denied_write_never_runs() {
    let (ctrl, agent) = setup().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("denied");
    let row = request_write(&ctrl, &agent.state.id, &format!("touch {}", file.display())).await;
    let id = row["id"].as_str().unwrap();
    let (status, denied) = ctrl
        .api
        .post(
            &format!("/api/ai/approvals/{id}/deny"),
            &json!({ "reason": "not today" }),
        )
        .await;
    assert_eq!(status, 200, "{denied}");
    assert_eq!(
        (denied["status"].as_str(), denied["reason"].as_str()),
        (Some("denied"), Some("not today"))
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!file.exists());
    assert_eq!(approval(&ctrl, id).await["run_state"], "none");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_pending_across_a_restart_runs_once_when_approved() {
    let (mut ctrl, agent) = setup().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("after-restart");
    let row = request_write(
        &ctrl,
        &agent.state.id,
        &format!("echo once >> {}", file.display()),
    )
    .await;
    let id = row["id"].as_str().unwrap().to_owned();
    ctrl.restart().await;
    let agent_id = agent.state.id.clone();
    assert!(
        wait_until(CONNECT, || ctrl.api.connected(&agent_id)).await,
        "agent did not reconnect"
    );
    assert_eq!(approval(&ctrl, &id).await["status"], "pending");
    let url = ctrl.api.base().to_owned();
    let (code, out, err) = ctrl.cli(&["approvals", "approve", &id, "--url", &url]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("approved"), "{out}");
    let row = wait_run_ended(&ctrl, &id).await;
    assert_eq!(row["exit_code"], 0, "{row}");
    // A second restart does not run it again.
    ctrl.restart().await;
    assert!(wait_until(CONNECT, || ctrl.api.connected(&agent_id)).await);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(lines(&file), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn exec_write_waits_for_the_decision_and_exits_with_the_commands_code() {
    let (ctrl, agent) = setup().await;
    let url = ctrl.api.base().to_owned();
    let agent_id = agent.state.id.clone();
    let data_dir = ctrl.data_dir().to_owned();
    let cli = tokio::task::spawn_blocking(move || {
        std::process::Command::new(vigil_tests::bin("vigil-controller"))
            .args([
                "exec",
                "--write",
                "--url",
                &url,
                "--agent",
                &agent_id,
                "--data-dir",
            ])
            .arg(&data_dir)
            .args(["--", "echo", "hello-write;", "exit", "3"])
            .output()
            .unwrap()
    });
    let mut pending = Vec::new();
    for _ in 0..100 {
        let (_, rows) = ctrl.api.get("/api/ai/approvals").await;
        pending = rows.as_array().cloned().unwrap_or_default();
        if !pending.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(!pending.is_empty(), "no approval was requested");
    let id = pending[0]["id"].as_str().unwrap();
    assert_eq!(pending[0]["command"], "echo hello-write; exit 3");
    let (status, _) = ctrl
        .api
        .post(&format!("/api/ai/approvals/{id}/approve"), &json!({}))
        .await;
    assert_eq!(status, 200);
    let output = cli.await.unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(3),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("hello-write"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_read_only_controller_refuses_writes() {
    let ctrl = Controller::start(ControllerOptions {
        extra_args: vec!["--control-level".into(), "read_only".into()],
        ..Default::default()
    })
    .await;
    let (status, body) = ctrl
        .api
        .post(
            "/api/exec/write",
            &json!({ "agent": uuid_like(), "command": "touch /x" }),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["code"], "POLICY_BLOCKED");
}

fn uuid_like() -> String {
    "0b6f3a52-0000-4000-8000-000000000001".into()
}
