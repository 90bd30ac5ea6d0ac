//! End-to-end chat: a real controller and a real agent, with the model replaced at its
//! HTTP boundary by the scripted model server (OpenAI-compatible or Anthropic streaming).
//! The gates ([`gates`]), writes through approvals ([`writes`]), and bad input and
//! failures ([`robustness`]).

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::print_stderr)]

/// Runs the scenario `fn NAME(protocol)` as two tests, `NAME::openai` and
/// `NAME::anthropic`: every scenario holds over both streaming protocols.
macro_rules! both_protocols {
    ($scenario:ident) => {
        mod $scenario {
            #[tokio::test(flavor = "multi_thread")]
            async fn openai() {
                super::$scenario(vigil_tests::model_server::Protocol::OpenAi).await;
            }

            #[tokio::test(flavor = "multi_thread")]
            async fn anthropic() {
                super::$scenario(vigil_tests::model_server::Protocol::Anthropic).await;
            }
        }
    };
}

mod gates;
mod knowledge;
mod local_models;
mod long;
mod mcp_servers;
mod robustness;
mod routing;
mod secrets;
mod writes;

use std::time::Duration;

use serde_json::{Value, json};
use vigil_tests::chat::{ChatEvent, ChatHost, ChatStream, scripted_llm_args};
use vigil_tests::model_server::{Protocol, ScriptedModel};
use vigil_tests::{Agent, Controller};

/// Hang guard for a whole turn (not a timing assertion).
const TURN: Duration = Duration::from_secs(60);

/// A controller pointed at a scripted model, and one agent on this host.
struct Env {
    ctrl: Controller,
    agent: Agent,
    model: ScriptedModel,
    /// The agent's host resource id (`host:<agent>`).
    host: String,
}

impl Env {
    async fn start(model: ScriptedModel, protocol: Protocol, extra: &[&str]) -> Env {
        let mut args = scripted_llm_args(&model, protocol);
        args.extend(extra.iter().map(|s| s.to_string()));
        let ChatHost { ctrl, agent, host } = ChatHost::start(args).await;
        Env {
            ctrl,
            agent,
            model,
            host,
        }
    }

    async fn openai(extra: &[&str]) -> Env {
        Env::with(Protocol::OpenAi, extra).await
    }

    async fn with(protocol: Protocol, extra: &[&str]) -> Env {
        Env::start(ScriptedModel::start(protocol).await, protocol, extra).await
    }

    /// Starts a turn with `message` in `session` (a new one when `None`).
    async fn chat(&self, message: &str, session: Option<&str>, level: Option<&str>) -> ChatStream {
        let mut body = json!({ "message": message });
        if let Some(session) = session {
            body["session_id"] = json!(session);
        }
        if let Some(level) = level {
            body["control_level"] = json!(level);
        }
        self.ctrl
            .api
            .chat(&body)
            .await
            .unwrap_or_else(|(status, body)| panic!("chat refused: {status} {body}"))
    }

    /// Runs a whole turn and returns its events.
    async fn turn(&self, message: &str, level: Option<&str>) -> Vec<ChatEvent> {
        self.chat(message, None, level).await.finish(TURN).await
    }
}

/// `(name, arguments)` of a tool call.
fn call(name: &str, args: Value) -> (String, Value) {
    (name.to_owned(), args)
}

/// The `tool_end` events' `(name, ok, error_code)`.
fn ends(events: &[ChatEvent]) -> Vec<(String, bool, Option<String>)> {
    vigil_tests::chat::named(events, "tool_end")
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_owned(),
                e["ok"].as_bool().unwrap(),
                e["error_code"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

/// The tool results the model received, parsed, in order (OpenAI and Anthropic shapes).
fn tool_results(request: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for message in request["messages"].as_array().into_iter().flatten() {
        if message["role"] == "tool" {
            out.push(
                serde_json::from_str(message["content"].as_str().unwrap_or("null"))
                    .unwrap_or(Value::Null),
            );
        }
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" {
                let text = block["content"]
                    .as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| {
                        block["content"]
                            .as_array()
                            .and_then(|b| b.first())
                            .and_then(|b| b["text"].as_str())
                            .unwrap_or("null")
                            .to_owned()
                    });
                out.push(serde_json::from_str(&text).unwrap_or(Value::Null));
            }
        }
    }
    out
}

/// The last tool result the model received in its latest request.
fn last_result(model: &ScriptedModel) -> Value {
    let requests = model.requests();
    tool_results(requests.last().expect("a request"))
        .pop()
        .expect("a tool result")
}
