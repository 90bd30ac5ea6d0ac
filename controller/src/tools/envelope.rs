//! The one answer of every tool (invariant 8):
//! `{ok, data | error{code, message, blocked, failed, retryable, details{recovery_hint,
//! auto_recoverable, …}}, meta}`, serialized as the tool result's text.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::error::ApiCode;

/// The error codes of the envelope: every code of the API's table ([`ApiCode`], the same
/// names and meanings, [`ErrorCode::from`]) and the codes only the assistant's gates give
/// (`STRICT_RESOLUTION`, `FSM_BLOCKED`, `ROUTING_MISMATCH`, `LOOP_DETECTED`). An error that
/// stops a tool becomes its code through the API's own mapping ([`ErrorCode::of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    // The assistant's gates.
    StrictResolution,
    FsmBlocked,
    RoutingMismatch,
    LoopDetected,
    // The API's table.
    InvalidInput,
    Unauthenticated,
    Forbidden,
    ActionNotAllowed,
    PolicyBlocked,
    ApprovalRequired,
    NotFound,
    MethodNotAllowed,
    Conflict,
    AlreadyExists,
    ApprovalExpired,
    PayloadTooLarge,
    UnboundedCommand,
    AgentBusy,
    RateLimited,
    Internal,
    ExecutionFailed,
    AgentOffline,
    SandboxUnavailable,
    Timeout,
    SlowReader,
    ReplicaFenced,
    ReplicaLost,
}

impl From<ApiCode> for ErrorCode {
    fn from(code: ApiCode) -> ErrorCode {
        match code {
            ApiCode::InvalidInput => ErrorCode::InvalidInput,
            ApiCode::Unauthenticated => ErrorCode::Unauthenticated,
            ApiCode::Forbidden => ErrorCode::Forbidden,
            ApiCode::ActionNotAllowed => ErrorCode::ActionNotAllowed,
            ApiCode::PolicyBlocked => ErrorCode::PolicyBlocked,
            ApiCode::ApprovalRequired => ErrorCode::ApprovalRequired,
            ApiCode::NotFound => ErrorCode::NotFound,
            ApiCode::MethodNotAllowed => ErrorCode::MethodNotAllowed,
            ApiCode::Conflict => ErrorCode::Conflict,
            ApiCode::AlreadyExists => ErrorCode::AlreadyExists,
            ApiCode::ApprovalExpired => ErrorCode::ApprovalExpired,
            ApiCode::PayloadTooLarge => ErrorCode::PayloadTooLarge,
            ApiCode::UnboundedCommand => ErrorCode::UnboundedCommand,
            ApiCode::AgentBusy => ErrorCode::AgentBusy,
            ApiCode::RateLimited => ErrorCode::RateLimited,
            ApiCode::Internal => ErrorCode::Internal,
            ApiCode::ExecutionFailed => ErrorCode::ExecutionFailed,
            ApiCode::AgentOffline => ErrorCode::AgentOffline,
            ApiCode::SandboxUnavailable => ErrorCode::SandboxUnavailable,
            ApiCode::Timeout => ErrorCode::Timeout,
            ApiCode::SlowReader => ErrorCode::SlowReader,
            ApiCode::ReplicaFenced => ErrorCode::ReplicaFenced,
            ApiCode::ReplicaLost => ErrorCode::ReplicaLost,
        }
    }
}

impl ErrorCode {
    /// The API code this is, or `None` for the gates' own codes.
    pub fn api(self) -> Option<ApiCode> {
        ApiCode::ALL
            .into_iter()
            .find(|code| ErrorCode::from(*code) == self)
    }

    /// The code of an error that stopped a tool: the API's code for it
    /// ([`crate::Error::table_code`]); an agent's refusal the table does not know is
    /// `EXECUTION_FAILED`, as the API answers it.
    pub fn of(error: &crate::Error) -> ErrorCode {
        error
            .table_code()
            .map_or(ErrorCode::ExecutionFailed, ErrorCode::from)
    }

    /// True when the same call may succeed later (the API says when to retry, or it timed
    /// out).
    pub fn retryable(self) -> bool {
        self == ErrorCode::Timeout || self.api().and_then(ApiCode::retry_after_s).is_some()
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::StrictResolution => "STRICT_RESOLUTION",
            ErrorCode::FsmBlocked => "FSM_BLOCKED",
            ErrorCode::RoutingMismatch => "ROUTING_MISMATCH",
            ErrorCode::LoopDetected => "LOOP_DETECTED",
            other => other.api().map_or("INTERNAL", ApiCode::as_str),
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
    fn every_api_code_is_an_envelope_code_with_the_same_name() {
        for code in ApiCode::ALL {
            let tool = ErrorCode::from(code);
            assert_eq!(tool.as_str(), code.as_str());
            assert_eq!(tool.api(), Some(code));
            assert_eq!(
                serde_json::to_value(tool).unwrap(),
                json!(code.as_str()),
                "{code}: the serialized name is the API's"
            );
        }
        for own in [
            ErrorCode::StrictResolution,
            ErrorCode::FsmBlocked,
            ErrorCode::RoutingMismatch,
            ErrorCode::LoopDetected,
        ] {
            assert_eq!(own.api(), None);
            assert_eq!(serde_json::to_value(own).unwrap(), json!(own.as_str()));
        }
    }

    #[test]
    fn errors_reach_the_model_with_the_apis_code() {
        use crate::Error;
        let rejected = |code: &str| Error::AgentRejected {
            code: code.into(),
            reason: "r".into(),
        };
        // Found in a review: the agent's SANDBOX_UNAVAILABLE reached the model as
        // POLICY_BLOCKED, and PermissionDenied as EXECUTION_FAILED.
        assert_eq!(
            ErrorCode::of(&rejected("SANDBOX_UNAVAILABLE")),
            ErrorCode::SandboxUnavailable
        );
        assert_eq!(
            ErrorCode::of(&Error::PermissionDenied("no".into())),
            ErrorCode::ActionNotAllowed
        );
        assert_eq!(ErrorCode::of(&rejected("AGENT_BUSY")), ErrorCode::AgentBusy);
        assert!(ErrorCode::AgentBusy.retryable());
        assert!(ErrorCode::AgentOffline.retryable() && ErrorCode::Timeout.retryable());
        assert!(!ErrorCode::PolicyBlocked.retryable());
        assert_eq!(
            ErrorCode::of(&rejected("POLICY_BLOCKED")),
            ErrorCode::PolicyBlocked
        );
        // An agent's code the table does not know: as the API answers it.
        assert_eq!(ErrorCode::of(&rejected("WHAT")), ErrorCode::ExecutionFailed);
        assert_eq!(ErrorCode::of(&Error::ExecTimeout(5)), ErrorCode::Timeout);
    }

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
