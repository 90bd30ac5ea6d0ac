//! Approval cards in the browser: a file edit's card shows its command, route and diff,
//! is approved and changes the file on the host; another is denied with a reason that
//! reaches the model; the Approvals view and its badge list what waits.

use serde_json::json;
use vigil_tests::model_server::Reply;

use super::browser::Browser;
use super::{DESKTOP, Env, PHONE, call};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_a_file_edit_with_its_diff_and_deny_a_command_with_a_reason() {
    let env = Env::with_model().await;
    let Some(b) = Browser::start(&env.base(), DESKTOP.0, DESKTOP.1).await else {
        return;
    };
    b.sign_in(&env.token()).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.conf");
    std::fs::write(&path, "port = 8080\nworkers = 2\n").unwrap();
    let path_text = path.display().to_string();
    let host = env.host.host.clone();
    let m = env.model();
    m.push(Reply::ToolCalls(vec![call(
        "query",
        json!({"action": "get", "resource_id": host}),
    )]));
    m.push(Reply::ToolCalls(vec![call(
        "file_edit",
        json!({"action": "read", "resource_id": host, "path": path_text}),
    )]));
    m.push(Reply::ToolCalls(vec![call(
        "file_edit",
        json!({"action": "write", "resource_id": host, "path": path_text, "content": "port = 8080\nworkers = 4\n"}),
    )]));
    m.push(Reply::ToolCalls(vec![call(
        "read",
        json!({"action": "exec", "resource_id": host, "command": format!("cat {path_text}")}),
    )]));
    m.push(Reply::Text("The app now runs **4 workers**.".into()));
    b.send("give the app 4 workers").await;

    // The card leads with the file and its diff (the transport command is one click
    // away), names the target, shows the route and the time left; the badge counts it.
    let card = b.wait_text(".approval-card", "Approval needed").await;
    b.wait_text(".approval-card .approval-file", &path_text)
        .await;
    assert!(
        !card.contains("base64 -d"),
        "the transport command leads: {card}"
    );
    b.click(".approval-card .exact-command summary").await;
    b.wait_text(".approval-card .exact-command", "base64 -d")
        .await;
    b.wait_text(".approval-card .approval-target", "(host)")
        .await;
    b.wait_text(".approval-card .diff .del", "workers = 2")
        .await;
    b.wait_text(".approval-card .diff .add", "workers = 4")
        .await;
    b.wait_text(".approval-card .chain", "via agent").await;
    b.wait_text(".approval-card .time-left", "expires in").await;
    b.wait_text(".tab .badge", "1").await;
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "port = 8080\nworkers = 2\n"
    );
    b.screenshot("approval-desktop").await;
    b.client.set_window_size(PHONE.0, PHONE.1).await.unwrap();
    b.screenshot("approval-phone").await;
    b.client
        .set_window_size(DESKTOP.0, DESKTOP.1)
        .await
        .unwrap();

    // Approve: the file changes on the host and the card shows the run's result.
    b.click(".approval-card .approve").await;
    b.wait_text(".approval-card .approval-state", "Approved")
        .await;
    b.wait_text(".approval-card .run.ok", "exit 0").await;
    b.wait_text(".md strong", "4 workers").await;
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "port = 8080\nworkers = 4\n"
    );
    b.wait_js(
        "the badge to clear",
        "return document.querySelector('.tab .badge').hidden",
    )
    .await;

    // Deny another with a reason: nothing runs, and the reason reaches the model.
    let marker = dir.path().join("restarted");
    m.push(Reply::ToolCalls(vec![call(
        "control",
        json!({"action": "command", "resource_id": host, "command": format!("touch {}", marker.display())}),
    )]));
    m.push(Reply::Text("Understood, I left it alone.".into()));
    b.send("and mark it restarted").await;
    let cards = || async { b.all(".approval-card").await.len() };
    while cards().await < 2 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // It is also listed in the Approvals view (from any session); decide it in the chat.
    b.click("[data-view=approvals]").await;
    b.wait_text(
        ".approval-list .approval-card",
        &marker.display().to_string(),
    )
    .await;
    b.click("[data-view=chat]").await;
    let pending = ".approval-card:not(.decided-approved) .deny-reason";
    b.type_into(pending, "not during business hours").await;
    b.click(".approval-card:not(.decided-approved) .deny").await;
    b.wait_text(".approval-card.decided-denied", "not during business hours")
        .await;
    b.wait_text(".md", "Understood, I left it alone.").await;
    assert!(!marker.exists(), "a denied command ran");
    let sent = serde_json::to_string(&m.requests()).unwrap();
    assert!(
        sent.contains("Command denied: not during business hours"),
        "the reason did not reach the model"
    );
    b.close().await;
}
