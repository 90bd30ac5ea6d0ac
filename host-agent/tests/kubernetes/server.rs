//! A stand-in Kubernetes API server on 127.0.0.1 for the agent's client (`kube_api`): lists (honouring
//! `limit`/`continue` and the `type=Warning` field selector) from the recorded fixtures in
//! `tests/fixtures/kubernetes/`, pod GETs, watches (one `MODIFIED` line, then held open),
//! pod logs, and pod exec over a `v4.channel.k8s.io` websocket. Every request's path and
//! decoded query are recorded for the tests to check.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::Response;
use futures_util::{SinkExt, StreamExt, stream};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role;

/// The text every log call returns.
pub const LOG_TEXT: &str = "2025-06-01 starting\n2025-06-01 listening on :8096\n";
/// Bytes of stdout an exec of a payload containing `flood` sends before holding open.
pub const FLOOD_BYTES: usize = 64 * 1024;

/// One request the server saw.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    pub query: Vec<(String, String)>,
}

impl Seen {
    /// The values of one query parameter, in order.
    pub fn values(&self, key: &str) -> Vec<&str> {
        self.query
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

/// A running fake API server.
#[derive(Debug, Clone)]
pub struct FakeApi {
    pub url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl FakeApi {
    /// Everything the server saw so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// A client pointed at this server, without authentication.
    pub fn client(&self) -> vigil_agent::kube_api::Client {
        let config =
            vigil_agent::kube_api::Config::new(self.url.parse().unwrap_or_else(|e| panic!("{e}")));
        vigil_agent::kube_api::Client::new(config).unwrap_or_else(|e| panic!("{e}"))
    }
}

/// Start the server on an ephemeral port.
pub async fn start() -> FakeApi {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let app = axum::Router::new()
        .fallback(handle)
        .with_state(seen.clone());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    FakeApi {
        url: format!("http://{addr}"),
        seen,
    }
}

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/kubernetes/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn parse_query(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn json_response(status: StatusCode, value: &Value) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(value.to_string()))
        .unwrap_or_else(|e| panic!("{e}"))
}

fn not_found(what: &str) -> Response {
    json_response(
        StatusCode::NOT_FOUND,
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": format!("{what} not found"), "reason": "NotFound", "code": 404}),
    )
}

/// A list from a fixture, one page of `limit` items from the `continue` offset.
fn list(file: &str, seen: &Seen) -> Response {
    let mut list = fixture(file);
    let mut items = list["items"].as_array().cloned().unwrap_or_default();
    if seen.values("fieldSelector") == ["type=Warning"] {
        items.retain(|e| e["type"] == "Warning");
    }
    let offset: usize = seen
        .values("continue")
        .first()
        .and_then(|t| t.strip_prefix("offset-")?.parse().ok())
        .unwrap_or(0)
        .min(items.len());
    let limit: usize = seen
        .values("limit")
        .first()
        .and_then(|l| l.parse().ok())
        .unwrap_or(usize::MAX);
    let end = offset.saturating_add(limit).min(items.len());
    if end < items.len() {
        list["metadata"]["continue"] = json!(format!("offset-{end}"));
        list["metadata"]["remainingItemCount"] = json!(items.len() - end);
    }
    list["items"] = Value::Array(items[offset..end].to_vec());
    json_response(StatusCode::OK, &list)
}

fn find_pod(ns: &str, name: &str) -> Option<Value> {
    let pods = fixture("pods.json");
    pods["items"]
        .as_array()?
        .iter()
        .find(|p| p["metadata"]["namespace"] == ns && p["metadata"]["name"] == name)
        .cloned()
}

/// One `MODIFIED` event of the kind's first fixture object, then the stream stays open.
fn watch(file: &str) -> Response {
    let object = fixture(file)["items"][0].clone();
    let line = format!("{}\n", json!({"type": "MODIFIED", "object": object}));
    let body = stream::once(async move { Ok::<_, std::io::Error>(line) }).chain(stream::pending());
    Response::builder()
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from_stream(body))
        .unwrap_or_else(|e| panic!("{e}"))
}

async fn handle(State(log): State<Arc<Mutex<Vec<Seen>>>>, mut req: Request) -> Response {
    let seen = Seen {
        path: req.uri().path().to_owned(),
        query: parse_query(req.uri().query().unwrap_or("")),
    };
    log.lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(seen.clone());
    let parts: Vec<&str> = seen.path.trim_matches('/').split('/').collect();
    let watching = seen.values("watch") == ["true"];
    match parts.as_slice() {
        ["version"] => json_response(
            StatusCode::OK,
            &json!({"major": "1", "minor": "33", "gitVersion": "v1.33.1+k3s1",
                "gitCommit": "8a2d5d6ef1b3", "gitTreeState": "clean", "buildDate": "2025-05-20T00:00:00Z",
                "goVersion": "go1.24.2", "compiler": "gc", "platform": "linux/amd64"}),
        ),
        ["api", "v1", "pods"] if watching => watch("pods.json"),
        ["apis", "apps", "v1", "deployments"] if watching => watch("deployments.json"),
        ["api", "v1", "nodes"] => list("nodes.json", &seen),
        ["api", "v1", "namespaces"] => list("namespaces.json", &seen),
        ["api", "v1", "pods"] => list("pods.json", &seen),
        ["apis", "apps", "v1", "deployments"] => list("deployments.json", &seen),
        ["api", "v1", "events"] => list("events.json", &seen),
        ["api", "v1", "namespaces", ns, "pods", name] => match find_pod(ns, name) {
            Some(pod) => json_response(StatusCode::OK, &pod),
            None => not_found(&format!("pods \"{name}\"")),
        },
        ["api", "v1", "namespaces", ns, "pods", name, "log"] => match find_pod(ns, name) {
            Some(_) => Response::new(Body::from(LOG_TEXT)),
            None => not_found(&format!("pods \"{name}\"")),
        },
        ["api", "v1", "namespaces", _, "pods", _, "exec"] => {
            let payload = seen.values("command").get(2).map(|c| (*c).to_owned());
            upgrade(&mut req, payload.unwrap_or_default())
        }
        _ => not_found(&seen.path),
    }
}

/// Accept the exec websocket and play the script the payload asks for.
fn upgrade(req: &mut Request, payload: String) -> Response {
    let key = req
        .headers()
        .get(header::SEC_WEBSOCKET_KEY)
        .map(|k| derive_accept_key(k.as_bytes()))
        .unwrap_or_default();
    let on_upgrade = hyper::upgrade::on(req);
    tokio::spawn(async move {
        let Ok(upgraded) = on_upgrade.await else {
            return;
        };
        let ws = WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, None).await;
        script(ws, &payload).await;
    });
    Response::builder()
        .status(StatusCode::SWITCHING_PROTOCOLS)
        .header(header::CONNECTION, "Upgrade")
        .header(header::UPGRADE, "websocket")
        .header(header::SEC_WEBSOCKET_ACCEPT, key)
        .header(header::SEC_WEBSOCKET_PROTOCOL, "v4.channel.k8s.io")
        .body(Body::empty())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn frame(channel: u8, data: &[u8]) -> Message {
    let mut bytes = vec![channel];
    bytes.extend_from_slice(data);
    Message::binary(bytes)
}

/// `flood`: lots of stdout, then silence; `sleep`: silence; `exit 3`: output and exit 3;
/// anything else: output and success. Silence lasts until the client goes away.
async fn script<S>(mut ws: WebSocketStream<S>, payload: &str)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    // Like the API server: an empty frame on each output channel first.
    for channel in [1, 2, 3] {
        let _ = ws.send(frame(channel, b"")).await;
    }
    if payload.contains("flood") {
        for _ in 0..FLOOD_BYTES / 1024 {
            let _ = ws.send(frame(1, &[b'x'; 1024])).await;
        }
    }
    if payload.contains("flood") || payload.contains("sleep") {
        while let Some(Ok(_)) = ws.next().await {}
        return;
    }
    let _ = ws
        .send(frame(1, format!("ran: {payload}\n").as_bytes()))
        .await;
    let status = if payload.contains("exit 3") {
        let _ = ws.send(frame(2, b"oops\n")).await;
        json!({"metadata": {}, "status": "Failure", "message": "command terminated with non-zero exit code: error executing command [sh -c exit 3], exit code 3",
            "reason": "NonZeroExitCode", "details": {"causes": [{"reason": "ExitCode", "message": "3"}]}})
    } else {
        json!({"metadata": {}, "status": "Success"})
    };
    let _ = ws.send(frame(3, status.to_string().as_bytes())).await;
    let _ = ws.close(None).await;
}
