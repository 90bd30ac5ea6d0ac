//! The chat stream's events (the table in `docs/assistant.md`, "Chat API"): each is an SSE
//! event with an `event:` name and one JSON `data:` line. This is the one definition: the
//! server encodes it ([`ChatEvent::name`], [`ChatEvent::data`]), and the terminal chat and
//! the end-to-end tests decode it ([`ChatEvent::decode`]). An event name this version does
//! not know decodes to [`ChatEvent::Unknown`], so a newer controller does not break an
//! older client; a known event whose data does not fit is an error.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::StreamErrorCode;

/// `approval_needed`: a write waits for a person.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ApprovalNeeded {
    /// The approval's id (`POST /api/ai/approvals/{id}/approve|deny`).
    pub approval_id: String,
    /// The tool call that asked for the write.
    pub tool_call_id: String,
    /// The exact command.
    pub command: String,
    /// Where it runs.
    pub target: String,
    /// `low`, `medium`, `high` or `critical`.
    pub risk: String,
    /// The classifier's reasons.
    pub reasons: Vec<String>,
    /// A unified diff, for file edits.
    pub diff: Option<String>,
    /// Unix seconds after which the approval expires.
    pub expires_at: i64,
}

/// One event of `POST /api/ai/chat`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", content = "data", rename_all = "snake_case")]
pub enum ChatEvent {
    /// First event: the session and its control level.
    Session {
        session_id: String,
        control_level: String,
    },
    /// A delta of the visible answer.
    Content { text: String },
    /// The answer so far is withdrawn and replaced.
    ContentReplaced { text: String, reason: String },
    /// A tool call starts.
    ToolStart {
        tool_call_id: String,
        name: String,
        input: Value,
    },
    /// A chunk of a running command's output (`stream`: `stdout` or `stderr`).
    ToolOutput {
        tool_call_id: String,
        stream: String,
        text: String,
    },
    /// A tool call ended.
    ToolEnd {
        tool_call_id: String,
        name: String,
        ok: bool,
        error_code: Option<String>,
        duration_ms: u64,
    },
    /// A write waits for a person.
    ApprovalNeeded(ApprovalNeeded),
    /// A person (or the clock) decided: `approved`, `denied` or `expired`.
    ApprovalResolved {
        approval_id: String,
        decision: String,
        reason: Option<String>,
    },
    /// Last event.
    Done {
        session_id: String,
        turns: u32,
        tool_calls: u32,
        input_tokens: u64,
        output_tokens: u64,
    },
    /// Something went wrong (the turn may still end with `done`).
    Error {
        code: StreamErrorCode,
        message: String,
    },
    /// An event this version does not know (decoded only, never sent).
    #[serde(skip)]
    Unknown { event: String, data: Value },
}

/// Every event name of the contract, in the order of the table in `docs/assistant.md`.
pub const EVENT_NAMES: &[&str] = &[
    "session",
    "content",
    "content_replaced",
    "tool_start",
    "tool_output",
    "tool_end",
    "approval_needed",
    "approval_resolved",
    "done",
    "error",
];

impl ChatEvent {
    /// The SSE event name.
    pub fn name(&self) -> &str {
        match self {
            ChatEvent::Session { .. } => "session",
            ChatEvent::Content { .. } => "content",
            ChatEvent::ContentReplaced { .. } => "content_replaced",
            ChatEvent::ToolStart { .. } => "tool_start",
            ChatEvent::ToolOutput { .. } => "tool_output",
            ChatEvent::ToolEnd { .. } => "tool_end",
            ChatEvent::ApprovalNeeded(_) => "approval_needed",
            ChatEvent::ApprovalResolved { .. } => "approval_resolved",
            ChatEvent::Done { .. } => "done",
            ChatEvent::Error { .. } => "error",
            ChatEvent::Unknown { event, .. } => event,
        }
    }

    /// The JSON data.
    pub fn data(&self) -> Value {
        if let ChatEvent::Unknown { data, .. } = self {
            return data.clone();
        }
        match serde_json::to_value(self) {
            Ok(mut tagged) => tagged["data"].take(),
            // Every field is a string, a number, a bool or JSON: this cannot fail.
            Err(_) => Value::Null,
        }
    }

    /// Decodes one server-sent event: its name and its `data:` text.
    pub fn decode(event: &str, data: &str) -> Result<ChatEvent, String> {
        if !EVENT_NAMES.contains(&event) {
            let data = serde_json::from_str(data).unwrap_or_else(|_| Value::String(data.into()));
            return Ok(ChatEvent::Unknown {
                event: event.to_owned(),
                data,
            });
        }
        let data: Value = serde_json::from_str(data)
            .map_err(|e| format!("the data of a {event:?} event is not JSON: {e}"))?;
        serde_json::from_value(json!({ "event": event, "data": data }))
            .map_err(|e| format!("a {event:?} event does not fit the contract: {e}"))
    }
}

#[cfg(test)]
mod tests;
