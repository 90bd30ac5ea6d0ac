//! The in-memory agent registry against the database it records into, over real mTLS
//! streams on 127.0.0.1: after enrollments, hellos, facts, a reconnect and revocations
//! (of a live and of an offline agent), `GET /api/agents` and the stored rows agree, and a
//! restarted controller (which loads its registry from the database) shows the same list.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::Value;
use vigil_controller::config::Config;
use vigil_controller::server;
use vigil_proto::agent::v1::{AgentMessage, Hello, HostFacts, agent_message};
use vigil_tests::in_process::TestController;
use vigil_tests::in_process::clients::{Enrolled, FakeAgent, connect, enroll};
use vigil_tests::in_process::fake_agent::connected;
use vigil_tests::wait_until;

const HEARTBEAT: Duration = Duration::from_secs(10);

fn hello(enrolled: &Enrolled, hostname: &str, version: &str, read_only: bool) -> AgentMessage {
    AgentMessage {
        kind: Some(agent_message::Kind::Hello(Hello {
            agent_id: enrolled.id.clone(),
            version: version.into(),
            hostname: hostname.into(),
            os: "linux".into(),
            arch: "x86_64".into(),
            capabilities: vec!["host".into()],
            read_only,
        })),
    }
}

async fn open(
    ctrl: &TestController,
    enrolled: &Enrolled,
    hostname: &str,
    version: &str,
) -> FakeAgent {
    let mut agent = connect(ctrl, enrolled, hello(enrolled, hostname, version, false))
        .await
        .unwrap();
    agent.recv().await.unwrap().expect("a hello ack");
    agent
}

async fn get(ctrl: &TestController, path: &str) -> Value {
    let response = ctrl.api(reqwest::Method::GET, path).send().await.unwrap();
    assert!(
        response.status().is_success(),
        "{path}: {}",
        response.status()
    );
    response.json().await.unwrap()
}

/// The fields of `GET /api/agents` that the record holds (not `connected`).
fn recorded(list: &Value) -> Vec<Value> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|a| {
            serde_json::json!({
                "id": a["id"], "hostname": a["hostname"], "labels": a["labels"],
                "version": a["version"], "read_only": a["read_only"], "last_seen": a["last_seen"],
            })
        })
        .collect()
}

/// The stored rows of agents that are not revoked, in the API's shape.
async fn stored(ctrl: &TestController) -> Vec<Value> {
    let rows = ctrl
        .running
        .agents
        .store()
        .list_agents(false)
        .await
        .unwrap();
    rows.iter()
        .map(|r| {
            serde_json::json!({
                "id": r.id.to_string(), "hostname": r.hostname, "labels": r.labels,
                "version": r.version, "read_only": r.read_only,
                "last_seen": r.last_seen.map(vigil_controller::clock::rfc3339),
            })
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_registry_and_the_database_agree_across_reconnects_revocations_and_a_restart() {
    let ctrl = TestController::start(false, HEARTBEAT).await;
    let token = ctrl.token(4, 3600, &[("site", "lab")]).await;
    let a = enroll(&ctrl, &token, "node-a", "").await.unwrap();
    let b = enroll(&ctrl, &token, "node-b", "").await.unwrap();
    let c = enroll(&ctrl, &token, "node-c", "").await.unwrap();
    let d = enroll(&ctrl, &token, "node-d", "").await.unwrap();

    let list = get(&ctrl, "/api/agents").await;
    assert_eq!(
        list.as_array().unwrap().len(),
        4,
        "enrolled agents are listed at once"
    );

    let live_a = open(&ctrl, &a, "node-a.lan", "1.0.0").await;
    let live_b = open(&ctrl, &b, "node-b.lan", "1.0.0").await;
    let facts = HostFacts {
        hostname: "node-b.lan".into(),
        kernel: "6.1.0-test".into(),
        cpus: 4,
        ..HostFacts::default()
    };
    live_b.send(agent_message::Kind::Facts(facts)).await;
    assert!(
        wait_until(Duration::from_secs(10), || async {
            get(&ctrl, &format!("/api/agents/{}", b.id)).await["facts"]["kernel"] == "6.1.0-test"
        })
        .await,
        "b's facts are recorded"
    );

    // b reconnects with a new version and host name; the old stream is gone first.
    drop(live_b);
    assert!(
        wait_until(Duration::from_secs(10), || async {
            !connected(&ctrl, &b.id).await
        })
        .await,
        "b's first stream ends"
    );
    let live_b2 = open(&ctrl, &b, "node-b2.lan", "1.1.0").await;
    let agent_b = get(&ctrl, &format!("/api/agents/{}", b.id)).await;
    assert_eq!(
        (agent_b["hostname"].as_str(), agent_b["version"].as_str()),
        (Some("node-b2.lan"), Some("1.1.0"))
    );

    // Revoke a live agent (a) and an offline one (c).
    for id in [&a.id, &c.id] {
        let path = format!("/api/agents/{id}/revoke");
        let response = ctrl.api(reqwest::Method::POST, &path).send().await.unwrap();
        assert!(response.status().is_success());
    }
    assert!(
        wait_until(Duration::from_secs(10), || async {
            !connected(&ctrl, &a.id).await
        })
        .await,
        "a's stream is cut"
    );
    drop(live_a);
    let revoked = get(&ctrl, &format!("/api/agents/{}", c.id)).await;
    assert!(revoked["revoked_at"].is_string(), "{revoked}");

    let before = get(&ctrl, "/api/agents").await;
    let mut ids: Vec<&str> = before
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    ids.sort_unstable();
    let mut expected = [b.id.as_str(), d.id.as_str()];
    expected.sort_unstable();
    assert_eq!(ids, expected, "revoked agents are left out");
    // Same rows, same order (the database's `created_at, id`), same values.
    ctrl.running.agents.flush().await.unwrap();
    assert_eq!(recorded(&before), stored(&ctrl).await);

    // A restart loads the registry from the database: the same list, nobody connected.
    let TestController {
        running,
        dir,
        admin_token,
    } = ctrl;
    drop(live_b2);
    running.shutdown().await.unwrap();
    let config = Config::local(dir.path().join("data"));
    let ctrl = TestController {
        running: server::start(&config).await.unwrap(),
        dir,
        admin_token,
    };
    let after = get(&ctrl, "/api/agents").await;
    assert_eq!(recorded(&after), recorded(&before));
    assert!(
        after
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["connected"] == false),
        "{after}"
    );
    let agent_b = get(&ctrl, &format!("/api/agents/{}", b.id)).await;
    assert_eq!(agent_b["facts"]["cpus"], 4, "facts survive the restart");
    assert!(
        get(&ctrl, &format!("/api/agents/{}", a.id)).await["revoked_at"].is_string(),
        "a revocation survives the restart"
    );
    let refused = connect(&ctrl, &a, hello(&a, "node-a.lan", "1.0.0", false)).await;
    assert!(refused.is_err(), "a revoked identity stays refused");
    ctrl.stop().await;
}
