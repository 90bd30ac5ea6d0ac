//! `vigil-controller chat` end to end: a real controller and agent, the model replaced by
//! the scripted server, and the chat driven in a real pseudo-terminal ([`terminal`]): a
//! streamed answer with a tool line, approvals answered `y` and with a reason, Ctrl-C
//! cancelling a turn, and the one-shot mode's output and exit codes.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::print_stderr)]

mod interactive;
mod oneshot;
mod terminal;

use serde_json::{Value, json};
use vigil_tests::chat::{ChatHost, scripted_llm_args};
use vigil_tests::model_server::{Protocol, ScriptedModel};
use vigil_tests::{bin, wait_until};

use terminal::{Terminal, WAIT};

/// A controller pointed at a scripted model, with one agent on this host.
struct Env {
    host: ChatHost,
    model: ScriptedModel,
}

impl Env {
    async fn start() -> Env {
        let model = ScriptedModel::start(Protocol::OpenAi).await;
        let host = ChatHost::start(scripted_llm_args(&model, Protocol::OpenAi)).await;
        Env { host, model }
    }

    /// The agent's host resource id.
    fn resource(&self) -> &str {
        &self.host.host
    }

    fn url(&self) -> String {
        self.host.ctrl.api.base().to_owned()
    }

    fn token(&self) -> String {
        self.host.ctrl.api.token().to_owned()
    }

    /// `vigil-controller chat --url …` in a pseudo-terminal, with the admin token, once
    /// its first prompt shows.
    async fn terminal(&self) -> Terminal {
        let args = vec!["chat".to_owned(), "--url".to_owned(), self.url()];
        let token = self.token();
        let term = Terminal::spawn(&bin("vigil-controller"), &args, &[("VIGIL_TOKEN", &token)]);
        term.wait_for("you> ").await;
        term
    }

    /// The only chat session's id.
    async fn only_session(&self) -> String {
        let (status, sessions) = self.host.ctrl.api.get("/api/ai/sessions").await;
        assert_eq!(status, 200, "{sessions}");
        let sessions = sessions.as_array().unwrap();
        assert_eq!(sessions.len(), 1, "{sessions:?}");
        sessions[0]["id"].as_str().unwrap().to_owned()
    }

    /// `GET /api/ai/sessions/{id}`.
    async fn session(&self, id: &str) -> Value {
        let (status, session) = self
            .host
            .ctrl
            .api
            .get(&format!("/api/ai/sessions/{id}"))
            .await;
        assert_eq!(status, 200, "{session}");
        session
    }
}

/// `(name, arguments)` of a tool call.
fn call(name: &str, args: Value) -> (String, Value) {
    (name.to_owned(), args)
}

/// A `control command` on `resource`.
fn control(resource: &str, command: &str) -> (String, Value) {
    call(
        "control",
        json!({"action": "command", "resource_id": resource, "command": command}),
    )
}

/// The read that verifies a write of `file` (a turn's answer after a write waits for one).
fn verify(resource: &str, file: &std::path::Path) -> (String, Value) {
    call(
        "read",
        json!({"action": "exec", "resource_id": resource, "command": format!("ls {}", file.display())}),
    )
}

/// Waits until `check` holds (a hang guard, not a timing assertion).
async fn eventually<F, Fut>(check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    wait_until(WAIT, check).await
}
