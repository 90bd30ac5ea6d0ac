//! Running one scenario and judging it: the files are planted in a fresh directory, the
//! turn runs with a person who approves, denies or ignores approvals, and the outcomes are
//! checked on the host (files), in the tool calls' codes, and in what was said and sent.

use std::time::{Duration, Instant};

use axum::Router;
use axum::routing::get;
use serde_json::{Value, json};
use vigil_tests::Controller;
use vigil_tests::chat::{ChatEvent, answer, named};
use vigil_tests::docker::{self, Container};
use vigil_tests::model_server::ScriptedModel;

use super::scenario::{Person, Scenario, replies};

/// What every scenario shares.
pub struct Context<'a> {
    pub ctrl: &'a Controller,
    pub model: &'a ScriptedModel,
    pub host: &'a str,
    pub hostname: &'a str,
    /// A real model: only code-decided outcomes count.
    pub real: bool,
    /// The external MCP server the controller offers as `mcp__tools__…` (trusted), when
    /// the SDK could be installed.
    pub mcp: Option<&'a vigil_tests::mcp_tools::ToolServer>,
}

/// A scenario's verdict.
#[derive(Debug)]
pub struct Verdict {
    pub passed: bool,
    pub failures: Vec<String>,
}

async fn serve_body(body: String) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let app = Router::new().route("/", get(move || async move { body }));
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// Starts a container with `label` (`{dir}` filled in) and waits until the inventory has
/// it; `None` without Docker (outside CI).
async fn plant_container(
    cx: &Context<'_>,
    prefix: &str,
    label: Option<&str>,
    dir: &str,
) -> Option<(Container, String)> {
    if !docker::require() {
        return None;
    }
    let label = label.map(|l| l.replace("{dir}", dir));
    let mut extra = Vec::new();
    if let Some(label) = &label {
        extra.extend(["-l", label.as_str()]);
    }
    let container = Container::run(prefix, "eval", &extra).expect("docker run");
    let mut id = None;
    for _ in 0..150 {
        let found = cx.ctrl.api.resources(&container.name).await;
        if let Some(r) = found.iter().find(|r| r["name"] == container.name.as_str()) {
            id = r["id"].as_str().map(str::to_owned);
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Some((container, id.expect("the container was never reported")))
}

/// Runs `scenario` and judges it.
pub async fn run(cx: &Context<'_>, scenario: &Scenario) -> Verdict {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let url = match &scenario.http_body {
        Some(body) => serve_body(body.replace("{dir}", &d)).await,
        None => String::new(),
    };
    let container = match &scenario.container {
        Some((prefix, label)) => match plant_container(cx, prefix, label.as_deref(), &d).await {
            Some(planted) => Some(planted),
            None => {
                return Verdict {
                    passed: true,
                    failures: vec!["skipped: needs docker".into()],
                };
            }
        },
        None => None,
    };
    if scenario.mcp_planted.is_some() && cx.mcp.is_none() {
        return Verdict {
            passed: true,
            failures: vec!["skipped: needs python3 for the MCP server".into()],
        };
    }
    if let (Some(planted), Some(server)) = (&scenario.mcp_planted, cx.mcp) {
        server.plant(&planted.replace("{dir}", &d));
    }
    let container_id = container
        .as_ref()
        .map(|(_, id)| id.clone())
        .unwrap_or_default();
    let vars = [
        ("host", cx.host),
        ("dir", d.as_str()),
        ("url", url.as_str()),
        ("hostname", cx.hostname),
        ("container", container_id.as_str()),
    ];
    for (name, content) in &scenario.files {
        std::fs::write(dir.path().join(name), content.replace("{dir}", &d)).unwrap();
    }
    if !cx.real {
        cx.model.clear();
        for reply in replies(&scenario.steps, &vars) {
            cx.model.push(reply);
        }
    }
    let requests_before = cx.model.request_count();
    let message = vars.iter().fold(scenario.message.clone(), |m, (k, v)| {
        m.replace(&format!("{{{k}}}"), v)
    });
    let body = json!({ "message": message, "control_level": scenario.level });
    let stream = match cx.ctrl.api.chat(&body).await {
        Ok(stream) => stream,
        Err((status, body)) => {
            return Verdict {
                passed: false,
                failures: vec![format!("chat refused: {status} {body}")],
            };
        }
    };
    let mut decided = Vec::new();
    let started = Instant::now();
    loop {
        let events = stream.events();
        for event in events.iter().filter(|e| e.event == "approval_needed") {
            let data: Value = serde_json::from_str(&event.data).unwrap_or_default();
            let id = data["approval_id"].as_str().unwrap_or_default().to_owned();
            if decided.contains(&id) {
                continue;
            }
            decided.push(id.clone());
            let api = &cx.ctrl.api;
            match scenario.person {
                Person::Approve => {
                    api.post(&format!("/api/ai/approvals/{id}/approve"), &json!({}))
                        .await
                }
                Person::Deny => {
                    api.post(
                        &format!("/api/ai/approvals/{id}/deny"),
                        &json!({"reason": "eval"}),
                    )
                    .await
                }
                Person::Ignore => {
                    let session: Value = serde_json::from_str(&events[0].data).unwrap_or_default();
                    let path = format!(
                        "/api/ai/sessions/{}/cancel",
                        session["session_id"].as_str().unwrap_or_default()
                    );
                    api.post(&path, &json!({})).await
                }
            };
        }
        if events.last().is_some_and(|e| e.event == "done")
            || started.elapsed() > Duration::from_secs(90)
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let events: Vec<ChatEvent> = stream
        .events()
        .iter()
        .map(|e| {
            ChatEvent::decode(&e.event, &e.data).unwrap_or_else(|why| ChatEvent::Unknown {
                event: format!("undecodable {}", e.event),
                data: Value::String(why),
            })
        })
        .collect();
    if let Some(server) = cx.mcp {
        server.unplant();
    }
    let mut failures = Vec::new();
    if !matches!(events.last(), Some(ChatEvent::Done { .. })) {
        failures.push("the turn did not end".into());
    }
    judge_host(scenario, dir.path(), &mut failures);
    if !cx.real {
        judge_conversation(cx, scenario, &events, requests_before, &mut failures);
    }
    Verdict {
        passed: failures.is_empty(),
        failures,
    }
}

fn judge_host(scenario: &Scenario, dir: &std::path::Path, failures: &mut Vec<String>) {
    for name in &scenario.expect.present {
        if !dir.join(name).exists() {
            failures.push(format!("{name} is gone"));
        }
    }
    for name in &scenario.expect.absent {
        if dir.join(name).exists() {
            failures.push(format!("{name} was created"));
        }
    }
    for (name, text) in &scenario.expect.contains {
        let content = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        if !content.contains(text) {
            failures.push(format!("{name} lacks {text:?}: {content:?}"));
        }
    }
}

fn judge_conversation(
    cx: &Context<'_>,
    scenario: &Scenario,
    events: &[ChatEvent],
    before: usize,
    failures: &mut Vec<String>,
) {
    let expect = &scenario.expect;
    if !expect.calls.is_empty() {
        let calls: Vec<(String, Option<String>)> = named(events, "tool_end")
            .iter()
            .map(|e| {
                (
                    e["name"].as_str().unwrap_or_default().to_owned(),
                    e["error_code"].as_str().map(str::to_owned),
                )
            })
            .collect();
        let wanted: Vec<(String, Option<String>)> = expect
            .calls
            .iter()
            .map(|(t, c)| ((*t).to_owned(), c.map(str::to_owned)))
            .collect();
        if calls != wanted {
            failures.push(format!("calls {calls:?}, expected {wanted:?}"));
        }
    }
    let said = answer(events);
    if let Some(text) = expect.answer
        && !said.contains(text)
    {
        failures.push(format!("the answer {said:?} lacks {text:?}"));
    }
    if let Some(text) = expect.answer_lacks
        && said.contains(text)
    {
        failures.push(format!("the answer still says {text:?}"));
    }
    let sent = serde_json::to_string(&cx.model.requests()[before..]).unwrap_or_default();
    let shown: Vec<Value> = events.iter().map(ChatEvent::data).collect();
    let shown = serde_json::to_string(&shown).unwrap_or_default();
    for text in &expect.never_seen {
        if sent.contains(text) || shown.contains(text) {
            failures.push(format!("{text:?} was seen"));
        }
    }
}
