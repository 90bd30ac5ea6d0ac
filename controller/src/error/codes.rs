//! The one table of API error codes: each code's HTTP status, and whether the answer says
//! when to retry (`Retry-After`). Every error the API answers takes its status from here,
//! including the codes an agent sends back when it refuses a command.
//!
//! The rules the table keeps (and its test walks): 403 is only for what the caller may not
//! do (its role, the policy, the control level); overload is 429 and an unreachable agent
//! 503, and both carry `Retry-After`, so a client waits instead of giving up.

use axum::http::StatusCode;

/// An API error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApiCode {
    /// The request is malformed (body, fields, values).
    InvalidInput,
    /// No valid bearer token.
    Unauthenticated,
    /// The token's role is below what the route needs.
    Forbidden,
    /// The action is not allowed here (e.g. a control level the role may not use).
    ActionNotAllowed,
    /// The command is not provably read-only, or writes are refused by the control level.
    PolicyBlocked,
    /// The command is a write: it needs an approval (the agent's answer to an ungranted
    /// write).
    ApprovalRequired,
    /// No such route, agent, resource, session or approval.
    NotFound,
    /// The route does not take this method.
    MethodNotAllowed,
    /// The request conflicts with the current state (a running turn, a decided approval).
    Conflict,
    /// The thing exists already (an agent identity already connected).
    AlreadyExists,
    /// The approval expired before it was decided.
    ApprovalExpired,
    /// The request body or message is too large.
    PayloadTooLarge,
    /// The command would not end by itself.
    UnboundedCommand,
    /// The agent has as many commands as it takes: retry shortly.
    AgentBusy,
    /// The caller sent too many requests: retry later.
    RateLimited,
    /// The controller failed; details are in its log.
    Internal,
    /// The agent could not run the command, or refused it for a reason the controller does
    /// not know.
    ExecutionFailed,
    /// No agent that can run the command is connected: retry when it is back.
    AgentOffline,
    /// The agent cannot confine reads (no Landlock) and was not allowed to run them bare.
    SandboxUnavailable,
    /// The command did not finish in time.
    Timeout,
    /// The caller read a command's output too slowly; the command was cut off.
    SlowReader,
    /// This replica lost its database lease and takes no work until it has it again:
    /// retry (the load balancer sends the request to another replica).
    ReplicaFenced,
    /// The replica holding the agent's stream went away with the command in flight: the
    /// command's outcome on the agent is not known.
    ReplicaLost,
}

impl ApiCode {
    /// Every code, in the order of the documented table.
    pub const ALL: [ApiCode; 23] = [
        ApiCode::InvalidInput,
        ApiCode::Unauthenticated,
        ApiCode::Forbidden,
        ApiCode::ActionNotAllowed,
        ApiCode::PolicyBlocked,
        ApiCode::ApprovalRequired,
        ApiCode::NotFound,
        ApiCode::MethodNotAllowed,
        ApiCode::Conflict,
        ApiCode::AlreadyExists,
        ApiCode::ApprovalExpired,
        ApiCode::PayloadTooLarge,
        ApiCode::UnboundedCommand,
        ApiCode::AgentBusy,
        ApiCode::RateLimited,
        ApiCode::Internal,
        ApiCode::ExecutionFailed,
        ApiCode::AgentOffline,
        ApiCode::SandboxUnavailable,
        ApiCode::Timeout,
        ApiCode::SlowReader,
        ApiCode::ReplicaFenced,
        ApiCode::ReplicaLost,
    ];

    /// The code as the API writes it.
    pub fn as_str(self) -> &'static str {
        self.row().0
    }

    /// The HTTP status of an answer with this code.
    pub fn status(self) -> StatusCode {
        self.row().1
    }

    /// Seconds the answer's `Retry-After` names, for codes a client should retry.
    pub fn retry_after_s(self) -> Option<u32> {
        self.row().2
    }

    /// The gRPC code of an answer with this code.
    pub fn grpc(self) -> tonic::Code {
        use tonic::Code;
        match self {
            ApiCode::InvalidInput | ApiCode::PayloadTooLarge => Code::InvalidArgument,
            ApiCode::Unauthenticated => Code::Unauthenticated,
            ApiCode::Forbidden
            | ApiCode::ActionNotAllowed
            | ApiCode::PolicyBlocked
            | ApiCode::ApprovalRequired => Code::PermissionDenied,
            ApiCode::NotFound => Code::NotFound,
            ApiCode::MethodNotAllowed => Code::Unimplemented,
            ApiCode::Conflict | ApiCode::ApprovalExpired | ApiCode::UnboundedCommand => {
                Code::FailedPrecondition
            }
            ApiCode::AlreadyExists => Code::AlreadyExists,
            ApiCode::AgentBusy | ApiCode::RateLimited => Code::ResourceExhausted,
            ApiCode::Internal | ApiCode::ExecutionFailed => Code::Internal,
            ApiCode::AgentOffline
            | ApiCode::SandboxUnavailable
            | ApiCode::ReplicaFenced
            | ApiCode::ReplicaLost => Code::Unavailable,
            ApiCode::Timeout => Code::DeadlineExceeded,
            ApiCode::SlowReader => Code::ResourceExhausted,
        }
    }

    /// The code written as `text`, if it is one.
    pub fn parse(text: &str) -> Option<ApiCode> {
        ApiCode::ALL.into_iter().find(|code| code.as_str() == text)
    }

    fn row(self) -> (&'static str, StatusCode, Option<u32>) {
        match self {
            ApiCode::InvalidInput => ("INVALID_INPUT", StatusCode::BAD_REQUEST, None),
            ApiCode::Unauthenticated => ("UNAUTHENTICATED", StatusCode::UNAUTHORIZED, None),
            ApiCode::Forbidden => ("FORBIDDEN", StatusCode::FORBIDDEN, None),
            ApiCode::ActionNotAllowed => ("ACTION_NOT_ALLOWED", StatusCode::FORBIDDEN, None),
            ApiCode::PolicyBlocked => ("POLICY_BLOCKED", StatusCode::FORBIDDEN, None),
            ApiCode::ApprovalRequired => ("APPROVAL_REQUIRED", StatusCode::FORBIDDEN, None),
            ApiCode::NotFound => ("NOT_FOUND", StatusCode::NOT_FOUND, None),
            ApiCode::MethodNotAllowed => {
                ("METHOD_NOT_ALLOWED", StatusCode::METHOD_NOT_ALLOWED, None)
            }
            ApiCode::Conflict => ("CONFLICT", StatusCode::CONFLICT, None),
            ApiCode::AlreadyExists => ("ALREADY_EXISTS", StatusCode::CONFLICT, None),
            ApiCode::ApprovalExpired => ("APPROVAL_EXPIRED", StatusCode::GONE, None),
            ApiCode::PayloadTooLarge => ("PAYLOAD_TOO_LARGE", StatusCode::PAYLOAD_TOO_LARGE, None),
            ApiCode::UnboundedCommand => {
                ("UNBOUNDED_COMMAND", StatusCode::UNPROCESSABLE_ENTITY, None)
            }
            ApiCode::AgentBusy => ("AGENT_BUSY", StatusCode::TOO_MANY_REQUESTS, Some(1)),
            ApiCode::RateLimited => ("RATE_LIMITED", StatusCode::TOO_MANY_REQUESTS, Some(1)),
            ApiCode::Internal => ("INTERNAL", StatusCode::INTERNAL_SERVER_ERROR, None),
            ApiCode::ExecutionFailed => ("EXECUTION_FAILED", StatusCode::BAD_GATEWAY, None),
            ApiCode::AgentOffline => ("AGENT_OFFLINE", StatusCode::SERVICE_UNAVAILABLE, Some(5)),
            ApiCode::SandboxUnavailable => {
                ("SANDBOX_UNAVAILABLE", StatusCode::SERVICE_UNAVAILABLE, None)
            }
            ApiCode::Timeout => ("TIMEOUT", StatusCode::GATEWAY_TIMEOUT, None),
            ApiCode::SlowReader => ("SLOW_READER", StatusCode::REQUEST_TIMEOUT, None),
            ApiCode::ReplicaFenced => ("REPLICA_FENCED", StatusCode::SERVICE_UNAVAILABLE, Some(1)),
            ApiCode::ReplicaLost => ("REPLICA_LOST", StatusCode::SERVICE_UNAVAILABLE, Some(1)),
        }
    }
}

impl std::fmt::Display for ApiCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The codes of a chat stream's `error` event (docs/assistant.md). A turn's failure is not
/// an HTTP answer (the stream is already open with 200), so these have no status; `INTERNAL`
/// means what [`ApiCode::Internal`] means. A code this version does not know decodes as
/// [`StreamErrorCode::Other`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StreamErrorCode {
    /// The turn was cancelled (`POST /api/ai/sessions/{id}/cancel`).
    Cancelled,
    /// The model's API failed or answered something unusable.
    ModelError,
    /// The turn used up its budget of model calls or tool calls.
    BudgetExceeded,
    /// The controller failed; details are in its log.
    Internal,
    /// No model is configured (`--llm-provider`).
    ModelNotConfigured,
    /// A code from a newer controller.
    Other(String),
}

impl StreamErrorCode {
    /// Every code this version sends, in the order of the documented list.
    pub const ALL: [StreamErrorCode; 5] = [
        StreamErrorCode::ModelNotConfigured,
        StreamErrorCode::ModelError,
        StreamErrorCode::Cancelled,
        StreamErrorCode::BudgetExceeded,
        StreamErrorCode::Internal,
    ];

    /// The code as the stream writes it.
    pub fn as_str(&self) -> &str {
        match self {
            StreamErrorCode::Cancelled => "CANCELLED",
            StreamErrorCode::ModelError => "MODEL_ERROR",
            StreamErrorCode::BudgetExceeded => "BUDGET_EXCEEDED",
            StreamErrorCode::Internal => ApiCode::Internal.as_str(),
            StreamErrorCode::ModelNotConfigured => "MODEL_NOT_CONFIGURED",
            StreamErrorCode::Other(code) => code,
        }
    }

    /// The code written as `text`.
    pub fn parse(text: &str) -> StreamErrorCode {
        StreamErrorCode::ALL
            .into_iter()
            .find(|code| code.as_str() == text)
            .unwrap_or_else(|| StreamErrorCode::Other(text.to_owned()))
    }
}

impl std::fmt::Display for StreamErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for StreamErrorCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for StreamErrorCode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Ok(StreamErrorCode::parse(&text))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    #[test]
    fn stream_codes_are_distinct_and_only_internal_is_shared_with_the_api() {
        let mut names = HashSet::new();
        for code in StreamErrorCode::ALL {
            assert!(names.insert(code.as_str().to_owned()), "{code} twice");
            assert_eq!(StreamErrorCode::parse(code.as_str()), code);
            let api = ApiCode::parse(code.as_str());
            assert_eq!(
                api.is_some(),
                code == StreamErrorCode::Internal,
                "{code}: a stream code that is also an API code must mean the same"
            );
        }
        assert_eq!(
            StreamErrorCode::parse("NEW_THING"),
            StreamErrorCode::Other("NEW_THING".into())
        );
        let json = serde_json::to_string(&StreamErrorCode::BudgetExceeded).unwrap();
        assert_eq!(json, "\"BUDGET_EXCEEDED\"");
        let back: StreamErrorCode = serde_json::from_str(&json).unwrap();
        assert_eq!(back, StreamErrorCode::BudgetExceeded);
    }

    use super::*;

    #[test]
    fn the_table_keeps_its_rules() {
        let mut names = HashSet::new();
        for code in ApiCode::ALL {
            assert!(names.insert(code.as_str()), "{code} is listed twice");
            assert_eq!(ApiCode::parse(code.as_str()), Some(code));
            let status = code.status();
            assert!(
                status.is_client_error() || status.is_server_error(),
                "{code}"
            );
            if status == StatusCode::TOO_MANY_REQUESTS {
                assert!(
                    code.retry_after_s().is_some(),
                    "{code}: 429 says when to retry"
                );
            }
            if code.retry_after_s().is_some() {
                assert!(
                    matches!(status.as_u16(), 429 | 503),
                    "{code}: Retry-After only on overload and unavailability"
                );
            }
            if status == StatusCode::FORBIDDEN {
                assert!(
                    matches!(
                        code,
                        ApiCode::Forbidden
                            | ApiCode::ActionNotAllowed
                            | ApiCode::PolicyBlocked
                            | ApiCode::ApprovalRequired
                    ),
                    "{code}: 403 is only for what the caller may not do"
                );
            }
        }
        assert_eq!(ApiCode::AgentBusy.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(
            ApiCode::AgentOffline.status(),
            StatusCode::SERVICE_UNAVAILABLE
        );
        assert!(ApiCode::AgentOffline.retry_after_s().is_some());
        assert_eq!(ApiCode::parse("NOPE"), None);
    }

    /// docs/state-and-api.md's table says what this one says, row for row.
    #[test]
    fn the_documented_table_is_this_table() {
        let doc = include_str!("../../../docs/state-and-api.md");
        let rows: Vec<(String, u16, Option<u32>)> = doc
            .lines()
            .filter(|line| line.starts_with("| `"))
            .filter_map(|line| {
                let cells: Vec<&str> = line.split('|').map(str::trim).collect();
                let code = cells.get(1)?.trim_matches('`').to_owned();
                let status = cells.get(2)?.parse().ok()?;
                let retry = cells.get(3)?.parse().ok();
                ApiCode::parse(&code).map(|_| (code, status, retry))
            })
            .collect();
        let table: Vec<(String, u16, Option<u32>)> = ApiCode::ALL
            .iter()
            .map(|c| {
                (
                    c.as_str().to_owned(),
                    c.status().as_u16(),
                    c.retry_after_s(),
                )
            })
            .collect();
        assert_eq!(rows, table);
    }
}
