//! `GET /api/resources` and `GET /api/resources/{id}` over real HTTP, on a controller
//! started in-process whose inventory is fed directly (as the gateway would) and with one
//! agent "connected" through a registered session.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use vigil_controller::api::Role;
use vigil_controller::clock::unix_now;
use vigil_controller::config::Config;
use vigil_controller::gateway::{AgentHello, Session};
use vigil_controller::inventory::AgentUpdate;
use vigil_controller::server;
use vigil_shared::ids::AgentId;
use vigil_shared::resource::{ExecPath, Facts, Resource, ResourceId, Via};

fn resource(
    id: &str,
    name: &str,
    parent: Option<&str>,
    paths: &[(&AgentId, &str, Via)],
) -> Resource {
    let id: ResourceId = id.parse().unwrap();
    Resource {
        kind: id.kind(),
        id,
        name: name.into(),
        aliases: Vec::new(),
        parent: parent.map(|p| p.parse().unwrap()),
        status: "running".into(),
        paths: paths
            .iter()
            .map(|(agent, target, via)| ExecPath {
                agent: agent.to_string(),
                target: target.parse().unwrap(),
                via: *via,
            })
            .collect(),
        facts: Facts::default(),
    }
}

fn full(resources: Vec<Resource>) -> AgentUpdate {
    AgentUpdate {
        seq: 1,
        full: true,
        upserts: resources,
        sources: vec!["host".into()],
        ..AgentUpdate::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn resources_are_searched_and_shown_with_their_chain() {
    let tmp = tempfile::tempdir().unwrap();
    let config = Config::local(tmp.path().join("data"));
    let running = server::start(&config).await.unwrap();
    let viewer = running
        .agents
        .store()
        .create_api_token("viewer-token", Role::Viewer, unix_now())
        .await
        .unwrap()
        .0;

    // The node's agent sees LXC 141 and a container in it; the agent inside LXC 141 (same
    // MAC) sees the same container through Docker, and is the one connected.
    let (node, inside) = (AgentId::new_random(), AgentId::new_random());
    let mac = "bc:24:11:00:00:01";
    let mut lxc = resource(
        "lxc:pve:141",
        "media",
        Some("node:pve"),
        &[(&node, "lxc:141", Via::PctExec)],
    );
    lxc.facts.macs = vec![mac.into()];
    let inventory = running.agents.inventory();
    inventory.apply(
        &node.to_string(),
        full(vec![
            resource("node:pve", "pve", None, &[(&node, "host", Via::Direct)]),
            lxc,
            resource(
                "docker_container:media:3f2a9c0b1d2e",
                "media-jellyfin-1",
                Some("lxc:pve:141"),
                &[(&node, "lxc:141/docker:3f2a9c0b1d2e", Via::PctExec)],
            ),
        ]),
    );
    let mut host = resource(
        &format!("host:{inside}"),
        "media-box",
        None,
        &[(&inside, "host", Via::Direct)],
    );
    host.facts.macs = vec![mac.into()];
    inventory.apply(
        &inside.to_string(),
        full(vec![
            host,
            resource(
                "docker_container:media:3f2a9c0b1d2e",
                "media-jellyfin-1",
                Some(&format!("host:{inside}")),
                &[(&inside, "docker:3f2a9c0b1d2e", Via::Docker)],
            ),
        ]),
    );
    let sessions = running.agents.sessions();
    let (tx, _rx) = tokio::sync::mpsc::channel(4);
    let hello = AgentHello {
        version: "test".into(),
        hostname: "media-box".into(),
        os: "linux".into(),
        arch: "x86_64".into(),
        capabilities: Vec::new(),
        read_only: true,
    };
    sessions
        .insert(Session::new(
            inside,
            sessions.next_conn(),
            hello,
            tx,
            1_000,
            vigil_controller::agents::queue::QueueLimits::default(),
        ))
        .unwrap();

    let client = reqwest::Client::new();
    let base = format!("http://{}", running.http_addr);
    let call = |path: &str, token: Option<&str>| {
        let mut request = client.get(format!("{base}{path}"));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        async move {
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            (
                status,
                response.json::<Value>().await.unwrap_or(Value::Null),
            )
        }
    };
    let viewer = Some(viewer.as_str());

    let (status, body) = call("/api/resources?q=jellyfin", viewer).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body.as_array().unwrap().len(), 1, "{body}");
    let hit = &body[0];
    assert_eq!(hit["id"], "docker_container:media:3f2a9c0b1d2e");
    assert_eq!(hit["kind"], "docker_container");
    assert_eq!(hit["name"], "media-jellyfin-1");
    assert_eq!(hit["parent"], "lxc:pve:141");
    assert_eq!(hit["status"], "running");
    assert_eq!(hit["agent"], inside.to_string());
    assert!(hit["aliases"].as_array().unwrap().is_empty());

    let (status, body) = call("/api/resources?kind=lxc&q=", viewer).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body.as_array().unwrap().len(), 1);
    assert_eq!(
        body[0]["agent"],
        inside.to_string(),
        "the direct path comes first"
    );
    let (_, body) = call("/api/resources?q=media-box&kind=lxc", viewer).await;
    assert_eq!(body[0]["id"], "lxc:pve:141", "{body}");
    let (_, body) = call("/api/resources?limit=2", viewer).await;
    assert_eq!(body.as_array().unwrap().len(), 2);
    assert_eq!(body[0]["id"], "node:pve");
    assert_eq!(body[0]["agent"], node.to_string());

    for bad in [
        "/api/resources?kind=ship",
        "/api/resources?limit=0",
        "/api/resources?limit=5001",
        "/api/resources?limit=many",
        "/api/resources?color=red",
        "/api/resources/not-an-id",
        "/api/resources/lxc:pve:x",
    ] {
        let (status, body) = call(bad, viewer).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert_eq!(body["error"]["code"], "INVALID_INPUT", "{bad}");
    }
    let (_, body) = call("/api/resources/not-an-id", viewer).await;
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("invalid resource id"),
        "{body}"
    );
    let (status, body) = call("/api/resources/lxc:pve:999", viewer).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (404, &Value::from("NOT_FOUND"))
    );
    let (status, _) = call("/api/resources", None).await;
    assert_eq!(status, 401);

    let (status, body) = call("/api/resources/lxc:pve:141", viewer).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["name"], "media");
    assert_eq!(body["parent"], "node:pve");
    assert_eq!(body["facts"]["macs"][0], mac);
    assert_eq!(
        body["aliases"],
        serde_json::json!([format!("host:{inside}"), "media-box"])
    );
    assert_eq!(
        body["children"],
        serde_json::json!([
            format!("host:{inside}"),
            "docker_container:media:3f2a9c0b1d2e"
        ])
    );
    assert_eq!(
        body["chain"],
        serde_json::json!([
            {"agent": inside.to_string(), "target": "host", "via": "direct", "connected": true},
            {"agent": node.to_string(), "target": "lxc:141", "via": "pct_exec", "connected": false},
        ])
    );
    let (_, body) = call("/api/resources/docker_container:media:3f2a9c0b1d2e", viewer).await;
    let vias: Vec<&str> = body["chain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["via"].as_str().unwrap())
        .collect();
    assert_eq!(vias, ["docker", "pct_exec"], "{body}");
    assert_eq!(body["chain"][1]["target"], "lxc:141/docker:3f2a9c0b1d2e");

    running.shutdown().await.unwrap();
}
