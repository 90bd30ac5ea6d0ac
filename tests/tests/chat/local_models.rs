//! Small local models: tool calls written into the text (three styles) run as tool calls,
//! and reasoning blocks and vendor artifacts never reach the user or the store.

use serde_json::json;
use vigil_tests::chat::{answer, named};
use vigil_tests::model_server::{Protocol, Reply};

use super::{Env, ends};

async fn tool_calls_written_as_text_run_and_reasoning_is_hidden(protocol: Protocol) {
    let env = Env::with(protocol, &[]).await;
    let host = env.host.clone();
    let args = |command: &str| {
        json!({"action": "exec", "resource_id": host, "command": command}).to_string()
    };
    env.model.push(Reply::Text(format!(
        "<think>The user wants uptime. I should call read.</think>Let me check.\n<tool_call>{{\"name\": \"read\", \"arguments\": {}}}</tool_call>",
        args("uptime")
    )));
    env.model.push(Reply::Text(format!(
        "```json\n{{\"name\": \"read\", \"arguments\": {}}}\n```",
        args("cat /proc/loadavg")
    )));
    env.model.push(Reply::Text(format!(
        "[TOOL_CALLS] [{{\"name\": \"read\", \"arguments\": {}}}]",
        args("hostname")
    )));
    env.model.push(Reply::Text(
        "<think>all good</think>The host is up.<｜end▁of▁sentence｜>".into(),
    ));
    let stream = env.chat("is the host up?", None, None).await;
    let session = stream.wait_for("session", super::TURN).await["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let events = stream.finish(super::TURN).await;
    assert_eq!(
        ends(&events)
            .iter()
            .map(|e| (e.0.as_str(), e.1))
            .collect::<Vec<_>>(),
        [("read", true); 3],
        "{events:#?}"
    );
    let commands: Vec<String> = named(&events, "tool_start")
        .iter()
        .map(|e| e["input"]["command"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(commands, ["uptime", "cat /proc/loadavg", "hostname"]);
    assert_eq!(answer(&events), "The host is up.");
    let (_, messages) = env
        .ctrl
        .api
        .get(&format!("/api/ai/sessions/{session}/messages"))
        .await;
    // The streamed text as a client puts it together (deltas split tags anywhere).
    let streamed: String = named(&events, "content")
        .iter()
        .map(|d| d["text"].as_str().unwrap_or_default().to_owned())
        .collect();
    let everything = format!(
        "{streamed}{}{}",
        serde_json::to_string(&events).unwrap(),
        messages
    );
    for artifact in [
        "<think>",
        "all good",
        "I should call read",
        "end▁of▁sentence",
        // The call's markup is held back from the stream, not shown and withdrawn.
        "<tool_call>",
        "</tool_call>",
    ] {
        assert!(
            !everything.contains(artifact),
            "{artifact:?} reached the user or the store"
        );
    }
}

both_protocols!(tool_calls_written_as_text_run_and_reasoning_is_hidden);
