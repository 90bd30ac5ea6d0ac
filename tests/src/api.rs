//! The controller's HTTP API as the tests use it.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use serde_json::{Value, json};
use std::time::Instant;
use vigil_shared::grant::{GrantBody, GrantSigningKey, NONCE_LEN};
use vigil_shared::ids::{AgentId, ExecTarget};

/// An HTTP client bound to one controller and its admin token.
#[derive(Debug, Clone)]
pub struct Api {
    base: String,
    token: String,
    client: reqwest::Client,
}

/// The JSON result of a finished command: the controller's own type.
pub use vigil_controller::exec::ExecOutcome;

/// One server-sent event (as `eventsource-stream` decodes it; its fields `event` and
/// `data` read through) with the time it arrived.
#[derive(Debug, Clone)]
pub struct SseEvent {
    pub sse: eventsource_stream::Event,
    pub at: Instant,
}

impl SseEvent {
    /// `sse`, arrived now.
    pub fn now(sse: eventsource_stream::Event) -> SseEvent {
        SseEvent {
            sse,
            at: Instant::now(),
        }
    }
}

impl std::ops::Deref for SseEvent {
    type Target = eventsource_stream::Event;

    fn deref(&self) -> &Self::Target {
        &self.sse
    }
}

/// A grant the test signs with the controller's key, for `raw-exec`.
#[derive(Debug, Clone)]
pub struct RawGrant {
    pub body: GrantBody,
    pub signature: Vec<u8>,
}

impl RawGrant {
    /// A valid grant for `command` on `agent`'s host, issued now for 60 s.
    pub fn new(key: &GrantSigningKey, agent: &str, command: &str) -> RawGrant {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_secs() as i64;
        let mut nonce = vec![0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).expect("random");
        let body = GrantBody {
            approval_id: format!("test-{}", hex::encode(&nonce[..4])),
            agent_id: agent.parse::<AgentId>().expect("agent id"),
            target: ExecTarget::Host,
            command: command.as_bytes().to_vec(),
            issued_at: now,
            expires_at: now + 60,
            nonce,
        };
        RawGrant::signed(key, body)
    }

    /// Sign an arbitrary body.
    pub fn signed(key: &GrantSigningKey, body: GrantBody) -> RawGrant {
        let signature = body.sign(key).to_vec();
        RawGrant { body, signature }
    }

    fn to_json(&self) -> Value {
        json!({
            "approval_id": self.body.approval_id,
            "agent_id": self.body.agent_id.to_string(),
            "target": self.body.target.to_string(),
            "command_b64": B64.encode(&self.body.command),
            "issued_at": self.body.issued_at,
            "expires_at": self.body.expires_at,
            "nonce_b64": B64.encode(&self.body.nonce),
            "signature_b64": B64.encode(&self.signature),
        })
    }
}

impl Api {
    pub fn new(base: String, token: String) -> Api {
        Api {
            base,
            token,
            client: reqwest::Client::new(),
        }
    }

    fn req(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token)
    }

    /// `GET /api/agents`.
    pub async fn agents(&self) -> Vec<Value> {
        let r = self
            .req(reqwest::Method::GET, "/api/agents")
            .send()
            .await
            .expect("GET /api/agents");
        assert!(r.status().is_success(), "GET /api/agents: {}", r.status());
        r.json().await.expect("agents json")
    }

    /// Whether the agent shows as connected.
    pub async fn connected(&self, agent: &str) -> bool {
        self.agents()
            .await
            .iter()
            .any(|a| a["id"] == agent && a["connected"] == true)
    }

    /// `POST /api/agents/{id}/revoke`.
    pub async fn revoke(&self, agent: &str) -> reqwest::StatusCode {
        self.req(
            reqwest::Method::POST,
            &format!("/api/agents/{agent}/revoke"),
        )
        .send()
        .await
        .expect("revoke")
        .status()
    }

    /// `POST /api/exec` as JSON: `Ok(outcome)` or `Err((status, error body))`.
    pub async fn exec_json(&self, agent: &str, command: &str) -> Result<ExecOutcome, (u16, Value)> {
        let body = json!({"agent": agent, "command": command});
        self.json_call("/api/exec", body).await
    }

    /// `POST /api/exec` routed by resource id (no agent), as JSON.
    pub async fn exec_resource_json(
        &self,
        resource: &str,
        command: &str,
    ) -> Result<ExecOutcome, (u16, Value)> {
        let body = json!({"target": resource, "command": command});
        self.json_call("/api/exec", body).await
    }

    /// `POST /api/exec` routed by resource id that must be refused: `(status, error code,
    /// whole body)`; panics when the command ran.
    pub async fn exec_resource_refused(
        &self,
        resource: &str,
        command: &str,
    ) -> (u16, String, Value) {
        match self.exec_resource_json(resource, command).await {
            Ok(out) => panic!("{command:?} in {resource} ran: {out:?}"),
            Err((status, body)) => {
                let code = body["error"]["code"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                (status, code, body)
            }
        }
    }

    /// `POST /api/exec` routed by resource id, streamed as server-sent events.
    pub async fn exec_resource_sse(
        &self,
        resource: &str,
        command: &str,
    ) -> Result<Vec<SseEvent>, (u16, Value)> {
        self.sse_call("/api/exec", json!({"target": resource, "command": command}))
            .await
    }

    /// `GET path` as JSON: `(status, body)`.
    pub async fn get(&self, path: &str) -> (u16, Value) {
        let r = self
            .req(reqwest::Method::GET, path)
            .send()
            .await
            .unwrap_or_else(|e| panic!("GET {path}: {e}"));
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// `GET path` as text: `(status, body)`.
    pub async fn get_text(&self, path: &str) -> (u16, String) {
        let r = self
            .req(reqwest::Method::GET, path)
            .send()
            .await
            .unwrap_or_else(|e| panic!("GET {path}: {e}"));
        let status = r.status().as_u16();
        (status, r.text().await.unwrap_or_default())
    }

    /// `GET /api/resources?q=…` (must succeed).
    pub async fn resources(&self, query: &str) -> Vec<Value> {
        let path = format!("/api/resources?q={}", urlencode(query));
        let (status, body) = self.get(&path).await;
        assert_eq!(status, 200, "GET {path}: {body}");
        body.as_array().cloned().unwrap_or_default()
    }

    /// `GET /api/resources/{id}`: `Some(resource)` or `None` on 404.
    pub async fn resource(&self, id: &str) -> Option<Value> {
        let (status, body) = self.get(&format!("/api/resources/{}", urlencode(id))).await;
        match status {
            200 => Some(body),
            404 => None,
            other => panic!("GET /api/resources/{id}: {other} {body}"),
        }
    }

    /// `POST /api/exec` streamed as server-sent events.
    pub async fn exec_sse(
        &self,
        agent: &str,
        command: &str,
    ) -> Result<Vec<SseEvent>, (u16, Value)> {
        self.sse_call("/api/exec", json!({"agent": agent, "command": command}))
            .await
    }

    /// `POST /api/raw-exec` (controller started with `--test-raw-exec`), as JSON.
    pub async fn raw_exec_json(
        &self,
        agent: &str,
        mode: &str,
        command: &str,
        grant: Option<&RawGrant>,
        extra: Value,
    ) -> Result<ExecOutcome, (u16, Value)> {
        self.json_call(
            "/api/raw-exec",
            raw_body(agent, mode, command, grant, extra),
        )
        .await
    }

    /// `POST /api/raw-exec`, streamed.
    pub async fn raw_exec_sse(
        &self,
        agent: &str,
        mode: &str,
        command: &str,
        grant: Option<&RawGrant>,
        extra: Value,
    ) -> Result<Vec<SseEvent>, (u16, Value)> {
        self.sse_call(
            "/api/raw-exec",
            raw_body(agent, mode, command, grant, extra),
        )
        .await
    }

    async fn json_call(&self, path: &str, body: Value) -> Result<ExecOutcome, (u16, Value)> {
        let r = self
            .req(reqwest::Method::POST, path)
            .header("accept", "application/json")
            .json(&body)
            .send()
            .await
            .expect("POST");
        let status = r.status().as_u16();
        let value: Value = r.json().await.unwrap_or(Value::Null);
        if (200..300).contains(&status) {
            Ok(serde_json::from_value(value.clone())
                .unwrap_or_else(|e| panic!("bad outcome {value}: {e}")))
        } else {
            Err((status, value))
        }
    }

    async fn sse_call(&self, path: &str, body: Value) -> Result<Vec<SseEvent>, (u16, Value)> {
        let r = self
            .req(reqwest::Method::POST, path)
            .json(&body)
            .send()
            .await
            .expect("POST");
        let status = r.status().as_u16();
        if !(200..300).contains(&status) {
            return Err((status, r.json().await.unwrap_or(Value::Null)));
        }
        let mut events = Vec::new();
        let mut stream = r.bytes_stream().eventsource();
        while let Some(ev) = stream.next().await {
            let ev = ev.expect("sse event");
            let done = ev.event == "exit" || ev.event == "error";
            events.push(SseEvent::now(ev));
            if done {
                break;
            }
        }
        Ok(events)
    }

    /// `POST path` with a JSON body: `(status, JSON answer)`.
    pub async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let r = self
            .req(reqwest::Method::POST, path)
            .json(body)
            .send()
            .await
            .expect("POST");
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// `POST /api/exec/fanout` answered as one JSON document: `(status, answer)`.
    pub async fn fanout_json(&self, body: &Value) -> (u16, Value) {
        let r = self
            .req(reqwest::Method::POST, "/api/exec/fanout")
            .header("accept", "application/json")
            .json(body)
            .send()
            .await
            .expect("POST /api/exec/fanout");
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// `DELETE path`: the status.
    pub async fn delete(&self, path: &str) -> u16 {
        self.req(reqwest::Method::DELETE, path)
            .send()
            .await
            .expect("DELETE")
            .status()
            .as_u16()
    }

    /// The base URL (`http://127.0.0.1:PORT`).
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The bearer token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// An arbitrary request, for malformed-input tests.
    pub async fn raw_request(
        &self,
        method: reqwest::Method,
        path: &str,
        body: &str,
        token: Option<&str>,
    ) -> (u16, Value) {
        let mut b = self
            .client
            .request(method, format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body.to_owned());
        if let Some(t) = token {
            b = b.bearer_auth(t);
        }
        let r = b.send().await.expect("request");
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }
}

fn raw_body(
    agent: &str,
    mode: &str,
    command: &str,
    grant: Option<&RawGrant>,
    extra: Value,
) -> Value {
    let mut body = json!({"agent": agent, "mode": mode, "command": command});
    if let Some(g) = grant {
        body["grant"] = g.to_json();
    }
    if let Value::Object(map) = extra {
        for (k, v) in map {
            body[k] = v;
        }
    }
    body
}

/// Percent-encode everything but unreserved characters.
pub fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
