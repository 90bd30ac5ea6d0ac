//! End-to-end against the real Docker engine: a real controller and agent process, a
//! container started with `docker run` from an image built `FROM scratch` with busybox.
//! The agent reports the container, stop and start events change the controller's
//! inventory, `POST /api/exec` with the container's resource id runs inside it, and a
//! write into it is refused without a grant. Under `CI` these tests fail when Docker is
//! missing; elsewhere they skip with a note.

#![allow(clippy::expect_used, clippy::unwrap_used)] // helpers outside #[test] functions

use serde_json::{Value, json};
use std::time::Duration;
use vigil_tests::docker::{self, Container};
use vigil_tests::{Agent, AgentOptions, Controller, ControllerOptions, wait_until};

const CONNECT: Duration = Duration::from_secs(30);
/// How long an inventory change may take to show (a hang guard, not a timing assertion).
const SETTLE: Duration = Duration::from_secs(30);

/// Discovery of Docker only (Kubernetes and Proxmox off), rescans every 30 s.
const DOCKER_ONLY: &str = "[discovery]\nproxmox = \"off\"\nkubernetes = \"off\"\ndocker = \"on\"\n";

async fn setup() -> (Controller, Agent) {
    let ctrl = Controller::start(ControllerOptions {
        raw_exec: true,
        ..Default::default()
    })
    .await;
    let agent = Agent::join(
        &ctrl,
        AgentOptions {
            config: Some(DOCKER_ONLY.into()),
            ..Default::default()
        },
    )
    .await;
    let id = agent.state.id.clone();
    assert!(
        wait_until(CONNECT, || ctrl.api.connected(&id)).await,
        "agent never connected\n{}\n{}",
        ctrl.log(),
        agent.log()
    );
    (ctrl, agent)
}

/// The resource of `container` once the controller has it with `status`.
async fn wait_for_status(ctrl: &Controller, container: &Container, status: &str) -> Option<Value> {
    let deadline = tokio::time::Instant::now() + SETTLE;
    loop {
        let hit = ctrl
            .api
            .resources(&container.name)
            .await
            .into_iter()
            .find(|r| r["kind"] == "docker_container" && r["name"] == container.name.as_str());
        if hit.as_ref().is_some_and(|r| r["status"] == status) {
            return hit;
        }
        if tokio::time::Instant::now() > deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn stdout_of(events: &[vigil_tests::SseEvent]) -> String {
    events
        .iter()
        .filter(|e| e.event == "stdout")
        .map(|e| e.data.as_str())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_container_is_reported_followed_and_reachable_by_its_resource_id() {
    if !docker::require() {
        return;
    }
    let web = Container::run(
        "vigil-e2e",
        "e2e-web",
        &["-l", "com.docker.compose.project=e2e"],
    )
    .expect("docker run");
    let (ctrl, agent) = setup().await;

    // Reported, with its id, parent, facts and a routing chain through this agent.
    let listed = wait_for_status(&ctrl, &web, "running")
        .await
        .unwrap_or_else(|| {
            panic!(
                "container never reported as running\nagent:\n{}",
                agent.log()
            )
        });
    let id = listed["id"].as_str().expect("id").to_owned();
    assert!(
        id.starts_with("docker_container:") && id.ends_with(&format!(":{}", web.short_id())),
        "{id}"
    );
    assert_eq!(listed["agent"], agent.state.id.as_str());
    let detail = ctrl
        .api
        .resource(&id)
        .await
        .expect("GET /api/resources/{id}");
    assert_eq!(detail["parent"], format!("host:{}", agent.state.id));
    assert_eq!(detail["facts"]["image"], "vigil-test-busybox:1", "{detail}");
    assert_eq!(
        detail["facts"]["labels"]["com.docker.compose.project"],
        "e2e"
    );
    let chain = detail["chain"].as_array().expect("chain");
    assert_eq!(
        chain[0],
        json!({
            "agent": agent.state.id,
            "target": format!("docker:{}", web.short_id()),
            "via": "docker",
            "connected": true,
        }),
        "{detail}"
    );

    // A read routed by resource id runs inside the container and streams its output.
    let events = ctrl
        .api
        .exec_resource_sse(&id, "cat /etc/hostname")
        .await
        .unwrap_or_else(|e| panic!("exec: {e:?}\n{}", agent.log()));
    assert_eq!(stdout_of(&events), "e2e-web\n", "{events:?}");
    let exit = events
        .iter()
        .find(|e| e.event == "exit")
        .expect("exit event");
    assert!(exit.data.contains("\"exit_code\":0"), "{}", exit.data);
    let out = ctrl
        .api
        .exec_resource_json(&id, "ls /bin/busybox; echo oops >&2; exit 3")
        .await
        .expect("exec json");
    assert_eq!(out.stdout, "/bin/busybox\n");
    assert_eq!(out.stderr, "oops\n");
    assert_eq!(out.exit_code, Some(3));

    // A write is refused: by the controller's classifier on the API, and by the agent
    // itself when it arrives as a WRITE without a grant.
    // A write through /api/exec.
    let (status, code, _) = ctrl.api.exec_resource_refused(&id, "rm -rf /bin").await;
    assert_eq!((status, code.as_str()), (403, "POLICY_BLOCKED"));
    let (status, body) = ctrl
        .api
        .raw_exec_json(
            &agent.state.id,
            "write",
            "rm -rf /bin",
            None,
            json!({"target": format!("docker:{}", web.short_id())}),
        )
        .await
        .expect_err("a write without a grant");
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["code"], "APPROVAL_REQUIRED", "{body}");
    assert!(
        web.processes().iter().all(|p| !p.contains("rm")),
        "nothing ran"
    );
    assert!(docker::docker_ok(&["exec", web.id(), "ls", "/bin/busybox"]).contains("busybox"));

    // Stop and start events change the controller's inventory.
    web.stop();
    let stopped = wait_for_status(&ctrl, &web, "exited").await;
    assert!(stopped.is_some(), "stop never showed\n{}", agent.log());
    let (status, code, body) = ctrl
        .api
        .exec_resource_refused(&id, "cat /etc/hostname")
        .await;
    assert_eq!((status, code.as_str()), (404, "NOT_FOUND"), "{body}");
    web.start();
    let running = wait_for_status(&ctrl, &web, "running").await;
    assert!(running.is_some(), "start never showed\n{}", agent.log());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_removed_container_leaves_the_inventory_and_unknown_ids_are_not_found() {
    if !docker::require() {
        return;
    }
    let gone = Container::run("vigil-e2e-gone", "e2e-gone", &[]).expect("docker run");
    let (ctrl, agent) = setup().await;
    let listed = wait_for_status(&ctrl, &gone, "running")
        .await
        .unwrap_or_else(|| panic!("never reported\n{}", agent.log()));
    let id = listed["id"].as_str().expect("id").to_owned();
    drop(gone);
    let removed = wait_until(SETTLE, || {
        let api = &ctrl.api;
        let id = id.clone();
        async move { api.resource(&id).await.is_none() }
    })
    .await;
    assert!(removed, "removal never showed\n{}", agent.log());
    // Exec in a removed container, an unknown resource, a name no resource has (a target
    // that is not an id is a name, as chat's @NAME).
    let (status, code, _) = ctrl
        .api
        .exec_resource_refused(&id, "cat /etc/hostname")
        .await;
    assert_eq!((status, code.as_str()), (404, "NOT_FOUND"));
    let (status, code, _) = ctrl
        .api
        .exec_resource_refused("docker_container:nowhere:000000000000", "uptime")
        .await;
    assert_eq!((status, code.as_str()), (404, "NOT_FOUND"));
    let (status, code, _) = ctrl.api.exec_resource_refused("not-an-id", "uptime").await;
    assert_eq!((status, code.as_str()), (404, "NOT_FOUND"));
}
