//! Vigil as an MCP server, driven by the official Python SDK (`mcp` from PyPI, in a
//! virtual environment the suite makes; tests/fixtures/mcp/client.py) against a real
//! controller and agent: over streamable HTTP (the SDK's newest protocol, a call per
//! request, and the initialize handshake's session) and over stdio through
//! `vigil-controller mcp`. Reads run on the agent; a write waits for a person and runs
//! once after an approval through the API, never after a denial or an expiry; a viewer is
//! offered no write and cannot raise one; a bad token and a bad Origin are refused; every
//! call is in the audit trail with the token's and the client's names.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use vigil_tests::chat::ChatHost;
use vigil_tests::{Api, bin};

/// Seconds a write call waits for its decision in these tests.
const WAIT_S: u64 = 2;
/// Seconds before an approval expires in these tests.
const APPROVAL_TTL_S: u64 = 8;
/// The client's name as the SDK sends it.
const CLIENT: &str = "vigil-test-client";

/// How the client reaches Vigil.
enum Via<'a> {
    /// Streamable HTTP with a token, an optional Origin, and the handshake's session.
    Http {
        token: &'a str,
        origin: Option<&'a str>,
        legacy: bool,
    },
    /// `vigil-controller mcp` with this token.
    Stdio { token: &'a str },
}

/// Runs the client's `steps`: its exit code and one record per line.
async fn client(python: &Path, host: &ChatHost, via: Via<'_>, steps: Value) -> (i32, Vec<Value>) {
    let mut command = tokio::process::Command::new(python);
    command.arg(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/mcp/client.py"
    ));
    command.arg("--steps").arg(steps.to_string());
    match via {
        Via::Http {
            token,
            origin,
            legacy,
        } => {
            command
                .arg("--http")
                .arg(format!("{}/mcp", host.ctrl.api.base()))
                .arg("--token")
                .arg(token);
            if let Some(origin) = origin {
                command.arg("--origin").arg(origin);
            }
            if legacy {
                command.arg("--legacy");
            }
        }
        Via::Stdio { token } => {
            command
                .arg("--stdio")
                .arg(bin("vigil-controller"))
                .env("VIGIL_URL", host.ctrl.api.base())
                .env("VIGIL_TOKEN", token);
        }
    }
    command.kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(120), command.output())
        .await
        .expect("the MCP client finished within two minutes")
        .expect("run the MCP client");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let records: Vec<Value> = stdout
        .lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|_| {
                panic!(
                    "not a record: {line}\n{}",
                    String::from_utf8_lossy(&output.stderr)
                )
            })
        })
        .collect();
    let code = output.status.code().unwrap_or(-1);
    if code != 0 && code != 3 {
        panic!(
            "the MCP client failed ({code}):\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    (code, records)
}

/// The records of the steps (the connect record dropped).
fn steps_of(records: Vec<Value>) -> Vec<Value> {
    assert_eq!(records[0]["op"], "connect", "{records:?}");
    records.into_iter().skip(1).collect()
}

/// A `call` step.
fn call(tool: &str, args: Value) -> Value {
    json!({ "op": "call", "tool": tool, "args": args })
}

/// The pending approval of `command`, once an MCP client raised it.
async fn raised(api: &Api, command: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (_, pending) = api.get("/api/ai/approvals").await;
        let found = pending
            .as_array()
            .into_iter()
            .flatten()
            .find(|a| a["command"] == command)
            .cloned();
        if let Some(found) = found {
            return found;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no approval was raised for {command}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Decides the approval of `command` as soon as it is raised.
async fn decide(api: &Api, command: &str, decision: &str) -> String {
    let approval = raised(api, command).await;
    assert!(
        approval["created_by"]
            .as_str()
            .unwrap()
            .contains(&format!("via MCP ({CLIENT}")),
        "{approval}"
    );
    let id = approval["id"].as_str().unwrap().to_owned();
    let (status, body) = api
        .post(
            &format!("/api/ai/approvals/{id}/{decision}"),
            &json!({ "reason": "not now" }),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    id
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |text| text.lines().count())
}

/// An operator token of its own for the MCP client (a person approves with the admin
/// token: the client's token may not approve what it requested).
fn client_token(host: &ChatHost, name: &str, role: &str) -> String {
    let (code, out, err) = host
        .ctrl
        .cli(&["apitoken", "create", "--role", role, "--name", name]);
    assert_eq!(code, 0, "{out}{err}");
    out.lines().last().unwrap().trim().to_owned()
}

async fn start() -> Option<(PathBuf, ChatHost)> {
    let python = tokio::task::spawn_blocking(vigil_tests::python::mcp_sdk)
        .await
        .unwrap()?;
    let host = ChatHost::start(
        [
            "--mcp-approval-wait-s",
            &WAIT_S.to_string(),
            "--approval-timeout-s",
            &APPROVAL_TTL_S.to_string(),
            "--mcp-allowed-origins",
            "http://console.example:8080",
        ]
        .map(String::from)
        .to_vec(),
    )
    .await;
    Some((python, host))
}

#[tokio::test(flavor = "multi_thread")]
async fn an_mcp_client_reads_and_its_writes_wait_for_a_person() {
    let Some((python, host)) = start().await else {
        return;
    };
    let api = &host.ctrl.api;
    let token = client_token(&host, "ide", "operator");
    let http = || Via::Http {
        token: &token,
        origin: None,
        legacy: false,
    };
    let hostname = host.hostname().await;
    let (_, records) = client(
        &python,
        &host,
        http(),
        json!([
            { "op": "tools" },
            call("read", json!({ "action": "exec", "resource_id": hostname, "command": "hostname" })),
            call("read", json!({ "action": "exec", "resource_id": hostname, "command": "rm -rf /tmp/x" })),
            { "op": "resources" },
            { "op": "read", "uri": format!("vigil://resources/{}", host.host) },
            call("shell", json!({ "command": "id" })),
            call("read", json!({ "action": "exec", "resource_id": hostname, "command": "id", "sudo": true })),
            call("approval_status", json!({})),
            call("approval_status", json!({ "approval_id": "no-such-approval" })),
            call("mcp__tools__lookup", json!({ "topic": "x" })),
        ]),
    )
    .await;
    assert_eq!(records[0]["protocol"], "2026-07-28", "{records:?}");
    let steps = steps_of(records);
    let tools = steps[0]["tools"].as_array().unwrap();
    let tool = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap().clone();
    assert_eq!(tool("read")["read_only"], true);
    assert_eq!(tool("query")["read_only"], true);
    assert_eq!(tool("control")["destructive"], true);
    assert_eq!(tool("control")["read_only"], false);
    assert_eq!(tool("approval_status")["read_only"], true);
    // The read ran on the agent, its output marked as data.
    let read = &steps[1]["envelope"];
    assert_eq!(read["ok"], true, "{read}");
    assert_eq!(read["data"]["stdout"].as_str().unwrap().trim(), hostname);
    assert!(read["meta"]["untrusted_output"].is_string(), "{read}");
    // A write through the read tool is refused by the classifier, not run.
    assert_eq!(steps[2]["is_error"], true);
    assert_eq!(steps[2]["envelope"]["error"]["code"], "POLICY_BLOCKED");
    let uris = steps[3]["uris"].as_array().unwrap();
    assert!(uris.contains(&json!("vigil://resources")), "{uris:?}");
    let detail: Value = serde_json::from_str(steps[4]["text"].as_str().unwrap()).unwrap();
    assert_eq!(detail["chain"][0]["connected"], true, "{detail}");
    // Bad calls get the envelope's codes, never a protocol failure.
    let code = |n: usize| steps[n]["envelope"]["error"]["code"].clone();
    assert_eq!(code(5), "INVALID_INPUT", "an unknown tool");
    assert_eq!(code(6), "INVALID_INPUT", "an extra argument");
    assert_eq!(code(7), "INVALID_INPUT", "approval_status without an id");
    assert_eq!(code(8), "NOT_FOUND", "an unknown approval");
    assert_eq!(code(9), "INVALID_INPUT", "another server's tool");

    // A write waits for a person: approved through the API, it runs once.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("runs");
    let write = format!("echo run >> {}", file.display());
    let control = || {
        call(
            "control",
            json!({ "action": "command", "resource_id": host.host, "command": write }),
        )
    };
    // The client's own token may not approve what it requested (an AI client that can make
    // HTTP requests holds it); a person's token may.
    let ide = Api::new(api.base().to_owned(), token.clone());
    let own = async {
        let approval = raised(api, &write).await;
        let id = approval["id"].as_str().unwrap().to_owned();
        let (status, body) = ide
            .post(&format!("/api/ai/approvals/{id}/approve"), &json!({}))
            .await;
        assert_eq!(status, 403, "{body}");
        assert_eq!(body["error"]["code"], "FORBIDDEN", "{body}");
        decide(api, &write, "approve").await
    };
    let (records, _) = tokio::join!(client(&python, &host, http(), json!([control()])), own);
    let steps = steps_of(records.1);
    assert_eq!(steps[0]["envelope"]["ok"], true, "{steps:?}");
    assert_eq!(lines(&file), 1);

    // Denied: nothing runs, and the client hears why.
    let (records, _) = tokio::join!(
        client(&python, &host, http(), json!([control()])),
        decide(api, &write, "deny"),
    );
    let envelope = &steps_of(records.1)[0]["envelope"];
    assert_eq!(
        envelope["error"]["code"], "ACTION_NOT_ALLOWED",
        "{envelope}"
    );
    assert!(
        envelope["error"]["message"]
            .as_str()
            .unwrap()
            .contains("denied"),
        "{envelope}"
    );
    assert_eq!(lines(&file), 1);

    // Nobody decides within the wait: the call answers with the approval to ask about.
    let (_, records) = client(&python, &host, http(), json!([control()])).await;
    let envelope = steps_of(records)[0]["envelope"].clone();
    assert_eq!(envelope["error"]["code"], "APPROVAL_REQUIRED", "{envelope}");
    let id = envelope["error"]["details"]["approval_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(lines(&file), 1, "nothing ran before the decision");
    let (status, body) = api
        .post(&format!("/api/ai/approvals/{id}/approve"), &json!({}))
        .await;
    assert_eq!(status, 200, "{body}");
    let status_of = |id: &str| json!([call("approval_status", json!({ "approval_id": id }))]);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let last = loop {
        let (_, records) = client(&python, &host, http(), status_of(&id)).await;
        let last = steps_of(records)[0]["envelope"].clone();
        if last["data"]["run_state"] == "done" {
            break last;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the approved write never ran: {last}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(last["data"]["status"], "approved", "{last}");
    assert_eq!(last["data"]["exit_code"], 0, "{last}");
    assert_eq!(lines(&file), 2, "the approved write ran once");

    // Nobody decides at all: it expires and never runs.
    let (_, records) = client(&python, &host, http(), json!([control()])).await;
    let envelope = steps_of(records)[0]["envelope"].clone();
    let id = envelope["error"]["details"]["approval_id"]
        .as_str()
        .unwrap()
        .to_owned();
    tokio::time::sleep(Duration::from_secs(APPROVAL_TTL_S)).await;
    let (status, _) = api
        .post(&format!("/api/ai/approvals/{id}/approve"), &json!({}))
        .await;
    assert_ne!(status, 200, "an expired approval was approved");
    let (_, records) = client(&python, &host, http(), status_of(&id)).await;
    let envelope = &steps_of(records)[0]["envelope"];
    assert_eq!(envelope["data"]["status"], "expired", "{envelope}");
    assert_eq!(lines(&file), 2, "the expired write never ran");

    // Every call is audited with the token's and the client's names.
    let (_, audit) = api.get("/api/audit?limit=1000").await;
    let calls: Vec<&Value> = audit
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| row["action"] == "mcp.call")
        .collect();
    assert!(calls.len() >= 8, "{calls:?}");
    assert!(
        calls
            .iter()
            .all(|row| row["actor"] == format!("ide via MCP ({CLIENT})")),
        "{calls:?}"
    );
    for outcome in [
        "error: APPROVAL_REQUIRED",
        "error: ACTION_NOT_ALLOWED",
        "error: POLICY_BLOCKED",
    ] {
        assert!(
            calls.iter().any(|row| row["outcome"] == outcome),
            "no {outcome}: {calls:?}"
        );
    }
    assert!(
        calls.iter().any(|row| row["command"]
            .as_str()
            .unwrap()
            .starts_with("approval_status")
            && row["approval_id"].is_string()),
        "{calls:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn roles_tokens_origins_and_sessions_are_checked() {
    let Some((python, host)) = start().await else {
        return;
    };
    let api = &host.ctrl.api;
    let (code, out, err) = host.ctrl.cli(&[
        "apitoken", "create", "--role", "viewer", "--name", "watcher",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let viewer = out.lines().last().unwrap().trim().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let write = format!("touch {}", dir.path().join("viewer").display());
    let (_, records) = client(
        &python,
        &host,
        Via::Http {
            token: &viewer,
            origin: None,
            legacy: false,
        },
        json!([
            { "op": "tools" },
            call("control", json!({ "action": "command", "resource_id": host.host, "command": write })),
            call("read", json!({ "action": "exec", "resource_id": host.host, "command": "uptime" })),
        ]),
    )
    .await;
    let steps = steps_of(records);
    let tools = steps[0]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(!names.contains(&"control"), "{names:?}");
    assert!(tools.iter().all(|t| t["read_only"] == true), "{tools:?}");
    let docker = tools.iter().find(|t| t["name"] == "docker").unwrap();
    assert_eq!(docker["actions"], json!(["list", "inspect", "logs"]));
    assert_eq!(steps[1]["envelope"]["error"]["code"], "ACTION_NOT_ALLOWED");
    assert_eq!(steps[2]["envelope"]["ok"], true, "{:?}", steps[2]);
    let (_, all) = api.get("/api/ai/approvals?status=all").await;
    assert!(
        !all.as_array()
            .unwrap()
            .iter()
            .any(|a| a["command"] == write),
        "a viewer raised an approval: {all}"
    );

    // A bad token cannot connect; neither can a browser page from another origin.
    let (code, records) = client(
        &python,
        &host,
        Via::Http {
            token: "vat_not-a-token",
            origin: None,
            legacy: false,
        },
        json!([]),
    )
    .await;
    assert_eq!(code, 3, "{records:?}");
    let (code, records) = client(
        &python,
        &host,
        Via::Http {
            token: api.token(),
            origin: Some("http://evil.example"),
            legacy: false,
        },
        json!([]),
    )
    .await;
    assert_eq!(code, 3, "{records:?}");
    let (code, _) = client(
        &python,
        &host,
        Via::Http {
            token: api.token(),
            origin: Some("http://console.example:8080"),
            legacy: false,
        },
        json!([{ "op": "tools" }]),
    )
    .await;
    assert_eq!(code, 0, "an allowed origin was refused");
    let post = |token: &str, origin: Option<&str>| {
        let mut request = reqwest::Client::new()
            .post(format!("{}/mcp", api.base()))
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }));
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        request.send()
    };
    let refused = post("vat_nope", None).await.unwrap();
    assert_eq!(refused.status(), 401);
    // Malformed and oversized bodies are refused, and the endpoint goes on answering.
    let raw = |body: Vec<u8>| {
        reqwest::Client::new()
            .post(format!("{}/mcp", api.base()))
            .bearer_auth(api.token())
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let broken = raw(b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\":".to_vec())
        .await
        .unwrap();
    assert!(broken.status().is_client_error(), "{}", broken.status());
    let huge = raw(vec![b' '; 5 * 1024 * 1024]).await.unwrap();
    assert_eq!(huge.status(), 413);
    let (code, _) = client(
        &python,
        &host,
        Via::Http {
            token: &viewer,
            origin: None,
            legacy: false,
        },
        json!([{ "op": "tools" }]),
    )
    .await;
    assert_eq!(code, 0);
    // A session belongs to the token that opened it.
    let initialize = raw(serde_json::to_vec(&json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "raw", "version": "1" } }
    }))
    .unwrap())
    .await
    .unwrap();
    assert!(initialize.status().is_success(), "{}", initialize.status());
    let session = initialize.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    drop(initialize);
    let in_session = |token: &str, body: Value| {
        reqwest::Client::new()
            .post(format!("{}/mcp", api.base()))
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-06-18")
            .json(&body)
            .send()
    };
    let initialized = in_session(
        api.token(),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
    )
    .await
    .unwrap();
    assert!(initialized.status().is_success());
    let list = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" });
    let own = in_session(api.token(), list.clone()).await.unwrap();
    let own = own.text().await.unwrap();
    assert!(own.contains("\"control\""), "{own}");
    let other = in_session(&viewer, list).await.unwrap();
    let other = other.text().await.unwrap();
    assert!(other.contains("another API token"), "{other}");
    let refused = post(api.token(), Some("http://evil.example"))
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "FORBIDDEN", "{body}");

    // In a session (the initialize handshake) the gates are the session's, as in a chat:
    // a write must name a resource the session resolved first. A call without a session
    // may name one resource by its exact name.
    let hostname = host.hostname().await;
    let write = format!("echo session >> {}", dir.path().join("session").display());
    let control = call(
        "control",
        json!({ "action": "command", "resource_id": hostname, "command": write }),
    );
    let operator = client_token(&host, "ide", "operator");
    let session = client(
        &python,
        &host,
        Via::Http {
            token: &operator,
            origin: None,
            legacy: true,
        },
        json!([
            control,
            call(
                "query",
                json!({ "action": "get", "resource_id": host.host })
            ),
            control,
        ]),
    );
    let (records, _) = tokio::join!(session, decide(api, &write, "approve"));
    let records = records.1;
    assert_ne!(records[0]["protocol"], "2026-07-28", "{records:?}");
    let steps = steps_of(records);
    assert_eq!(
        steps[0]["envelope"]["error"]["code"], "STRICT_RESOLUTION",
        "{steps:?}"
    );
    assert_eq!(steps[1]["envelope"]["ok"], true, "{steps:?}");
    assert_eq!(steps[2]["envelope"]["ok"], true, "{steps:?}");
    assert_eq!(lines(&dir.path().join("session")), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_stdio_command_forwards_to_the_controller() {
    let Some((python, host)) = start().await else {
        return;
    };
    let api = &host.ctrl.api;
    let token = client_token(&host, "ide", "operator");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("stdio");
    let write = format!("echo stdio >> {}", file.display());
    let session = client(
        &python,
        &host,
        Via::Stdio { token: &token },
        json!([
            { "op": "tools" },
            call("query", json!({ "action": "get", "resource_id": host.host })),
            call("read", json!({ "action": "exec", "resource_id": host.host, "command": "uname -s" })),
            call("control", json!({ "action": "command", "resource_id": host.host, "command": write })),
            { "op": "read", "uri": "vigil://resources" },
        ]),
    );
    let (records, _) = tokio::join!(session, decide(api, &write, "approve"));
    let steps = steps_of(records.1);
    let tools = steps[0]["tools"].as_array().unwrap();
    assert!(
        tools
            .iter()
            .any(|t| t["name"] == "control" && t["destructive"] == true)
    );
    assert_eq!(
        steps[2]["envelope"]["data"]["stdout"], "Linux\n",
        "{steps:?}"
    );
    assert_eq!(steps[3]["envelope"]["ok"], true, "{steps:?}");
    assert_eq!(lines(&file), 1, "the approved write ran once");
    let index: Value = serde_json::from_str(steps[4]["text"].as_str().unwrap()).unwrap();
    assert!(
        index
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["id"] == host.host),
        "{index}"
    );
    let (_, audit) = api.get("/api/audit?limit=1000").await;
    assert!(
        audit
            .as_array()
            .unwrap()
            .iter()
            .any(|row| row["action"] == "mcp.call"
                && row["actor"] == format!("ide via MCP ({CLIENT} via vigil-controller mcp)")),
        "{audit}"
    );
}
