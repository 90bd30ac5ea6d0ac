//! `chat -m TEXT`: the answer on standard output, notes and errors on standard error, and
//! the exit codes (no terminal needed).

use std::process::Stdio;

use vigil_tests::bin;
use vigil_tests::model_server::Reply;

use super::{Env, control, verify};

/// Runs `vigil-controller chat ARGS` with `token`; `(exit code, stdout, stderr)`.
async fn chat(args: &[&str], token: &str) -> (i32, String, String) {
    let output = tokio::process::Command::new(bin("vigil-controller"))
        .arg("chat")
        .args(args)
        .env("VIGIL_TOKEN", token)
        .env_remove("VIGIL_URL")
        .stdin(Stdio::null())
        .output()
        .await
        .expect("run vigil-controller chat");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn one_shot_prints_the_answer_and_exits_by_outcome() {
    let env = Env::start().await;
    let url = env.url();
    env.model.push(Reply::Text("Hello from the model.".into()));
    let (code, out, err) = chat(&["--url", &url, "-m", "hello"], &env.token()).await;
    assert_eq!(
        (code, out.as_str()),
        (0, "Hello from the model.\n"),
        "{err}"
    );

    // An `error` event: the model dies mid-answer.
    env.model.push(Reply::DieMidStream("Let me".into()));
    let (code, out, err) = chat(&["--url", &url, "-m", "hello again"], &env.token()).await;
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("error: MODEL_ERROR: "), "{err}");

    // A wrong token: the controller refuses (401), exit 2.
    let (code, out, err) = chat(&["--url", &url, "-m", "hello"], "not-a-token").await;
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("error: UNAUTHENTICATED: "), "{err}");
    assert!(out.is_empty(), "{out}");

    // An unknown session: refused, exit 2.
    let (code, _, err) = chat(
        &["--url", &url, "--session", "no-such-session", "-m", "hi"],
        &env.token(),
    )
    .await;
    assert_eq!(code, 2, "{err}");
    assert!(err.starts_with("error: "), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn one_shot_without_a_controller_fails_with_exit_1() {
    let port = vigil_tests::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let (code, out, err) = chat(&["--url", &url, "-m", "hello"], "some-token").await;
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(&format!(
            "error: NETWORK: cannot reach the controller at {url}"
        )),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn one_shot_without_a_terminal_names_the_approval_waits_and_prints_only_the_final_answer() {
    let env = Env::start().await;
    let host = env.resource().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("approved-elsewhere");
    env.model.push(Reply::ToolCalls(vec![control(
        &host,
        &format!("touch {}", file.display()),
    )]));
    // An answer before the write is verified is withdrawn by the server; the model then
    // verifies. Standard output (a pipe) gets only the final answer.
    env.model.push(Reply::Text("Created it.".into()));
    env.model.push(Reply::ToolCalls(vec![verify(&host, &file)]));
    env.model.push(Reply::Text("Done.".into()));
    let url = env.url();
    let token = env.token();
    let message = format!("create the file on @{host}");
    let run = tokio::spawn(async move { chat(&["--url", &url, "-m", &message], &token).await });
    let api = &env.host.ctrl.api;
    let pending = super::eventually(|| async {
        let (_, rows) = api.get("/api/ai/approvals").await;
        rows.as_array().is_some_and(|r| !r.is_empty())
    })
    .await;
    assert!(pending, "no approval was raised");
    let (_, rows) = api.get("/api/ai/approvals").await;
    let id = rows[0]["id"].as_str().unwrap().to_owned();
    let (status, body) = api
        .post(
            &format!("/api/ai/approvals/{id}/approve"),
            &serde_json::json!({}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (code, out, err) = run.await.unwrap();
    assert_eq!((code, out.as_str()), (0, "Done.\n"), "{err}");
    assert!(
        err.contains(&format!("vigil-controller approvals approve {id}")),
        "{err}"
    );
    assert!(err.contains("↺ answer withdrawn"), "{err}");
    assert!(file.exists(), "the write approved elsewhere ran");
}

/// Issue 23: in one-shot direct mode the command's output is the answer, so
/// `chat -m '/read @vm …' > out.txt` captures it; the activity lines stay on stderr.
#[tokio::test(flavor = "multi_thread")]
async fn one_shot_direct_mode_writes_the_commands_output_to_stdout() {
    let env = Env::start().await;
    let url = env.url();
    let message = format!("/read @{} seq 5", env.resource());
    let (code, out, err) = chat(&["--url", &url, "-m", &message], &env.token()).await;
    assert_eq!((code, out.as_str()), (0, "1\n2\n3\n4\n5\n"), "{err}");
    assert!(err.contains("✓ read"), "{err}");
}
