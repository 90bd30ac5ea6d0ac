//! End-to-end: the fleet simulator `vigil-fleet` against a real controller process. Five
//! simulated agents enroll, connect over real mutual TLS, show as connected in the API,
//! answer a command with their canned output, come back after a controller restart, and a
//! rerun with the same state directory connects the same identities without enrolling.

#![allow(clippy::expect_used, clippy::unwrap_used)] // helpers outside #[test] functions

use std::time::Duration;

use serde_json::Value;
use vigil_tests::{Controller, ControllerOptions, FleetProcess, wait_until};

const AGENTS: usize = 5;
const CONNECT: Duration = Duration::from_secs(60);

/// The simulated agents in `GET /api/agents` (host names `fleet-…`), sorted by id.
async fn fleet_agents(ctrl: &Controller) -> Vec<Value> {
    let mut agents: Vec<Value> = ctrl
        .api
        .agents()
        .await
        .into_iter()
        .filter(|a| {
            a["hostname"]
                .as_str()
                .is_some_and(|h| h.starts_with("fleet-"))
        })
        .collect();
    agents.sort_by_key(|a| a["id"].as_str().unwrap_or_default().to_owned());
    agents
}

async fn all_connected(ctrl: &Controller) -> bool {
    let agents = fleet_agents(ctrl).await;
    agents.len() == AGENTS && agents.iter().all(|a| a["connected"] == true)
}

#[tokio::test(flavor = "multi_thread")]
async fn simulated_agents_connect_answer_survive_a_restart_and_are_not_enrolled_twice() {
    let mut ctrl = Controller::start(ControllerOptions::default()).await;
    let state = tempfile::tempdir().unwrap();

    let mut fleet = FleetProcess::start(&ctrl, state.path(), AGENTS, true, "fleet-1.log");
    assert!(
        fleet.wait_all_connected(AGENTS, 1, CONNECT).await,
        "no `connected 5/5`:\n{}\ncontroller:\n{}",
        fleet.output(),
        ctrl.log()
    );
    assert!(state.path().join("fleet.json").is_file());
    assert!(
        wait_until(Duration::from_secs(10), || all_connected(&ctrl)).await,
        "{:?}",
        fleet_agents(&ctrl).await
    );
    let first = fleet_agents(&ctrl).await;
    let ids: Vec<String> = first
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_owned())
        .collect();

    // A read reaches one simulated agent and comes back with its canned output.
    let agent = &first[2];
    let out = ctrl
        .api
        .exec_json(agent["id"].as_str().unwrap(), "uname -s")
        .await
        .expect("the read ran");
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert_eq!(
        out.stdout,
        format!("vigil-fleet {}\n", agent["hostname"].as_str().unwrap())
    );

    // Every stream comes back after the controller restarts: `connected 5/5` again.
    ctrl.restart().await;
    assert!(
        fleet.wait_all_connected(AGENTS, 2, CONNECT).await,
        "the fleet did not come back:\n{}",
        fleet.output()
    );
    assert!(wait_until(Duration::from_secs(10), || all_connected(&ctrl)).await);

    assert_eq!(fleet.terminate(), Some(0), "{}", fleet.output());
    assert!(
        wait_until(Duration::from_secs(30), || async {
            fleet_agents(&ctrl)
                .await
                .iter()
                .all(|a| a["connected"] == false)
        })
        .await,
        "the streams stayed up after SIGTERM"
    );

    // A rerun without a token: enrolling would fail, so it must reuse the identities.
    let mut again = FleetProcess::start(&ctrl, state.path(), AGENTS, false, "fleet-2.log");
    assert!(
        again.wait_all_connected(AGENTS, 1, CONNECT).await,
        "the rerun did not connect:\n{}",
        again.output()
    );
    assert!(
        again.output().contains("enrollment skipped"),
        "{}",
        again.output()
    );
    assert!(wait_until(Duration::from_secs(10), || all_connected(&ctrl)).await);
    let rerun: Vec<String> = fleet_agents(&ctrl)
        .await
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(rerun, ids, "the same five identities, no new enrollment");
    assert_eq!(again.terminate(), Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_token_a_missing_identity_is_a_clear_error() {
    let ctrl = Controller::start(ControllerOptions::default()).await;
    let state = tempfile::tempdir().unwrap();
    let mut fleet = FleetProcess::start(&ctrl, state.path(), 2, false, "fleet.log");
    let code = {
        let mut code = None;
        for _ in 0..200 {
            if let Some(c) = fleet.exit_code() {
                code = Some(c);
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        code
    };
    assert_eq!(code, Some(1), "{}", fleet.output());
    assert!(
        fleet.output().contains("admin API token is needed"),
        "{}",
        fleet.output()
    );
    assert!(fleet_agents(&ctrl).await.is_empty());
}
