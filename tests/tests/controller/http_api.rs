//! The HTTP API's refusals over real HTTP: 401 without the admin token, 400 for malformed,
//! unknown-field, empty and oversized bodies, 403 POLICY_BLOCKED with the classifier's
//! reasons, 422 UNBOUNDED_COMMAND with the rewrite, 404 for unknown agents and routes,
//! 503 for an enrolled agent that is not connected.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use vigil_tests::in_process::TestController;
use vigil_tests::in_process::clients::enroll;

async fn call(
    ctrl: &TestController,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<String>,
) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .request(method, format!("{}{path}", ctrl.http_url()))
        .header("content-type", "application/json")
        .header("accept", "application/json");
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.body(body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

fn code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_api_refuses_what_it_must() {
    let ctrl = TestController::start(false, Duration::from_secs(10)).await;
    let token = Some(ctrl.admin_token.as_str());
    let exec = |body: Value| Some(body.to_string());
    let unknown = vigil_shared::ids::AgentId::new_random().to_string();

    let (status, body) = call(&ctrl, Method::GET, "/healthz", None, None).await;
    assert_eq!((status, body), (200, json!({"status": "ok"})));

    let (status, body) = call(&ctrl, Method::GET, "/api/agents", None, None).await;
    assert_eq!((status, code(&body)), (401, "UNAUTHENTICATED"));
    let (status, _) = call(&ctrl, Method::GET, "/api/agents", Some("vat_wrong"), None).await;
    assert_eq!(status, 401);
    let (status, body) = call(&ctrl, Method::GET, "/api/agents", token, None).await;
    assert_eq!((status, body), (200, json!([])));

    let (status, body) = call(
        &ctrl,
        Method::POST,
        "/api/exec",
        token,
        Some("{not json".into()),
    )
    .await;
    assert_eq!((status, code(&body)), (400, "INVALID_INPUT"));
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("invalid JSON"),
        "{body}"
    );
    let (status, body) = call(
        &ctrl,
        Method::POST,
        "/api/exec",
        token,
        exec(json!({"agent": unknown, "command": "uptime", "sudo": true})),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown field `sudo`"),
        "{body}"
    );
    let (status, _) = call(&ctrl, Method::POST, "/api/exec", token, Some(String::new())).await;
    assert_eq!(status, 400);
    let (status, _) = call(
        &ctrl,
        Method::POST,
        "/api/exec",
        token,
        exec(json!({"agent": unknown})),
    )
    .await;
    assert_eq!(status, 400, "missing command");
    let huge = json!({"agent": unknown, "command": "x".repeat(70 * 1024)});
    let (status, body) = call(&ctrl, Method::POST, "/api/exec", token, exec(huge)).await;
    assert_eq!((status, code(&body)), (413, "PAYLOAD_TOO_LARGE"), "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("larger than"),
        "{body}"
    );
    let (status, _) = call(
        &ctrl,
        Method::POST,
        "/api/exec",
        token,
        exec(json!({"agent": unknown, "command": "uptime", "timeout_s": 301})),
    )
    .await;
    assert_eq!(status, 400, "timeout over 300");

    let (status, body) = call(
        &ctrl,
        Method::POST,
        "/api/exec",
        token,
        exec(json!({"agent": unknown, "command": "rm -rf /tmp/x"})),
    )
    .await;
    assert_eq!((status, code(&body)), (403, "POLICY_BLOCKED"));
    let reasons = body["error"]["details"]["reasons"].as_array().unwrap();
    assert!(
        reasons.iter().any(|r| r.as_str().unwrap().contains("rm")),
        "{body}"
    );

    let (status, body) = call(
        &ctrl,
        Method::POST,
        "/api/exec",
        token,
        exec(json!({"agent": unknown, "command": "journalctl -f"})),
    )
    .await;
    assert_eq!((status, code(&body)), (422, "UNBOUNDED_COMMAND"));
    assert!(
        body["error"]["details"]["rewrite"]
            .as_str()
            .unwrap()
            .starts_with("journalctl -n 200"),
        "{body}"
    );

    let (status, body) = call(
        &ctrl,
        Method::POST,
        "/api/exec",
        token,
        exec(json!({"agent": unknown, "command": "uptime"})),
    )
    .await;
    assert_eq!((status, code(&body)), (404, "NOT_FOUND"));
    let (status, _) = call(
        &ctrl,
        Method::POST,
        "/api/exec",
        token,
        exec(json!({"agent": "not-a-uuid", "command": "uptime"})),
    )
    .await;
    assert_eq!(status, 404);
    let (status, _) = call(
        &ctrl,
        Method::POST,
        &format!("/api/agents/{unknown}/revoke"),
        token,
        None,
    )
    .await;
    assert_eq!(status, 404);

    let join = ctrl.token(1, 3600, &[]).await;
    let offline = enroll(&ctrl, &join, "sleepy", "").await.unwrap();
    let (status, body) = call(
        &ctrl,
        Method::POST,
        "/api/exec",
        token,
        exec(json!({"agent": offline.id, "command": "uptime"})),
    )
    .await;
    assert_eq!((status, code(&body)), (503, "AGENT_OFFLINE"));

    let (status, _) = call(
        &ctrl,
        Method::POST,
        "/api/raw-exec",
        token,
        exec(json!({"agent": offline.id, "mode": "read", "command": "id"})),
    )
    .await;
    assert_eq!(status, 404, "raw-exec exists only with --test-raw-exec");
    let (status, body) = call(&ctrl, Method::GET, "/nope", token, None).await;
    assert_eq!((status, code(&body)), (404, "NOT_FOUND"));
    ctrl.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn raw_exec_validates_its_body_when_enabled() {
    let ctrl = TestController::start(true, Duration::from_secs(10)).await;
    let token = Some(ctrl.admin_token.as_str());
    let join = ctrl.token(1, 3600, &[]).await;
    let offline = enroll(&ctrl, &join, "sleepy", "").await.unwrap();
    let body = |mode: &str| {
        Some(json!({"agent": offline.id, "mode": mode, "command": "rm -rf /"}).to_string())
    };
    let (status, body_json) = call(
        &ctrl,
        Method::POST,
        "/api/raw-exec",
        token,
        body("sideways"),
    )
    .await;
    assert_eq!((status, code(&body_json)), (400, "INVALID_INPUT"));
    // Not classified: a write reaches the dispatch step (and the agent is offline).
    let (status, body_json) =
        call(&ctrl, Method::POST, "/api/raw-exec", token, body("write")).await;
    assert_eq!((status, code(&body_json)), (503, "AGENT_OFFLINE"));
    let bad_grant = json!({"agent": offline.id, "mode": "write", "command": "true", "grant": {
        "approval_id": "a", "agent_id": offline.id, "target": "host", "command_b64": "!!",
        "issued_at": 0, "expires_at": 1, "nonce_b64": "", "signature_b64": ""}});
    let (status, _) = call(
        &ctrl,
        Method::POST,
        "/api/raw-exec",
        token,
        Some(bad_grant.to_string()),
    )
    .await;
    assert_eq!(status, 400);
    ctrl.stop().await;
}
