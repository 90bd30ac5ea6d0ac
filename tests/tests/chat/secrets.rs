//! Secrets stay home (invariant 10): a file full of secrets read by the model; no secret
//! value appears in any model request, chat event, stored message or controller log line.

use serde_json::json;
use vigil_tests::chat::named;
use vigil_tests::model_server::{Protocol, Reply};

use super::{Env, call};

const SECRETS: &[&str] = &[
    "hunter2-Correct-Horse-42",
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ",
    "s3cr3t-pa55-in-url",
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
];

async fn a_file_full_of_secrets_never_leaves_the_host(protocol: Protocol) {
    let env = Env::with(protocol, &[]).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("app.env");
    std::fs::write(
        &file,
        format!(
            "APP_NAME=shop\nDB_PASSWORD={}\nAWS_ACCESS_KEY_ID={}\naws_secret_access_key = {}\n\
             GITHUB_TOKEN={}\nAuthorization: Bearer {}\nDATABASE_URL=postgres://shop:{}@db:5432/shop\n\
             -----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\nPORT=8080\n",
            SECRETS[0], SECRETS[1], SECRETS[2], SECRETS[3], SECRETS[4], SECRETS[5], SECRETS[6]
        ),
    )
    .unwrap();
    let path = file.display().to_string();
    let host = env.host.clone();
    env.model.push(Reply::ToolCalls(vec![call(
        "query",
        json!({"action": "get", "resource_id": host}),
    )]));
    env.model.push(Reply::ToolCalls(vec![call(
        "read",
        json!({"action": "exec", "resource_id": host, "command": format!("cat {path}")}),
    )]));
    env.model.push(Reply::ToolCalls(vec![call(
        "file_edit",
        json!({"action": "read", "resource_id": host, "path": path}),
    )]));
    env.model
        .push(Reply::Text("The app listens on 8080.".into()));
    let stream = env.chat("what port does the app use?", None, None).await;
    let session = stream.wait_for("session", super::TURN).await["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let events = stream.finish(super::TURN).await;
    let output: String = named(&events, "tool_output")
        .iter()
        .map(|e| e["text"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        output.contains("PORT=8080") && output.contains("[REDACTED]"),
        "{output}"
    );
    let (_, messages) = env
        .ctrl
        .api
        .get(&format!("/api/ai/sessions/{session}/messages"))
        .await;
    let places = [
        (
            "model requests",
            serde_json::to_string(&env.model.requests()).unwrap(),
        ),
        ("chat events", serde_json::to_string(&events).unwrap()),
        ("stored messages", messages.to_string()),
        ("controller log", env.ctrl.log()),
    ];
    for (place, text) in &places {
        for secret in SECRETS {
            assert!(!text.contains(secret), "{secret} leaked into the {place}");
        }
    }
    assert!(
        places[0].1.contains("[REDACTED]"),
        "the model saw the redaction markers"
    );
}

both_protocols!(a_file_full_of_secrets_never_leaves_the_host);
