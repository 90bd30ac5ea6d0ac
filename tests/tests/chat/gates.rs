//! The gates in a real loop: the FSM (reads never deadlock; write → read → write; no
//! answer before verification), strict resolution, the routing chain of reads, the
//! rewrite of unbounded reads, and parallel reads. Failure modes 1, 2 and 4 of
//! docs/design.md §9.

use std::time::Instant;

use serde_json::json;
use vigil_tests::chat::{answer, named};
use vigil_tests::model_server::{Protocol, Reply, ScriptedModel};

use super::{Env, call, ends, last_result, tool_results};

async fn logs_investigation_stays_reading(protocol: Protocol) {
    let env = Env::start(ScriptedModel::start(protocol).await, protocol, &[]).await;
    let host = env.host.clone();
    env.model.push(Reply::ToolCalls(vec![call(
        "query",
        json!({"action": "get", "resource_id": host}),
    )]));
    for command in [
        "uptime",
        "cat /proc/loadavg",
        "ls /tmp",
        "tail -n 5 /etc/hostname",
        "ps aux",
        "free -m",
    ] {
        env.model.push(Reply::ToolCalls(vec![call(
            "read",
            json!({"action": "exec", "resource_id": host, "command": command}),
        )]));
    }
    env.model.push(Reply::Text("The host is fine.".into()));
    let events = env.turn("why is jellyfin slow?", None).await;
    let ends = ends(&events);
    assert_eq!(ends.len(), 7, "{events:#?}");
    assert!(ends.iter().all(|(_, ok, _)| *ok), "{ends:?}");
    assert_eq!(answer(&events), "The host is fine.");
    let done = &named(&events, "done")[0];
    assert_eq!(
        (done["tool_calls"].as_u64(), done["turns"].as_u64()),
        (Some(7), Some(8))
    );
    assert!(done["input_tokens"].as_u64().unwrap() > 0);
    // The model saw each command's output, fenced in the envelope.
    let last = last_result(&env.model);
    assert_eq!(last["ok"], true);
    assert!(
        last["data"]["stdout"].as_str().unwrap().contains("Mem"),
        "{last}"
    );
    assert!(named(&events, "tool_output").len() >= 6);
}

both_protocols!(logs_investigation_stays_reading);

async fn write_read_cycles(protocol: Protocol) {
    let env = Env::start(
        ScriptedModel::start(protocol).await,
        protocol,
        &["--control-level", "autonomous"],
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cycles");
    let f = file.display().to_string();
    let host = env.host.clone();
    let write = |text: &str| {
        Reply::ToolCalls(vec![call(
            "control",
            json!({"action": "command", "resource_id": host, "command": format!("echo {text} >> {f}")}),
        )])
    };
    let read = Reply::ToolCalls(vec![call(
        "read",
        json!({"action": "exec", "resource_id": host, "command": format!("cat {f}")}),
    )]);
    env.model.push(Reply::ToolCalls(vec![call(
        "query",
        json!({"action": "search", "query": host}),
    )]));
    env.model.push(write("one"));
    env.model.push(write("two")); // before a read: FSM_BLOCKED
    env.model.push(read.clone());
    env.model
        .push(Reply::Text("The first change is in place.".into()));
    let stream = env
        .chat("append to the file", None, Some("autonomous"))
        .await;
    let session = stream.wait_for("session", super::TURN).await["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let events = stream.finish(super::TURN).await;
    let codes: Vec<Option<String>> = ends(&events).into_iter().map(|e| e.2).collect();
    assert_eq!(
        codes,
        [None, None, Some("FSM_BLOCKED".into()), None],
        "{events:#?}"
    );
    // The call after a write verified by a read answers in text: no tools offered.
    let after_verify = env.model.requests()[4].clone();
    let offered = match protocol {
        Protocol::OpenAi => after_verify.get("tools").is_some_and(|t| !t.is_null()),
        Protocol::Anthropic => after_verify["tool_choice"]["type"] != "none",
    };
    assert!(!offered, "{after_verify}");
    // Write → read → answer again in the same session.
    env.model.push(write("three"));
    env.model.push(read);
    env.model
        .push(Reply::Text("Both changes are in place.".into()));
    let events = env
        .chat("and another line", Some(&session), Some("autonomous"))
        .await
        .finish(super::TURN)
        .await;
    let codes: Vec<Option<String>> = ends(&events).into_iter().map(|e| e.2).collect();
    assert_eq!(codes, [None, None], "{events:#?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "one\nthree\n");
    assert_eq!(answer(&events), "Both changes are in place.");
}

both_protocols!(write_read_cycles);

async fn an_answer_right_after_a_write_is_refused_until_a_read_verifies_it(protocol: Protocol) {
    let env = Env::with(protocol, &["--control-level", "autonomous"]).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("verified").display().to_string();
    let host = env.host.clone();
    env.model.push(Reply::ToolCalls(vec![call(
        "query",
        json!({"action": "get", "resource_id": host}),
    )]));
    env.model.push(Reply::ToolCalls(vec![call(
        "control",
        json!({"action": "command", "resource_id": host, "command": format!("touch {file}")}),
    )]));
    env.model.push(Reply::Text("Done, the file exists.".into()));
    env.model.push(Reply::ToolCalls(vec![call(
        "read",
        json!({"action": "exec", "resource_id": host, "command": format!("ls -l {file}")}),
    )]));
    env.model
        .push(Reply::Text("Verified: the file exists.".into()));
    let events = env.turn("create the file", Some("autonomous")).await;
    let replaced = named(&events, "content_replaced");
    assert_eq!(replaced.len(), 1, "{events:#?}");
    assert!(replaced[0]["reason"].as_str().unwrap().contains("verified"));
    assert_eq!(answer(&events), "Verified: the file exists.");
    let requests = env.model.requests();
    let demand = requests[3].to_string();
    assert!(
        demand.contains("Before answering, verify the last change"),
        "{demand}"
    );
    assert!(demand.contains(&format!("touch {file}")));
}

both_protocols!(an_answer_right_after_a_write_is_refused_until_a_read_verifies_it);

async fn a_write_to_an_undiscovered_resource_is_strict_resolution_until_discovered(
    protocol: Protocol,
) {
    let env = Env::with(protocol, &["--control-level", "autonomous"]).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("strict").display().to_string();
    let host = env.host.clone();
    let write = Reply::ToolCalls(vec![call(
        "control",
        json!({"action": "command", "resource_id": host, "command": format!("touch {file}")}),
    )]);
    env.model.push(write.clone());
    env.model.push(Reply::ToolCalls(vec![call(
        "query",
        json!({"action": "search", "query": host}),
    )]));
    env.model.push(write);
    env.model.push(Reply::ToolCalls(vec![call(
        "read",
        json!({"action": "exec", "resource_id": host, "command": format!("ls {file}")}),
    )]));
    env.model.push(Reply::Text("Created.".into()));
    let events = env.turn("create the file", Some("autonomous")).await;
    let codes: Vec<Option<String>> = ends(&events).into_iter().map(|e| e.2).collect();
    assert_eq!(
        codes,
        [Some("STRICT_RESOLUTION".into()), None, None, None],
        "{events:#?}"
    );
    let first = &tool_results(&env.model.requests()[1])[0];
    assert_eq!(first["error"]["blocked"], true);
    assert!(
        first["error"]["details"]["recovery_hint"]
            .as_str()
            .unwrap()
            .contains("query")
    );
    assert!(std::path::Path::new(&file).exists());
}

both_protocols!(a_write_to_an_undiscovered_resource_is_strict_resolution_until_discovered);

async fn an_unbounded_read_is_rewritten_once_and_succeeds(protocol: Protocol) {
    let env = Env::with(protocol, &[]).await;
    let host = env.host.clone();
    env.model.push(Reply::ToolCalls(vec![call(
        "read",
        json!({"action": "exec", "resource_id": host, "command": "tail -f /etc/hostname"}),
    )]));
    env.model.push(Reply::Text("ok".into()));
    let events = env.turn("follow the hostname file", None).await;
    assert_eq!(ends(&events), [("read".into(), true, None)], "{events:#?}");
    let result = last_result(&env.model);
    assert_eq!(
        result["meta"]["auto_recovered"]["rewrite"], "tail -n 200 /etc/hostname",
        "{result}"
    );
    assert_eq!(result["data"]["command"], "tail -n 200 /etc/hostname");
    let (_, metrics) = env.ctrl.api.get_text("/metrics").await;
    assert!(
        metrics.contains("vigil_assistant_auto_recovery_total{outcome=\"success\"} 1"),
        "{metrics}"
    );
}

both_protocols!(an_unbounded_read_is_rewritten_once_and_succeeds);

async fn four_parallel_reads_take_about_as_long_as_one(protocol: Protocol) {
    let env = Env::with(protocol, &[]).await;
    let host = env.host.clone();
    let reads: Vec<_> = (0..4)
        .map(|i| call("read", json!({"action": "exec", "resource_id": host, "command": format!("sleep 2; echo read-{i}")})))
        .collect();
    env.model.push(Reply::ToolCalls(reads));
    env.model.push(Reply::Text("done".into()));
    let started = Instant::now();
    let events = env.turn("four reads", None).await;
    let elapsed = started.elapsed();
    assert!(ends(&events).iter().all(|e| e.1), "{events:#?}");
    // Serially this takes 8 s; in parallel a little over 2 s.
    assert!(
        elapsed.as_secs_f64() < 6.0,
        "four 2-second reads took {elapsed:?}"
    );
    // Results come back in the model's order.
    let results = tool_results(env.model.requests().last().unwrap());
    let outputs: Vec<&str> = results
        .iter()
        .map(|r| r["data"]["stdout"].as_str().unwrap().trim())
        .collect();
    assert_eq!(outputs, ["read-0", "read-1", "read-2", "read-3"]);
}

both_protocols!(four_parallel_reads_take_about_as_long_as_one);

#[tokio::test(flavor = "multi_thread")]
async fn prefetch_resolves_mentions_before_the_first_model_call() {
    let env = Env::openai(&[]).await;
    let hostname = env.ctrl.api.resource(&env.host).await.unwrap()["name"]
        .as_str()
        .unwrap()
        .to_owned();
    env.model.push(Reply::ToolCalls(vec![call(
        "control",
        json!({"action": "command", "resource_id": hostname, "command": "true"}),
    )]));
    env.model.push(Reply::Text("ok".into()));
    let message = format!("why is @{hostname} slow, and what about @nosuchthing?");
    let stream = env.chat(&message, None, None).await;
    let needed = stream.wait_for("approval_needed", super::TURN).await;
    let system = env.model.requests()[0]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        system.contains(&format!("{} (host \"{hostname}\", running)", env.host)),
        "{system}"
    );
    assert!(system.contains("commands run there via direct"), "{system}");
    assert!(
        system.contains("@nosuchthing matches no known resource"),
        "{system}"
    );
    // The mention resolved the host for this session: the write passed strict resolution.
    assert_eq!(needed["command"], "true");
    let id = needed["approval_id"].as_str().unwrap();
    env.ctrl
        .api
        .post(&format!("/api/ai/approvals/{id}/deny"), &json!({}))
        .await;
    stream.finish(super::TURN).await;
}
