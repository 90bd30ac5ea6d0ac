//! `serve --local-agent` (what `make run` starts): the controller enrolls one agent for
//! this machine, supervises it, runs commands through it and reuses the enrollment.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::time::Duration;

use vigil_tests::{Controller, ControllerOptions, processes_matching, wait_until};

/// The local agent's id; the controller serves HTTP before it has enrolled the agent, so
/// the identity may take a moment to appear.
async fn local_id(ctrl: &Controller) -> String {
    let path = ctrl.data_dir().join("local-agent/identity.json");
    wait_until(Duration::from_secs(30), || {
        let path = path.clone();
        async move { path.exists() }
    })
    .await;
    let text = std::fs::read_to_string(&path).expect("identity.json of the local agent");
    let value: serde_json::Value = serde_json::from_str(&text).expect("json");
    value["agent_id"].as_str().expect("agent_id").to_owned()
}

#[tokio::test]
async fn the_local_agent_connects_runs_commands_and_is_reused() {
    let mut ctrl = Controller::start(ControllerOptions {
        extra_args: vec!["--local-agent".into()],
        ..ControllerOptions::default()
    })
    .await;
    let id = local_id(&ctrl).await;
    let connected = wait_until(Duration::from_secs(30), || ctrl.api.connected(&id)).await;
    assert!(
        connected,
        "the local agent did not connect:\n{}",
        ctrl.log()
    );
    let agents = ctrl.api.agents().await;
    assert_eq!(agents.len(), 1, "{agents:?}");
    let outcome = ctrl.api.exec_json(&id, "uname -s").await.expect("exec");
    assert_eq!(outcome.exit_code, Some(0));
    assert_eq!(outcome.stdout.trim(), "Linux");

    // A restart reuses the enrollment: the same agent, still one.
    ctrl.restart().await;
    assert_eq!(local_id(&ctrl).await, id);
    let connected = wait_until(Duration::from_secs(30), || ctrl.api.connected(&id)).await;
    assert!(
        connected,
        "not reconnected after a restart:\n{}",
        ctrl.log()
    );
    assert_eq!(ctrl.api.agents().await.len(), 1);
    assert!(ctrl.log().contains("reusing the local agent's enrollment"));

    // Stopping the controller stops its child.
    let marker = ctrl.data_dir().join("local-agent").display().to_string();
    ctrl.stop();
    let gone = wait_until(Duration::from_secs(10), || {
        let left = processes_matching(&marker);
        async move { left.is_empty() }
    })
    .await;
    assert!(gone, "the local agent outlived the controller");
}
