//! The knowledge gate and phantom detection in real turns: a repeated read is answered
//! from what the session already observed (the agent is not asked again), a read after a
//! write does reach the agent, a final answer claiming a change no tool made is replaced
//! and counted, and an answer that quotes real output is kept.

use serde_json::json;
use vigil_tests::chat::{answer, named};
use vigil_tests::model_server::{Protocol, Reply};

use super::{Env, call, ends, last_result};

async fn repeated_reads_come_from_knowledge_and_reads_after_writes_run(protocol: Protocol) {
    let env = Env::with(protocol, &["--control-level", "autonomous"]).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("version");
    std::fs::write(&file, "v1\n").unwrap();
    let host = env.host.clone();
    let read = Reply::ToolCalls(vec![call(
        "read",
        json!({"action": "exec", "resource_id": host, "command": format!("cat {}", file.display())}),
    )]);
    env.model.push(Reply::ToolCalls(vec![call(
        "query",
        json!({"action": "get", "resource_id": host}),
    )]));
    env.model.push(read.clone());
    env.model.push(read.clone());
    env.model.push(Reply::Text("It is v1.".into()));
    let stream = env.chat("which version?", None, Some("autonomous")).await;
    let session = stream.wait_for("session", super::TURN).await["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Change the file behind the session's back: only a real read could see it.
    let first_read_done = vigil_tests::wait_until(super::TURN, || async {
        stream
            .events()
            .iter()
            .filter(|e| e.event == "tool_end")
            .count()
            >= 2
    })
    .await;
    assert!(first_read_done);
    std::fs::write(&file, "v2\n").unwrap();
    stream.finish(super::TURN).await;
    let second = last_result(&env.model);
    assert_eq!(second["data"]["from_knowledge"], true, "{second}");
    assert!(
        second["data"]["facts"].as_str().unwrap().contains("v1"),
        "{second}"
    );
    // A write makes the facts stale, and the verifying read reaches the agent.
    env.model.push(Reply::ToolCalls(vec![call("control", json!({"action": "command", "resource_id": host, "command": format!("echo v3 > {}", file.display())}))]));
    env.model.push(read);
    env.model.push(Reply::Text("Now v3.".into()));
    let events = env
        .chat("upgrade it", Some(&session), Some("autonomous"))
        .await
        .finish(super::TURN)
        .await;
    assert!(ends(&events).iter().all(|e| e.1), "{events:#?}");
    let verify = last_result(&env.model);
    assert_eq!(verify["data"]["stdout"], "v3\n", "{verify}");
}

both_protocols!(repeated_reads_come_from_knowledge_and_reads_after_writes_run);

async fn phantom_claims_are_replaced_and_grounded_answers_kept(protocol: Protocol) {
    let env = Env::with(protocol, &[]).await;
    env.model.push(Reply::Text(
        "I restarted nginx and it is now running fine.".into(),
    ));
    let events = env.turn("nginx is down, fix it", None).await;
    let replaced = named(&events, "content_replaced");
    assert_eq!(replaced.len(), 1, "{events:#?}");
    assert!(
        !answer(&events).contains("I restarted nginx"),
        "{}",
        answer(&events)
    );
    let (_, metrics) = env.ctrl.api.get_text("/metrics").await;
    assert!(metrics.contains("gate=\"phantom\""), "{metrics}");
    // Grounded: the answer quotes what the read returned.
    let host = env.host.clone();
    env.model.push(Reply::ToolCalls(vec![call("read", json!({"action": "exec", "resource_id": host, "command": "echo 'nginx: active (running) since 10:02'"}))]));
    env.model.push(Reply::Text(
        "The logs show nginx: active (running) since 10:02.".into(),
    ));
    let events = env.turn("is nginx up?", None).await;
    assert!(named(&events, "content_replaced").is_empty(), "{events:#?}");
    assert_eq!(
        answer(&events),
        "The logs show nginx: active (running) since 10:02."
    );
}

both_protocols!(phantom_claims_are_replaced_and_grounded_answers_kept);
