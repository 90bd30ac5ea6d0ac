//! A 40-call investigation: old tool results are compacted, so the model's requests stay
//! small, and the last model call is forced to answer in text. Prints the bytes sent with
//! and without compaction (the figure in the notes).

use std::collections::HashMap;

use serde_json::{Value, json};
use vigil_tests::chat::answer;
use vigil_tests::model_server::Reply;

use super::{Env, call};

/// The length a request would have had with every tool result whole.
fn uncompacted(request: &Value, full: &HashMap<String, String>) -> usize {
    let mut grown = request.clone();
    for message in grown["messages"].as_array_mut().into_iter().flatten() {
        if message["role"] == "tool"
            && let Some(content) = message["tool_call_id"].as_str().and_then(|id| full.get(id))
        {
            message["content"] = json!(content);
        }
    }
    grown.to_string().len()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forty_call_investigation_stays_small_and_ends_with_a_summary() {
    let env = Env::openai(&[]).await;
    let host = env.host.clone();
    for i in 0..19u32 {
        let read = |n: u32| {
            call(
                "read",
                json!({"action": "exec", "resource_id": host, "command": format!("seq 1 {n}")}),
            )
        };
        let mut reads = vec![read(1500 + 3 * i), read(1501 + 3 * i)];
        if i < 2 {
            reads.push(read(1502 + 3 * i));
        }
        env.model.push(Reply::ToolCalls(reads));
    }
    env.model
        .push(Reply::Text("Summary: nothing unusual in 40 reads.".into()));
    let stream = env.chat("investigate everything", None, None).await;
    let session = stream.wait_for("session", super::TURN).await["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let events = stream.finish(super::TURN).await;
    assert_eq!(answer(&events), "Summary: nothing unusual in 40 reads.");
    let done = vigil_tests::chat::named(&events, "done")[0].clone();
    assert_eq!(
        (done["turns"].as_u64(), done["tool_calls"].as_u64()),
        (Some(20), Some(40)),
        "{done}"
    );
    let requests = env.model.requests();
    assert_eq!(requests.len(), 20);
    assert!(
        requests[19].get("tools").is_none_or(Value::is_null),
        "the last call is text-only"
    );
    let last = requests[19].to_string();
    assert!(last.contains("Wrap up"), "wrap-up nudges were sent");
    // Bytes sent, with compaction and as they would have been without it.
    let (_, messages) = env
        .ctrl
        .api
        .get(&format!("/api/ai/sessions/{session}/messages"))
        .await;
    let full: HashMap<String, String> = messages
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["data"]["tool_call_id"].as_str().unwrap().to_owned(),
                m["content"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let sent: usize = requests.iter().map(|r| r.to_string().len()).sum();
    let without: usize = requests.iter().map(|r| uncompacted(r, &full)).sum();
    let last_without = uncompacted(&requests[19], &full);
    eprintln!(
        "40-call investigation: {sent} bytes sent over 20 requests (without compaction {without}); \
         last request {} bytes (without {last_without})",
        last.len()
    );
    assert!(
        last.len() * 3 < last_without,
        "the last request is compacted: {} vs {last_without}",
        last.len()
    );
    assert!(
        sent * 2 < without,
        "compaction at least halves the bytes sent: {sent} vs {without}"
    );
}
