//! The chat stream's events (DESIGN §8), decoded from the CLI's SSE parser into typed
//! values. Unknown event names and fields are ignored, missing fields default, so a newer
//! controller does not break an older CLI.

use serde::Deserialize;
use serde_json::Value;

use crate::cli::sse::SseEvent;

/// `approval_needed`: a write waits for a person.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
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
#[derive(Debug, Clone, PartialEq)]
pub enum ChatEvent {
    /// The session and its control level (first event).
    Session {
        session_id: String,
        control_level: String,
    },
    /// A delta of the answer.
    Content { text: String },
    /// The answer so far is withdrawn and replaced.
    ContentReplaced { text: String, reason: String },
    /// A tool call starts.
    ToolStart {
        tool_call_id: String,
        name: String,
        input: Value,
    },
    /// A chunk of a running command's output.
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
    /// A person (or the clock) decided.
    ApprovalResolved {
        approval_id: String,
        decision: String,
        reason: Option<String>,
    },
    /// The turn ended (last event).
    Done { turns: u64, tool_calls: u64 },
    /// Something went wrong.
    Error { code: String, message: String },
    /// An event this CLI does not know.
    Other,
}

fn text(data: &Value, key: &str) -> String {
    match &data[key] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn optional(data: &Value, key: &str) -> Option<String> {
    data[key].as_str().map(str::to_owned)
}

impl ChatEvent {
    /// Decodes one server-sent event (data that is not JSON decodes as empty fields).
    pub fn parse(event: &SseEvent) -> ChatEvent {
        let data: Value = serde_json::from_str(&event.data).unwrap_or(Value::Null);
        let d = &data;
        match event.event.as_str() {
            "session" => ChatEvent::Session {
                session_id: text(d, "session_id"),
                control_level: text(d, "control_level"),
            },
            "content" => ChatEvent::Content {
                text: text(d, "text"),
            },
            "content_replaced" => ChatEvent::ContentReplaced {
                text: text(d, "text"),
                reason: text(d, "reason"),
            },
            "tool_start" => ChatEvent::ToolStart {
                tool_call_id: text(d, "tool_call_id"),
                name: text(d, "name"),
                input: d["input"].clone(),
            },
            "tool_output" => ChatEvent::ToolOutput {
                tool_call_id: text(d, "tool_call_id"),
                stream: text(d, "stream"),
                text: text(d, "text"),
            },
            "tool_end" => ChatEvent::ToolEnd {
                tool_call_id: text(d, "tool_call_id"),
                name: text(d, "name"),
                ok: d["ok"].as_bool().unwrap_or(false),
                error_code: optional(d, "error_code"),
                duration_ms: d["duration_ms"].as_u64().unwrap_or(0),
            },
            "approval_needed" => {
                ChatEvent::ApprovalNeeded(serde_json::from_value(data).unwrap_or_default())
            }
            "approval_resolved" => ChatEvent::ApprovalResolved {
                approval_id: text(d, "approval_id"),
                decision: text(d, "decision"),
                reason: optional(d, "reason"),
            },
            "done" => ChatEvent::Done {
                turns: d["turns"].as_u64().unwrap_or(0),
                tool_calls: d["tool_calls"].as_u64().unwrap_or(0),
            },
            "error" => ChatEvent::Error {
                code: text(d, "code"),
                message: text(d, "message"),
            },
            _ => ChatEvent::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sse(event: &str, data: &str) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
        }
    }

    #[test]
    fn decodes_the_contract_events() {
        let end = ChatEvent::parse(&sse(
            "tool_end",
            r#"{"tool_call_id":"c1","name":"read","ok":false,"error_code":"POLICY_BLOCKED","duration_ms":12}"#,
        ));
        assert_eq!(
            end,
            ChatEvent::ToolEnd {
                tool_call_id: "c1".into(),
                name: "read".into(),
                ok: false,
                error_code: Some("POLICY_BLOCKED".into()),
                duration_ms: 12,
            }
        );
        let needed = ChatEvent::parse(&sse(
            "approval_needed",
            r#"{"approval_id":"a1","tool_call_id":"c2","command":"touch /x","target":"host:h",
               "risk":"medium","reasons":["writes a file"],"diff":null,"expires_at":5,"new":1}"#,
        ));
        let ChatEvent::ApprovalNeeded(needed) = needed else {
            panic!("not approval_needed: {needed:?}");
        };
        assert_eq!(needed.approval_id, "a1");
        assert_eq!(needed.reasons, ["writes a file"]);
        assert_eq!(needed.diff, None);
        assert_eq!(
            ChatEvent::parse(&sse("error", r#"{"code":"MODEL_ERROR","message":"m"}"#)),
            ChatEvent::Error {
                code: "MODEL_ERROR".into(),
                message: "m".into()
            }
        );
        assert_eq!(ChatEvent::parse(&sse("future", "{}")), ChatEvent::Other);
        assert_eq!(
            ChatEvent::parse(&sse("content", "not json")),
            ChatEvent::Content {
                text: String::new()
            }
        );
    }
}
