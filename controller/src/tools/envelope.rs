//! The one answer of every tool (invariant 8):
//! `{ok, data | error{code, message, blocked, failed, retryable, details{recovery_hint,
//! auto_recoverable, …}}, meta}`, serialized as the tool result's text.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The error codes of the envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    StrictResolution,
    FsmBlocked,
    RoutingMismatch,
    ApprovalRequired,
    NotFound,
    ActionNotAllowed,
    PolicyBlocked,
    InvalidInput,
    ExecutionFailed,
    LoopDetected,
    UnboundedCommand,
    AgentOffline,
    Timeout,
}

impl ErrorCode {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::StrictResolution => "STRICT_RESOLUTION",
            ErrorCode::FsmBlocked => "FSM_BLOCKED",
            ErrorCode::RoutingMismatch => "ROUTING_MISMATCH",
            ErrorCode::ApprovalRequired => "APPROVAL_REQUIRED",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::ActionNotAllowed => "ACTION_NOT_ALLOWED",
            ErrorCode::PolicyBlocked => "POLICY_BLOCKED",
            ErrorCode::InvalidInput => "INVALID_INPUT",
            ErrorCode::ExecutionFailed => "EXECUTION_FAILED",
            ErrorCode::LoopDetected => "LOOP_DETECTED",
            ErrorCode::UnboundedCommand => "UNBOUNDED_COMMAND",
            ErrorCode::AgentOffline => "AGENT_OFFLINE",
            ErrorCode::Timeout => "TIMEOUT",
        }
    }
}

/// The error half of an envelope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolError {
    pub code: ErrorCode,
    pub message: String,
    /// A gate refused the call (nothing ran).
    pub blocked: bool,
    /// The call ran, or tried to, and failed.
    pub failed: bool,
    /// The same call may succeed later.
    pub retryable: bool,
    /// `recovery_hint`, `auto_recoverable`, `suggested_rewrite`, `suggested_target`, …
    pub details: Value,
}

/// A tool's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Box<ToolError>>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub meta: Map<String, Value>,
}

fn details(details: Value) -> Value {
    match details {
        Value::Object(_) => details,
        _ => json!({}),
    }
}

impl Envelope {
    /// Success with `data`.
    pub fn success(data: Value) -> Envelope {
        Envelope {
            ok: true,
            data: Some(data),
            error: None,
            meta: Map::new(),
        }
    }

    /// A gate refused the call; nothing ran.
    pub fn blocked(code: ErrorCode, message: impl Into<String>, extra: Value) -> Envelope {
        Envelope {
            ok: false,
            data: None,
            error: Some(Box::new(ToolError {
                code,
                message: message.into(),
                blocked: true,
                failed: false,
                retryable: false,
                details: details(extra),
            })),
            meta: Map::new(),
        }
    }

    /// The call ran (or tried to) and failed.
    pub fn failed(
        code: ErrorCode,
        message: impl Into<String>,
        retryable: bool,
        extra: Value,
    ) -> Envelope {
        Envelope {
            ok: false,
            data: None,
            error: Some(Box::new(ToolError {
                code,
                message: message.into(),
                blocked: false,
                failed: true,
                retryable,
                details: details(extra),
            })),
            meta: Map::new(),
        }
    }

    /// The error code, when it failed.
    pub fn code(&self) -> Option<ErrorCode> {
        self.error.as_ref().map(|e| e.code)
    }

    /// The error's details, when it failed.
    pub fn error_details(&self) -> Option<&Map<String, Value>> {
        self.error.as_ref().and_then(|e| e.details.as_object())
    }

    /// Sets one `meta` key.
    pub fn set_meta(&mut self, key: &str, value: Value) {
        self.meta.insert(key.to_owned(), value);
    }

    /// The JSON text the model reads.
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| r#"{"ok":false}"#.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_have_the_contract_shape() {
        let blocked = Envelope::blocked(
            ErrorCode::UnboundedCommand,
            "would not end",
            json!({"auto_recoverable": true, "suggested_rewrite": "tail -n 200 f"}),
        );
        let value: Value = serde_json::from_str(&blocked.to_text()).unwrap();
        assert_eq!(value["ok"], false);
        assert_eq!(value["error"]["code"], "UNBOUNDED_COMMAND");
        assert_eq!(value["error"]["blocked"], true);
        assert_eq!(value["error"]["failed"], false);
        assert_eq!(
            value["error"]["details"]["suggested_rewrite"],
            "tail -n 200 f"
        );
        assert!(value.get("data").is_none());
        let ok = Envelope::success(json!({"stdout": "up"}));
        assert_eq!(ok.code(), None);
        assert_eq!(serde_json::from_str::<Envelope>(&ok.to_text()).unwrap(), ok);
    }
}
