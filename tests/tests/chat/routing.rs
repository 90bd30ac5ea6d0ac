//! The wrong-host edit (failure mode 5, docs/design.md §9) with a real Docker container:
//! the user names a container, the model edits the file on its host; the edit is refused with
//! `ROUTING_MISMATCH` naming the container, and the retried edit's approval targets the
//! container. Bulk discovery alone does not trigger it.

use std::time::Duration;

use serde_json::{Value, json};
use vigil_tests::chat::named;
use vigil_tests::docker::{self, Container};
use vigil_tests::model_server::{Protocol, Reply};
use vigil_tests::wait_until;

use super::{Env, TURN, call, ends, last_result};

async fn deny(env: &Env, approval: &Value) {
    let id = approval["approval_id"].as_str().unwrap();
    let (status, _) = env
        .ctrl
        .api
        .post(
            &format!("/api/ai/approvals/{id}/deny"),
            &json!({"reason": "test"}),
        )
        .await;
    assert_eq!(status, 200);
}

async fn an_edit_on_the_host_of_the_mentioned_container_is_a_routing_mismatch(protocol: Protocol) {
    if !docker::require() {
        return;
    }
    let web = Container::run("vigil-route", "route-web", &[]).expect("docker run");
    let env = Env::with(protocol, &[]).await;
    let found = wait_until(Duration::from_secs(30), || async {
        let listed = env.ctrl.api.resources(&web.name).await;
        listed.iter().any(|r| r["name"] == web.name.as_str())
    })
    .await;
    assert!(
        found,
        "the container was never reported\n{}",
        env.agent.log()
    );
    let listed = env.ctrl.api.resources(&web.name).await;
    let container = listed
        .iter()
        .find(|r| r["name"] == web.name.as_str())
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let host = env.host.clone();
    let edit = |target: &str| {
        call(
            "file_edit",
            json!({"action": "write", "resource_id": target, "path": "/tmp/services.yaml", "content": "port: 8080\n"}),
        )
    };

    // Bulk discovery alone: the edit on the host goes to an approval for the host.
    env.model.push(Reply::ToolCalls(vec![call(
        "query",
        json!({"action": "search", "query": web.name}),
    )]));
    env.model.push(Reply::ToolCalls(vec![call(
        "query",
        json!({"action": "get", "resource_id": host}),
    )]));
    env.model.push(Reply::ToolCalls(vec![edit(&host)]));
    env.model.push(Reply::Text("ok".into()));
    let stream = env.chat("edit the services file", None, None).await;
    let needed = stream.wait_for("approval_needed", TURN).await;
    assert!(
        needed["target"].as_str().unwrap().starts_with(&host),
        "{needed}"
    );
    assert!(
        needed["diff"].as_str().unwrap().contains("+port: 8080"),
        "{needed}"
    );
    deny(&env, &needed).await;
    stream.finish(TURN).await;

    // The user names the container; the model edits the host: ROUTING_MISMATCH with the
    // container as the target, and the retried edit's approval is for the container.
    env.model.push(Reply::ToolCalls(vec![call(
        "query",
        json!({"action": "get", "resource_id": host}),
    )]));
    env.model.push(Reply::ToolCalls(vec![edit(&host)]));
    env.model.push(Reply::ToolCalls(vec![edit(&container)]));
    env.model.push(Reply::Text("ok".into()));
    let body = json!({"message": "fix the services file", "mentions": [web.name]});
    let stream = env.ctrl.api.chat(&body).await.unwrap();
    let needed = stream.wait_for("approval_needed", TURN).await;
    for r in env.model.requests() {
        eprintln!("REQ {}", r["messages"]);
    }
    let mismatch = super::tool_results(env.model.requests().last().unwrap())
        .pop()
        .unwrap();
    assert_eq!(mismatch["error"]["code"], "ROUTING_MISMATCH", "{mismatch}");
    assert_eq!(
        mismatch["error"]["details"]["suggested_target"],
        container.as_str()
    );
    assert_eq!(mismatch["error"]["details"]["auto_recoverable"], true);
    assert!(
        needed["target"].as_str().unwrap().starts_with(&container),
        "{needed}"
    );
    deny(&env, &needed).await;
    let events = stream.finish(TURN).await;
    let codes: Vec<Option<String>> = ends(&events).into_iter().map(|e| e.2).collect();
    assert_eq!(codes[1].as_deref(), Some("ROUTING_MISMATCH"), "{events:#?}");
    assert_eq!(named(&events, "approval_resolved")[0]["decision"], "denied");
    assert!(
        last_result(&env.model)["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Command denied")
    );
    let (_, metrics) = env.ctrl.api.get_text("/metrics").await;
    assert!(metrics.contains("gate=\"routing_mismatch\""), "{metrics}");
}

both_protocols!(an_edit_on_the_host_of_the_mentioned_container_is_a_routing_mismatch);
