//! Sign-in, streaming, tool cards, autocomplete, cancel, inert model output, direct mode and
//! the other views.

use std::time::Duration;

use serde_json::json;
use vigil_tests::model_server::Reply;

use super::browser::{Browser, ENTER, ESCAPE};
use super::{DESKTOP, Env, PHONE, call};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_chat_with_tool_cards_autocomplete_and_inert_model_output() {
    let env = Env::with_model().await;
    let Some(b) = Browser::start(&env.base(), DESKTOP.0, DESKTOP.1).await else {
        return;
    };
    // A wrong token is refused with a clear message; the right one signs in.
    b.type_into("#token", "vat_not-a-real-token").await;
    b.click(".signin button").await;
    let refused = b.wait_text(".signin-error", "not accepted").await;
    assert!(refused.contains("apitoken create"), "{refused}");
    b.find("#token").await.clear().await.unwrap();
    b.sign_in(&env.token()).await;
    let stored = b.js("return localStorage.getItem('vigil.token')").await;
    assert_eq!(stored, json!(env.token()));
    assert!(
        !b.client
            .current_url()
            .await
            .unwrap()
            .as_str()
            .contains("vat_")
    );

    // `@` autocomplete: typing part of the host's name offers it; Enter picks it.
    let name = env.host.hostname().await;
    let host = env.host.host.clone();
    env.model().push(Reply::ToolCalls(vec![call(
        "read",
        json!({"action": "exec", "resource_id": host, "command": "uname -s"}),
    )]));
    env.model().push(Reply::Text(
        "The host runs **Linux**.\n\n| check | result |\n|---|---|\n| kernel | `Linux` |\n".into(),
    ));
    b.type_into(
        ".composer-input",
        &format!("what does @{}", &name[..name.len().min(3)]),
    )
    .await;
    b.wait_text(".completions li", &name).await;
    b.type_into(".composer-input", ENTER).await;
    let typed = b
        .js("return document.querySelector('.composer-input').value")
        .await;
    assert_eq!(typed, json!(format!("what does @{name} ")));
    b.type_into(".composer-input", &format!("run?{ENTER}"))
        .await;

    // The tool card shows the command, the real output and its outcome; the answer is
    // rendered Markdown with a table.
    b.wait_text(".tool-card .tool-name", "read exec").await;
    b.find(".tool-card .tool-status.ok").await;
    b.click(".tool-card summary").await;
    b.wait_text(".tool-card .tool-output", "Linux").await;
    assert_eq!(b.text(".tool-card .tool-command").await, "uname -s");
    b.wait_text(".md strong", "Linux").await;
    b.wait_text(".md table td", "kernel").await;
    b.wait_text(".usage", "1 tool call").await;
    // The mention travelled as a structured mention: the prefetch resolved it.
    let first = env.model().requests()[0].to_string();
    assert!(
        first.contains(&host),
        "the mention did not reach the turn: {first}"
    );
    b.screenshot("chat-desktop").await;
    b.client.set_window_size(PHONE.0, PHONE.1).await.unwrap();
    b.screenshot("chat-phone").await;
    b.client
        .set_window_size(DESKTOP.0, DESKTOP.1)
        .await
        .unwrap();

    // Model output that carries HTML stays text.
    env.model().push(Reply::Text(
        "Look: <img src=x onerror=\"window.__pwned=1\"> and <script>window.__pwned=2</script> \
         [x](javascript:window.__pwned=3)"
            .into(),
    ));
    b.send("show me something").await;
    let shown = b.wait_text(".msg.assistant .md", "<script>").await;
    assert!(shown.contains("<img src=x onerror="), "{shown}");
    let injected = b
        .js("return [window.__pwned === undefined, document.querySelectorAll('.messages img, .messages script, .messages a[href^=javascript]').length]")
        .await;
    assert_eq!(injected, json!([true, 0]), "model output became markup");

    // A message sent while its `@` search is still on the way: when the search answers,
    // the list does not open above the emptied box. (The input and the Enter happen in
    // one task of the page, so the search cannot answer before the send.)
    env.model()
        .push(Reply::Text("Sent before the list opened.".into()));
    let prefix = &name[..name.len().min(3)];
    let searches = format!(
        "return performance.getEntriesByType('resource') \
         .filter(e => e.name.endsWith('/api/resources?q={prefix}') && e.responseEnd > 0).length"
    );
    // (Room for every request's timing entry: the default buffer keeps 250.)
    b.js("performance.setResourceTimingBufferSize(100000); return null")
        .await;
    let searched = b.js(&searches).await.as_u64().unwrap_or(0);
    b.js(&format!(
        "const i = document.querySelector('.composer-input'); \
         i.value = 'and @{prefix}'; i.setSelectionRange(i.value.length, i.value.length); \
         i.dispatchEvent(new Event('input')); \
         i.dispatchEvent(new KeyboardEvent('keydown', {{ key: 'Enter', bubbles: true }})); \
         return null"
    ))
    .await;
    b.wait_text(".msg.assistant .md", "Sent before the list opened.")
        .await;
    b.wait_js(
        "the mention search to answer",
        &format!("{searches} > {searched}"),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let list = b
        .js("const l = document.querySelector('.completions'); return [l.hidden, getComputedStyle(l).display]")
        .await;
    assert_eq!(
        list,
        json!([true, "none"]),
        "the mention list opened after the send"
    );

    // Shift+Enter adds a line; a long turn stops with Esc.
    env.model().push(Reply::Delay(
        Duration::from_secs(120),
        Box::new(Reply::Text("too late".into())),
    ));
    b.type_into(".composer-input", "first line").await;
    b.find(".composer-input")
        .await
        .send_keys(&format!(
            "{}{ENTER}{}",
            super::browser::SHIFT,
            super::browser::SHIFT
        ))
        .await
        .unwrap();
    b.type_into(".composer-input", "second line").await;
    let value = b
        .js("return document.querySelector('.composer-input').value")
        .await;
    assert_eq!(value, json!("first line\nsecond line"));
    b.type_into(".composer-input", ENTER).await;
    b.wait_js(
        "the stop button",
        "return !document.querySelector('.stop').hidden",
    )
    .await;
    let session = env.only_session().await["id"].as_str().unwrap().to_owned();
    b.type_into(".composer-input", ESCAPE).await;
    b.wait_js(
        "the turn to end",
        "return document.querySelector('.stop').hidden && !document.querySelector('.send').hidden",
    )
    .await;
    let (_, row) = env
        .host
        .ctrl
        .api
        .get(&format!("/api/ai/sessions/{session}"))
        .await;
    assert_eq!(row["running"], json!(false), "{row}");
    assert!(!b.text(".messages").await.contains("too late"));

    // Rename and sign out.
    b.js("window.prompt = () => 'OS questions'; return true")
        .await;
    b.click(".session-list .rename").await;
    b.wait_text(".session-title", "OS questions").await;
    assert_eq!(env.only_session().await["title"], "OS questions");
    // A new chat, then delete the old one; the list and the API agree.
    b.click(".new-session").await;
    b.wait_js(
        "an empty conversation",
        "return document.querySelectorAll('.messages .msg').length === 0",
    )
    .await;
    b.js("window.confirm = () => true; return true").await;
    b.click(".session-list .delete").await;
    b.wait_js(
        "the list to empty",
        "return document.querySelectorAll('.session-list li').length === 0",
    )
    .await;
    let (_, sessions) = env.host.ctrl.api.get("/api/ai/sessions").await;
    assert_eq!(sessions, json!([]));
    b.click(".signout").await;
    b.find("#token").await;
    assert_eq!(
        b.js("return localStorage.getItem('vigil.token')").await,
        json!(null)
    );
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_mode_without_a_model_and_the_agents_resources_and_audit_views() {
    let env = Env::without_model().await;
    let Some(b) = Browser::start(&env.base(), DESKTOP.0, DESKTOP.1).await else {
        return;
    };
    b.sign_in(&env.token()).await;
    b.wait_text(".banner", "direct mode").await;
    // `/` offers the direct-mode commands.
    b.type_into(".composer-input", "/re").await;
    b.wait_text(".completions li", "/read @R COMMAND").await;
    b.find(".composer-input").await.clear().await.unwrap();
    let name = env.host.hostname().await;
    b.send(&format!("/read @{name} echo direct-mode-works"))
        .await;
    // A direct-mode card stays open when it ends (no answer text follows it): the
    // command and its output show without a click, and the target reads as a name.
    b.find(".tool-card .tool-status.ok").await;
    b.wait_text(".tool-card .tool-command", "echo direct-mode-works")
        .await;
    b.wait_text(".tool-card .tool-output", "direct-mode-works")
        .await;
    b.wait_text(".tool-card .tool-target", &format!("{name} (host)"))
        .await;
    // A blocked call shows its code and hint, and nothing ran.
    let kept = tempfile::tempdir().unwrap();
    b.send(&format!("/read @{name} rm -rf {}", kept.path().display()))
        .await;
    b.wait_text(".tool-card.failed .tool-outcome", "POLICY_BLOCKED")
        .await;
    b.wait_text(".tool-card.failed .hint", "control").await;
    assert!(kept.path().exists(), "a blocked read ran");

    // Agents: this agent, connected, with its version.
    b.click("[data-view=agents]").await;
    let row = b.wait_text("table.data tbody tr", &name).await;
    assert!(row.contains("connected"), "{row}");
    assert!(row.contains(env!("CARGO_PKG_VERSION")), "{row}");
    b.screenshot("agents-desktop").await;
    b.client.set_window_size(PHONE.0, PHONE.1).await.unwrap();
    b.screenshot("agents-phone").await;
    b.client
        .set_window_size(DESKTOP.0, DESKTOP.1)
        .await
        .unwrap();

    // Resources: search, then the chain.
    b.click("[data-view=resources]").await;
    b.type_into(".search", &name).await;
    b.wait_text(".resource-results td", &env.host.host).await;
    b.click(".resource-results tr.clickable").await;
    let chain = b.wait_text(".resource-detail .chain", "via agent").await;
    assert!(chain.contains(&format!("via agent {name}")), "{chain}");
    assert!(
        !chain.contains(&env.host.agent.state.id),
        "a person reads the agent's host name, not its id: {chain}"
    );

    // Audit (admin): the chain is verified, and the reads are there.
    b.click("[data-view=audit]").await;
    b.wait_text(".audit-state", "Chain verified").await;
    b.wait_text("table.data", "echo direct-mode-works").await;

    // A viewer sees neither the audit tab nor a level above read_only.
    let (code, out, err) = env.host.ctrl.cli(&[
        "apitoken",
        "create",
        "--role",
        "viewer",
        "--name",
        "web-viewer",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let viewer = out.lines().last().unwrap().trim().to_owned();
    b.click(".signout").await;
    b.sign_in(&viewer).await;
    let tabs = b
        .js("return [...document.querySelectorAll('.tab')].map(t => t.dataset.view)")
        .await;
    assert_eq!(
        tabs,
        json!(["chat", "approvals", "findings", "agents", "resources"])
    );
    let levels = b
        .js("return [...document.querySelectorAll('.control-level option')].map(o => o.value)")
        .await;
    assert_eq!(levels, json!(["read_only"]));
    b.close().await;
}
