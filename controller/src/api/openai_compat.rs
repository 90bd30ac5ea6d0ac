//! The OpenAI-compatible endpoint, so chat front ends (Open WebUI, LibreChat) and any
//! OpenAI SDK can use Vigil as their model: `GET /v1/models` and `POST
//! /v1/chat/completions`, streaming and not. The bearer token is a Vigil API token. Each
//! request is a turn in a new session that starts with the client's earlier messages; tool
//! activity and approvals appear in the text (an approval with its id and how to decide
//! it), since these clients know nothing of Vigil's events.

use std::convert::Infallible;

use axum::Json;
use axum::extract::{Extension, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_stream::wrappers::UnboundedReceiverStream;

use super::ApiState;
use super::auth::Principal;
use super::chat::KEEP_ALIVE;
use super::json_body::JsonBody;
use crate::assistant::ChatBody;
use crate::assistant::events::{ApprovalNeeded, ChatEvent};
use crate::clock::unix_now;
use crate::{Error, Result};

/// The model name Vigil answers to.
pub const MODEL: &str = "vigil";

/// A message of the request (content as text or as an array of text parts).
#[derive(Debug, Clone, Deserialize)]
pub struct CompatMessage {
    pub role: String,
    #[serde(default)]
    pub content: Value,
}

/// The body of `POST /v1/chat/completions`; fields Vigil does not use are accepted and
/// ignored (temperature, max_tokens, …), as the clients send them.
#[derive(Debug, Clone, Deserialize)]
pub struct CompletionBody {
    #[serde(default)]
    pub model: Option<String>,
    pub messages: Vec<CompatMessage>,
    #[serde(default)]
    pub stream: bool,
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// `GET /v1/models`.
pub async fn models() -> Json<Value> {
    Json(json!({
        "object": "list",
        "data": [{ "id": MODEL, "object": "model", "created": 0, "owned_by": "vigil" }],
    }))
}

/// The text a compat client sees for one chat event (None: nothing to show).
pub fn event_text(event: &ChatEvent) -> Option<String> {
    match event {
        ChatEvent::Content { text } => Some(text.clone()),
        ChatEvent::ContentReplaced { reason, .. } => Some(format!("\n\n[{reason}]\n\n")),
        ChatEvent::ToolStart { name, input, .. } => {
            let action = input
                .get("action")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let target = input
                .get("resource_id")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let what = input
                .get("command")
                .and_then(Value::as_str)
                .map(|c| format!(" `{c}`"))
                .unwrap_or_default();
            Some(format!("\n> {name} {action}{what} {target}\n"))
        }
        ChatEvent::ToolEnd {
            ok: false,
            error_code,
            ..
        } => Some(format!(
            "> refused or failed: {}\n",
            error_code.as_deref().unwrap_or("error")
        )),
        ChatEvent::ApprovalNeeded(ApprovalNeeded {
            approval_id,
            command,
            target,
            risk,
            ..
        }) => Some(format!(
            "\n**Approval needed** ({risk} risk): `{command}` on {target}.\nApprove with \
             `vigil-controller approvals approve {approval_id}` (or `POST /api/ai/approvals/{approval_id}/approve`), \
             deny with `vigil-controller approvals deny {approval_id} --reason …`. Waiting for a decision…\n"
        )),
        ChatEvent::ApprovalResolved {
            decision, reason, ..
        } => Some(format!(
            "> approval {decision}{}\n",
            reason
                .as_deref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default()
        )),
        ChatEvent::Error { code, message } => Some(format!("\n[{code}] {message}\n")),
        _ => None,
    }
}

/// `POST /v1/chat/completions`.
pub async fn completions(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    JsonBody(body): JsonBody<CompletionBody>,
) -> Result<Response> {
    let Some(last) = body.messages.iter().rposition(|m| m.role == "user") else {
        return Err(Error::InvalidInput("messages hold no user message".into()));
    };
    let message = text_of(&body.messages[last].content);
    let earlier: Vec<(String, String)> = body.messages[..last]
        .iter()
        .filter(|m| m.role == "user" || m.role == "assistant")
        .map(|m| (m.role.clone(), text_of(&m.content)))
        .collect();
    let caller = principal;
    let chat = ChatBody {
        session_id: None,
        message,
        mentions: Vec::new(),
        control_level: None,
    };
    let events = state
        .assistant
        .start_turn_with_history(caller, chat, earlier)
        .await?;
    let id = format!("chatcmpl-{}", uuid::Uuid::new_v4().simple());
    let model = body.model.unwrap_or_else(|| MODEL.into());
    let created = unix_now();
    if body.stream {
        let chunk = move |delta: Value, finish: Option<&str>, usage: Option<Value>| {
            let mut value = json!({
                "id": id, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
            });
            if let Some(usage) = usage {
                value["usage"] = usage;
            }
            Event::default().data(value.to_string())
        };
        let mut first = true;
        let stream = UnboundedReceiverStream::new(events).flat_map(move |event| {
            let mut out = Vec::new();
            if first {
                out.push(chunk(
                    json!({ "role": "assistant", "content": "" }),
                    None,
                    None,
                ));
                first = false;
            }
            if let Some(text) = event_text(&event) {
                out.push(chunk(json!({ "content": text }), None, None));
            }
            if let ChatEvent::Done {
                input_tokens,
                output_tokens,
                ..
            } = event
            {
                out.push(chunk(
                    json!({}),
                    Some("stop"),
                    Some(usage(input_tokens, output_tokens)),
                ));
                out.push(Event::default().data("[DONE]"));
            }
            futures_util::stream::iter(out.into_iter().map(Ok::<_, Infallible>))
        });
        return Ok(Sse::new(stream)
            .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
            .into_response());
    }
    let mut events = events;
    let (mut text, mut tokens) = (String::new(), (0, 0));
    while let Some(event) = events.recv().await {
        if let Some(part) = event_text(&event) {
            text.push_str(&part);
        }
        if let ChatEvent::Done {
            input_tokens,
            output_tokens,
            ..
        } = event
        {
            tokens = (input_tokens, output_tokens);
        }
    }
    Ok(Json(json!({
        "id": id, "object": "chat.completion", "created": created, "model": model,
        "choices": [{ "index": 0, "message": { "role": "assistant", "content": text.trim() }, "finish_reason": "stop" }],
        "usage": usage(tokens.0, tokens.1),
    }))
    .into_response())
}

fn usage(input: u64, output: u64) -> Value {
    json!({ "prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output })
}
