//! The interactive chat in a pseudo-terminal.

use serde_json::json;
use vigil_tests::model_server::Reply;
use vigil_tests::processes_matching;

use super::{Env, call, control, eventually, verify};

#[tokio::test(flavor = "multi_thread")]
async fn a_question_streams_its_answer_with_a_compact_tool_line() {
    let env = Env::start().await;
    let host = env.resource().to_owned();
    env.model.push(Reply::ToolCalls(vec![call(
        "read",
        json!({"action": "exec", "resource_id": host, "command": "uptime"}),
    )]));
    env.model
        .push(Reply::Text("The host has been up for a while.".into()));
    let mut term = env.terminal().await;
    term.type_line(&format!("how long has @{host} been up?"));
    term.wait_for("The host has been up for a while.").await;
    let text = term.wait_for_n("you> ", 2).await;
    assert!(
        text.contains(&format!("⚙ read exec {host} `uptime`")),
        "{text}"
    );
    assert!(text.contains("✓ read ("), "{text}");
    assert!(
        text.contains("  │ ") && text.contains("load average"),
        "{text}"
    );
    assert!(term.coloured(), "a terminal gets colours");
    assert!(!text.contains("error:"), "{text}");
    // The second message continues the same session.
    env.model.push(Reply::Text("Still up.".into()));
    term.type_line("and now?");
    term.wait_for("Still up.").await;
    let session = env.only_session().await;
    assert!(term.text().contains(&format!("(session {session})")));
    term.type_line("/sessions");
    term.wait_for(&format!("*{session}")).await;
    // /new forgets the session; /resume brings it back with its last messages.
    term.type_line("/new");
    term.wait_for("the next message starts a new session").await;
    term.type_line(&format!("/resume {session}"));
    term.wait_for(&format!("(resumed session {session}")).await;
    term.wait_for_n("Still up.", 2).await;
    term.type_line("/resume no-such-session");
    term.wait_for("error: NOT_FOUND: ").await;
    term.type_line("/quit");
    assert_eq!(term.exit_code().await, 0, "{}", term.text());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_answered_yes_runs_the_write() {
    let env = Env::start().await;
    let host = env.resource().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("approved-in-the-terminal");
    let command = format!("touch {}", file.display());
    env.model
        .push(Reply::ToolCalls(vec![control(&host, &command)]));
    env.model.push(Reply::ToolCalls(vec![verify(&host, &file)]));
    env.model.push(Reply::Text("Created the file.".into()));
    let mut term = env.terminal().await;
    term.type_line(&format!("create the file on @{host}"));
    let text = term.wait_for("approve? [y/N/reason]").await;
    assert!(
        text.contains(&format!("⚠ approval needed: {command}")),
        "{text}"
    );
    assert!(text.contains(&format!("target: {host}")), "{text}");
    assert!(text.contains("risk: "), "{text}");
    assert!(!file.exists(), "nothing runs before the person answers");
    term.type_line("y");
    term.wait_for("Created the file.").await;
    let text = term.wait_for_n("you> ", 2).await;
    assert!(file.exists(), "the approved write ran\n{text}");
    assert!(text.contains("✓ approved"), "{text}");
    assert!(text.contains("✓ control ("), "{text}");
    assert!(!text.contains("error:"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_answered_with_a_reason_denies_it_and_tells_the_model() {
    let env = Env::start().await;
    let host = env.resource().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("denied-in-the-terminal");
    env.model.push(Reply::ToolCalls(vec![control(
        &host,
        &format!("touch {}", file.display()),
    )]));
    env.model
        .push(Reply::Text("Understood, nothing changed.".into()));
    let mut term = env.terminal().await;
    term.type_line(&format!("create the file on @{host}"));
    term.wait_for("approve? [y/N/reason]").await;
    term.type_line("not during the backup window");
    term.wait_for("Understood, nothing changed.").await;
    let text = term.wait_for_n("you> ", 2).await;
    assert!(
        text.contains("✗ denied: not during the backup window"),
        "{text}"
    );
    let last = env.model.requests().last().unwrap().to_string();
    assert!(
        last.contains("Command denied: not during the backup window"),
        "{last}"
    );
    assert!(!file.exists(), "a denied write never runs");
    assert!(!text.contains("error:"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_cancels_the_running_turn_and_a_second_quits() {
    let env = Env::start().await;
    let host = env.resource().to_owned();
    let marker = format!("vigil-term-cancel-{}", std::process::id());
    env.model.push(Reply::ToolCalls(vec![call(
        "read",
        json!({"action": "exec", "resource_id": host, "command": format!("sleep 60; echo {marker}")}),
    )]));
    let mut term = env.terminal().await;
    term.type_line("wait a minute");
    term.wait_for("⚙ read exec").await;
    let running = eventually(|| {
        let marker = marker.clone();
        async move { !processes_matching(&marker).is_empty() }
    })
    .await;
    assert!(running, "the command never started\n{}", term.text());
    let session = env.only_session().await;
    assert_eq!(env.session(&session).await["running"], true);
    term.ctrl_c();
    term.wait_for("turn cancelled").await;
    let text = term.wait_for_n("you> ", 2).await;
    assert!(
        !text.contains("error: CANCELLED"),
        "a cancel is not an error\n{text}"
    );
    assert_eq!(env.session(&session).await["running"], false, "{text}");
    let gone = eventually(|| {
        let marker = marker.clone();
        async move { processes_matching(&marker).is_empty() }
    })
    .await;
    assert!(gone, "the command still runs after the cancel");
    term.ctrl_c();
    assert_eq!(term.exit_code().await, 130, "{}", term.text());
}
