//! Vigil as an OpenAI-compatible model: the official `openai` Python package (installed
//! from PyPI into a virtual environment this test creates) lists models and runs chat
//! completions, streaming and not, against a real controller whose model is the scripted
//! server. Skips without python3 unless `CI` is set.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::print_stderr)]

use std::process::Command;

use serde_json::{Value, json};
use vigil_tests::chat::{ChatHost, scripted_llm_args};
use vigil_tests::model_server::{Protocol, Reply, ScriptedModel};

#[tokio::test(flavor = "multi_thread")]
async fn the_official_openai_client_lists_models_and_chats_streaming_and_not() {
    let Some(python) =
        tokio::task::spawn_blocking(|| vigil_tests::python::venv("openai", &["openai>=1.40,<3"]))
            .await
            .unwrap()
    else {
        return;
    };
    let model = ScriptedModel::start(Protocol::OpenAi).await;
    let ChatHost {
        ctrl,
        host,
        agent: _agent,
    } = ChatHost::start(scripted_llm_args(&model, Protocol::OpenAi)).await;
    model.push(Reply::Text("Hello from Vigil.".into()));
    // A local model writes its call into the text: the call runs, and its markup never
    // reaches a client that cannot take streamed text back.
    let args = json!({"action": "exec", "resource_id": host, "command": "uptime"});
    model.push(Reply::Text(format!(
        "Let me look.\n<tool_call>{{\"name\": \"read\", \"arguments\": {args}}}</tool_call>"
    )));
    model.push(Reply::Text("It is up.".into()));
    let base = format!("{}/v1", ctrl.api.base());
    let token = ctrl.api.token().to_owned();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/fixtures/openai/client.py"
            ))
            .env("BASE", base)
            .env("TOKEN", token)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let checks: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let check = |name: &str| checks.iter().find(|c| c["check"] == name).unwrap()["value"].clone();
    assert_eq!(check("models"), json!(["vigil"]));
    assert_eq!(check("plain"), "Hello from Vigil.");
    assert!(check("plain_usage").as_u64().unwrap() > 0);
    let stream = check("stream");
    let stream = stream.as_str().unwrap();
    assert!(stream.contains("read exec `uptime`"), "{stream}");
    assert!(stream.starts_with("Let me look."), "{stream}");
    assert!(
        !stream.contains("tool_call") && !stream.contains("\"arguments\""),
        "the call's markup reached the client: {stream}"
    );
    assert!(stream.ends_with("It is up."), "{stream}");
    assert!(
        !stream.contains("refused or failed"),
        "the read ran: {stream}"
    );
    assert_eq!(check("wrong_token"), 401);
    // The stateless client's earlier messages reached the model.
    let second = model.requests()[1].to_string();
    assert!(second.contains("hello again"), "{second}");
}
