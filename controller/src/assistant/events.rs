//! The chat stream's events, exactly as DESIGN §8 names them: each is an SSE event with
//! an `event:` name and one JSON `data:` line.

use serde_json::{Value, json};

/// One event of `POST /api/ai/chat`.
#[derive(Debug, Clone, PartialEq)]
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
    /// A chunk of a running command's output.
    ToolOutput {
        tool_call_id: String,
        stream: &'static str,
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
    ApprovalNeeded {
        approval_id: String,
        tool_call_id: String,
        command: String,
        target: String,
        risk: String,
        reasons: Vec<String>,
        diff: Option<String>,
        expires_at: i64,
    },
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
    Error { code: String, message: String },
}

impl ChatEvent {
    /// The SSE event name.
    pub fn name(&self) -> &'static str {
        match self {
            ChatEvent::Session { .. } => "session",
            ChatEvent::Content { .. } => "content",
            ChatEvent::ContentReplaced { .. } => "content_replaced",
            ChatEvent::ToolStart { .. } => "tool_start",
            ChatEvent::ToolOutput { .. } => "tool_output",
            ChatEvent::ToolEnd { .. } => "tool_end",
            ChatEvent::ApprovalNeeded { .. } => "approval_needed",
            ChatEvent::ApprovalResolved { .. } => "approval_resolved",
            ChatEvent::Done { .. } => "done",
            ChatEvent::Error { .. } => "error",
        }
    }

    /// The JSON data.
    pub fn data(&self) -> Value {
        match self {
            ChatEvent::Session {
                session_id,
                control_level,
            } => {
                json!({ "session_id": session_id, "control_level": control_level })
            }
            ChatEvent::Content { text } => json!({ "text": text }),
            ChatEvent::ContentReplaced { text, reason } => {
                json!({ "text": text, "reason": reason })
            }
            ChatEvent::ToolStart {
                tool_call_id,
                name,
                input,
            } => {
                json!({ "tool_call_id": tool_call_id, "name": name, "input": input })
            }
            ChatEvent::ToolOutput {
                tool_call_id,
                stream,
                text,
            } => {
                json!({ "tool_call_id": tool_call_id, "stream": stream, "text": text })
            }
            ChatEvent::ToolEnd {
                tool_call_id,
                name,
                ok,
                error_code,
                duration_ms,
            } => json!({
                "tool_call_id": tool_call_id, "name": name, "ok": ok,
                "error_code": error_code, "duration_ms": duration_ms,
            }),
            ChatEvent::ApprovalNeeded {
                approval_id,
                tool_call_id,
                command,
                target,
                risk,
                reasons,
                diff,
                expires_at,
            } => json!({
                "approval_id": approval_id, "tool_call_id": tool_call_id, "command": command,
                "target": target, "risk": risk, "reasons": reasons, "diff": diff,
                "expires_at": expires_at,
            }),
            ChatEvent::ApprovalResolved {
                approval_id,
                decision,
                reason,
            } => {
                json!({ "approval_id": approval_id, "decision": decision, "reason": reason })
            }
            ChatEvent::Done {
                session_id,
                turns,
                tool_calls,
                input_tokens,
                output_tokens,
            } => json!({
                "session_id": session_id, "turns": turns, "tool_calls": tool_calls,
                "input_tokens": input_tokens, "output_tokens": output_tokens,
            }),
            ChatEvent::Error { code, message } => json!({ "code": code, "message": message }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_carry_the_exact_names_and_fields() {
        let end = ChatEvent::ToolEnd {
            tool_call_id: "c1".into(),
            name: "read".into(),
            ok: true,
            error_code: None,
            duration_ms: 5,
        };
        assert_eq!(end.name(), "tool_end");
        let data = end.data();
        let mut keys: Vec<_> = data.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        assert_eq!(
            keys,
            ["duration_ms", "error_code", "name", "ok", "tool_call_id"]
        );
        assert!(data["error_code"].is_null());
        let done = ChatEvent::Done {
            session_id: "s".into(),
            turns: 1,
            tool_calls: 0,
            input_tokens: 3,
            output_tokens: 4,
        };
        assert_eq!(done.name(), "done");
        assert_eq!(done.data()["output_tokens"], 4);
    }
}
