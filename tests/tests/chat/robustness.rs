//! Bad input and failures: malformed and oversized requests, unknown fields, a tool call
//! with broken JSON, a model that dies mid-stream, a second turn while one runs, no model
//! at all (direct mode still works), and unknown tools.

use std::time::Duration;

use serde_json::json;
use vigil_tests::chat::{ChatHost, answer, named};
use vigil_tests::model_server::{Protocol, Reply, ScriptedModel};

use super::{Env, TURN, call, ends, last_result};

#[tokio::test(flavor = "multi_thread")]
async fn malformed_unknown_and_oversized_requests_are_clear_errors() {
    let env = Env::openai(&[]).await;
    let token = env.ctrl.api.token().to_owned();
    let api = &env.ctrl.api;
    let (status, body) = api
        .raw_request(
            reqwest::Method::POST,
            "/api/ai/chat",
            "{\"message\": ",
            Some(&token),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (400, Some("INVALID_INPUT")),
        "{body}"
    );
    let (status, body) = api
        .raw_request(
            reqwest::Method::POST,
            "/api/ai/chat",
            r#"{"message":"hi","temperature":2}"#,
            Some(&token),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("temperature"),
        "{body}"
    );
    let (status, body) = api
        .chat(&json!({"message": "x".repeat(40 * 1024)}))
        .await
        .unwrap_err();
    assert_eq!(status, 413, "{body}");
    let (status, _) = api.chat(&json!({"message": "   "})).await.unwrap_err();
    assert_eq!(status, 400);
    let (status, body) = api
        .chat(&json!({"message": "hi", "session_id": "nope"}))
        .await
        .unwrap_err();
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("NOT_FOUND"))
    );
    let (status, _) = api
        .chat(&json!({"message": "hi", "control_level": "yolo"}))
        .await
        .unwrap_err();
    assert_eq!(status, 400);
    let (status, _) = api
        .raw_request(
            reqwest::Method::POST,
            "/api/ai/chat",
            r#"{"message":"hi"}"#,
            None,
        )
        .await;
    assert_eq!(status, 401);
    assert_eq!(
        env.model.request_count(),
        0,
        "no bad request reached the model"
    );
}

async fn broken_tool_arguments_and_unknown_tools_answer_invalid_input_and_the_turn_goes_on(
    protocol: Protocol,
) {
    let env = Env::with(protocol, &[]).await;
    env.model.push(Reply::RawToolCall {
        name: "read".into(),
        arguments: r#"{"action":"exec","resource_id":"#.into(),
    });
    env.model.push(Reply::ToolCalls(vec![call(
        "shell",
        json!({"action": "exec", "command": "rm -rf /"}),
    )]));
    env.model.push(Reply::ToolCalls(vec![call(
        "read",
        json!({"action": "exec", "resource_id": env.host, "command": "uptime", "sudo": true}),
    )]));
    env.model.push(Reply::Text("Sorry.".into()));
    let events = env.turn("hello", None).await;
    let codes: Vec<_> = ends(&events).into_iter().map(|e| e.2).collect();
    assert_eq!(
        codes,
        vec![Some("INVALID_INPUT".to_owned()); 3],
        "{events:#?}"
    );
    assert_eq!(answer(&events), "Sorry.");
    let result = last_result(&env.model);
    assert!(
        result["error"]["message"]
            .as_str()
            .unwrap()
            .contains("sudo"),
        "{result}"
    );
}

both_protocols!(broken_tool_arguments_and_unknown_tools_answer_invalid_input_and_the_turn_goes_on);

async fn model_dies_mid_stream(protocol: Protocol) {
    let env = Env::start(ScriptedModel::start(protocol).await, protocol, &[]).await;
    env.model.push(Reply::DieMidStream("Let me look".into()));
    let events = env.turn("hello", None).await;
    let errors = named(&events, "error");
    assert_eq!(errors.len(), 1, "{events:#?}");
    assert_eq!(errors[0]["code"], "MODEL_ERROR");
    // The session is usable afterwards.
    env.model.push(Reply::Text("back".into()));
    let events = env.turn("again", None).await;
    assert_eq!(answer(&events), "back");
}

both_protocols!(model_dies_mid_stream);

#[tokio::test(flavor = "multi_thread")]
async fn one_turn_at_a_time_per_session_and_sessions_are_listed_and_deleted() {
    let env = Env::openai(&[]).await;
    env.model.push(Reply::Delay(
        Duration::from_secs(2),
        Box::new(Reply::Text("slow".into())),
    ));
    let first = env.chat("first", None, None).await;
    let session = first.wait_for("session", TURN).await["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, body) = env
        .ctrl
        .api
        .chat(&json!({"message": "second", "session_id": session}))
        .await
        .unwrap_err();
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("CONFLICT")),
        "{body}"
    );
    let events = first.finish(TURN).await;
    assert_eq!(answer(&events), "slow");
    let (_, sessions) = env.ctrl.api.get("/api/ai/sessions").await;
    assert!(
        sessions
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["id"] == session.as_str())
    );
    let (_, messages) = env
        .ctrl
        .api
        .get(&format!("/api/ai/sessions/{session}/messages"))
        .await;
    let roles: Vec<&str> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant"]);
    assert_eq!(
        env.ctrl
            .api
            .delete(&format!("/api/ai/sessions/{session}"))
            .await,
        204
    );
    let (status, _) = env
        .ctrl
        .api
        .get(&format!("/api/ai/sessions/{session}"))
        .await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_model_chat_says_how_to_configure_one_and_direct_mode_works() {
    let chat_host = ChatHost::start(Vec::new()).await;
    let hostname = chat_host.hostname().await;
    let ctrl = &chat_host.ctrl;
    let events = ctrl
        .api
        .chat(&json!({"message": "why is jellyfin slow?"}))
        .await
        .unwrap()
        .finish(TURN)
        .await;
    let error = named(&events, "error")[0].clone();
    assert_eq!(error["code"], "MODEL_NOT_CONFIGURED");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("VIGIL_LLM_PROVIDER"),
        "{error}"
    );
    let events = ctrl
        .api
        .chat(&json!({"message": format!("/read @{hostname} uptime")}))
        .await
        .unwrap()
        .finish(TURN)
        .await;
    assert_eq!(
        ends(&events),
        [("read".to_owned(), true, None)],
        "{events:#?}"
    );
    let output: String = named(&events, "tool_output")
        .iter()
        .map(|o| o["text"].as_str().unwrap().to_owned())
        .collect();
    assert!(output.contains("load average"), "{output}");
    let events = ctrl
        .api
        .chat(&json!({"message": format!("/read @{hostname} rm -rf /tmp/nothing")}))
        .await
        .unwrap()
        .finish(TURN)
        .await;
    assert_eq!(ends(&events)[0].2.as_deref(), Some("POLICY_BLOCKED"));
    let events = ctrl
        .api
        .chat(&json!({"message": "/frobnicate"}))
        .await
        .unwrap()
        .finish(TURN)
        .await;
    assert!(answer(&events).contains("Direct mode"), "{events:#?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_viewer_chats_only_read_only_and_cannot_decide_approvals() {
    let env = Env::openai(&[]).await;
    let (code, out, err) = env.ctrl.cli(&[
        "apitoken", "create", "--role", "viewer", "--name", "watcher",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let viewer = vigil_tests::Api::new(
        env.ctrl.api.base().to_owned(),
        out.lines().last().unwrap().trim().to_owned(),
    );
    let (status, body) = viewer
        .chat(&json!({"message": "hi", "control_level": "controlled"}))
        .await
        .unwrap_err();
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (403, Some("FORBIDDEN")),
        "{body}"
    );
    env.model.push(Reply::ToolCalls(vec![call(
        "query",
        json!({"action": "get", "resource_id": env.host}),
    )]));
    env.model.push(Reply::ToolCalls(vec![call(
        "control",
        json!({"action": "command", "resource_id": env.host, "command": "touch /tmp/never"}),
    )]));
    env.model
        .push(Reply::Text("I cannot change anything here.".into()));
    let events = viewer
        .chat(&json!({"message": "touch it"}))
        .await
        .unwrap()
        .finish(TURN)
        .await;
    assert_eq!(named(&events, "session")[0]["control_level"], "read_only");
    assert_eq!(
        ends(&events)[1].2.as_deref(),
        Some("ACTION_NOT_ALLOWED"),
        "{events:#?}"
    );
    assert!(named(&events, "approval_needed").is_empty());
    let (status, _) = env.ctrl.api.get("/api/ai/approvals").await;
    assert_eq!(status, 200);
    let (status, _) = viewer
        .post("/api/ai/approvals/any/approve", &json!({}))
        .await;
    assert_eq!(status, 403, "approving needs the operator role");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_past_its_token_budget_stops_with_a_clear_message() {
    let env = Env::openai(&["--session-token-budget", "5"]).await;
    env.model.push(Reply::ToolCalls(vec![call(
        "query",
        json!({"action": "get", "resource_id": env.host}),
    )]));
    env.model.push(Reply::Text("never sent".into()));
    let events = env.turn("hello", None).await;
    let errors = named(&events, "error");
    assert_eq!(errors.len(), 1, "{events:#?}");
    assert_eq!(errors[0]["code"], "BUDGET_EXCEEDED");
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("start a new session")
    );
    assert_eq!(
        env.model.request_count(),
        1,
        "the loop stopped before a second model call"
    );
    let done = &named(&events, "done")[0];
    assert!(done["input_tokens"].as_u64().unwrap() + done["output_tokens"].as_u64().unwrap() >= 5);
}
