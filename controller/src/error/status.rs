//! The one place where an [`Error`] becomes an HTTP answer (status, code, message, details)
//! or a gRPC [`Status`]. Internal failures are logged here and answered without detail.

use axum::Json;
use axum::http::StatusCode;
use axum::http::header::{RETRY_AFTER, WWW_AUTHENTICATE};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tonic::{Code, Status};
use tracing::error;

use super::{ApiCode, Error};

/// The HTTP error shape: `{"error":{"code","message","details"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiErrorBody {
    /// The error itself.
    pub error: ApiError,
}

/// The inside of [`ApiErrorBody`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiError {
    /// A machine-readable code (`POLICY_BLOCKED`, `NOT_FOUND`, …).
    pub code: String,
    /// A sentence a person can read.
    pub message: String,
    /// Structured details (`reasons`, `rewrite`, …); an empty object when there are none.
    #[serde(default)]
    pub details: Value,
}

impl Error {
    /// True for failures of the machinery, which are logged and answered without detail.
    fn is_internal(&self) -> bool {
        matches!(
            self,
            Error::ReadInput { .. }
                | Error::WriteOutput(_)
                | Error::File { .. }
                | Error::Network(_)
                | Error::Database(_)
                | Error::Migrate(_)
                | Error::Certificate(_)
                | Error::Http { .. }
        )
    }

    /// The table code of this error; `None` for an agent's code the table does not know
    /// and for a remote answer the CLI decoded.
    pub fn table_code(&self) -> Option<ApiCode> {
        Some(match self {
            Error::Json(_) | Error::Config(_) | Error::InvalidInput(_) | Error::BadCsr(_) => {
                ApiCode::InvalidInput
            }
            Error::Unauthenticated(_)
            | Error::TokenInvalid
            | Error::TokenExpired
            | Error::TokenExhausted
            | Error::TokenRevoked => ApiCode::Unauthenticated,
            Error::PermissionDenied(_) => ApiCode::ActionNotAllowed,
            Error::PolicyBlocked { .. } => ApiCode::PolicyBlocked,
            Error::AgentRejected { code, .. } => return ApiCode::parse(code),
            Error::NotFound(_) | Error::AgentRevoked(_) => ApiCode::NotFound,
            Error::AlreadyConnected => ApiCode::AlreadyExists,
            Error::UnboundedCommand { .. } => ApiCode::UnboundedCommand,
            Error::AgentOffline(_) | Error::AgentGone(_) | Error::ResourceOffline { .. } => {
                ApiCode::AgentOffline
            }
            Error::ExecTimeout(_) => ApiCode::Timeout,
            Error::Coded { code, .. } => *code,
            Error::Api { .. } => return None,
            Error::ReadInput { .. }
            | Error::WriteOutput(_)
            | Error::File { .. }
            | Error::Network(_)
            | Error::Database(_)
            | Error::Migrate(_)
            | Error::Certificate(_)
            | Error::Http { .. } => ApiCode::Internal,
        })
    }

    /// The HTTP status of this error, from the code table ([`ApiCode`]). An agent's code
    /// the table does not know is 502: the agent refused for a reason we cannot name.
    pub fn http_status(&self) -> StatusCode {
        match (self, self.table_code()) {
            (_, Some(code)) => code.status(),
            (Error::Api { status, .. }, None) => {
                StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
            }
            (_, None) => ApiCode::ExecutionFailed.status(),
        }
    }

    /// Seconds a client should wait before retrying, for overload and offline answers.
    pub fn retry_after_s(&self) -> Option<u32> {
        self.table_code().and_then(ApiCode::retry_after_s)
    }

    /// The API error code of this error.
    pub fn api_code(&self) -> &str {
        match (self, self.table_code()) {
            (Error::AgentRejected { code, .. } | Error::Api { code, .. }, _) => code,
            (_, Some(code)) => code.as_str(),
            (_, None) => ApiCode::ExecutionFailed.as_str(),
        }
    }

    /// The structured details of this error (an empty object when there are none).
    pub fn details(&self) -> Value {
        match self {
            Error::PolicyBlocked { reasons } => json!({ "reasons": reasons, "rewrite": null }),
            Error::UnboundedCommand {
                reasons,
                rewrite,
                category,
            } => json!({ "reasons": reasons, "rewrite": rewrite, "category": category }),
            Error::AgentRejected { .. } => json!({ "source": "agent" }),
            Error::ResourceOffline { resource, agents } => {
                json!({ "resource": resource, "agents": agents, "retryable": true })
            }
            Error::Api { details, .. } | Error::Coded { details, .. } => details.clone(),
            _ => json!({}),
        }
    }

    /// The message shown to API callers: the error itself, or a neutral sentence for
    /// internal failures (whose detail goes to the log).
    pub fn public_message(&self) -> String {
        if self.is_internal() {
            "internal error".to_owned()
        } else {
            self.to_string()
        }
    }

    /// The HTTP error body of this error.
    pub fn api_body(&self) -> ApiErrorBody {
        ApiErrorBody {
            error: ApiError {
                code: self.api_code().to_owned(),
                message: self.public_message(),
                details: self.details(),
            },
        }
    }

    fn log_if_internal(&self) {
        if self.is_internal() {
            let cause = std::error::Error::source(self)
                .map(ToString::to_string)
                .unwrap_or_default();
            error!(error = %self, %cause, "request failed");
        }
    }

    /// The gRPC code of this error, from the code table; a revoked agent is refused with
    /// `PermissionDenied` (its stream must not be retried).
    pub fn grpc_code(&self) -> Code {
        match (self, self.table_code()) {
            (Error::AgentRevoked(_), _) => Code::PermissionDenied,
            (_, Some(code)) => code.grpc(),
            (_, None) => ApiCode::ExecutionFailed.grpc(),
        }
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        self.log_if_internal();
        let status = self.http_status();
        let retry_after = self.retry_after_s();
        let mut response = (status, Json(self.api_body())).into_response();
        if let Some(seconds) = retry_after {
            response
                .headers_mut()
                .insert(RETRY_AFTER, axum::http::HeaderValue::from(seconds));
        }
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}

impl From<Error> for Status {
    fn from(error: Error) -> Status {
        error.log_if_internal();
        Status::new(error.grpc_code(), error.public_message())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_shared::ids::AgentId;

    #[test]
    fn refusals_carry_their_codes_and_details() {
        let blocked = Error::PolicyBlocked {
            reasons: vec!["rm deletes files".into()],
        };
        assert_eq!(blocked.http_status(), StatusCode::FORBIDDEN);
        assert_eq!(
            blocked.api_body().error.details["reasons"][0],
            "rm deletes files"
        );
        let unbounded = Error::UnboundedCommand {
            reasons: vec![],
            rewrite: Some("journalctl -n 200".into()),
            category: Some("stream"),
        };
        assert_eq!(unbounded.http_status(), StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(
            unbounded.api_body().error.details["rewrite"],
            "journalctl -n 200"
        );
        let offline = Error::AgentOffline(AgentId::new_random());
        assert_eq!(offline.api_code(), "AGENT_OFFLINE");
        assert_eq!(offline.http_status(), StatusCode::SERVICE_UNAVAILABLE);
    }

    #[test]
    fn token_errors_are_unauthenticated_with_the_contract_messages() {
        let status = Status::from(Error::TokenExhausted);
        assert_eq!(status.code(), Code::Unauthenticated);
        assert_eq!(status.message(), "join token has no uses left");
        let status = Status::from(Error::AlreadyConnected);
        assert_eq!(status.code(), Code::AlreadyExists);
        assert_eq!(status.message(), "agent is already connected");
    }

    /// Every kind of error answers with a code of the table and the table's status; an
    /// agent's code takes the table's status, and an unknown one is 502.
    #[test]
    fn every_error_answers_with_the_status_of_its_code() {
        let agent = AgentId::new_random();
        let io = || std::io::Error::other("x");
        let errors = vec![
            Error::InvalidInput("x".into()),
            Error::Config("x".into()),
            Error::BadCsr("x".into()),
            Error::Unauthenticated("x".into()),
            Error::TokenInvalid,
            Error::TokenExpired,
            Error::TokenExhausted,
            Error::TokenRevoked,
            Error::PermissionDenied("x".into()),
            Error::PolicyBlocked { reasons: vec![] },
            Error::NotFound("x".into()),
            Error::AgentRevoked(agent),
            Error::AgentOffline(agent),
            Error::AgentGone(agent),
            Error::ResourceOffline {
                resource: "lxc:n:1".into(),
                agents: vec![],
            },
            Error::AlreadyConnected,
            Error::UnboundedCommand {
                reasons: vec![],
                rewrite: None,
                category: None,
            },
            Error::ExecTimeout(3),
            Error::Network("x".into()),
            Error::Certificate("x".into()),
            Error::WriteOutput(io()),
            Error::coded(ApiCode::Conflict, "x"),
            Error::coded(ApiCode::RateLimited, "x"),
        ];
        for error in &errors {
            let code = ApiCode::parse(error.api_code()).expect("a code of the table");
            assert_eq!(error.http_status(), code.status(), "{error:?}");
            assert_eq!(error.retry_after_s(), code.retry_after_s(), "{error:?}");
        }
        for code in ApiCode::ALL {
            let rejected = Error::AgentRejected {
                code: code.as_str().into(),
                reason: "x".into(),
            };
            assert_eq!(rejected.http_status(), code.status(), "{code}");
        }
        let odd = Error::AgentRejected {
            code: "SOMETHING_NEW".into(),
            reason: "x".into(),
        };
        assert_eq!(odd.http_status(), StatusCode::BAD_GATEWAY);
        assert_eq!(odd.api_code(), "SOMETHING_NEW");
    }

    #[test]
    fn overload_and_offline_answers_say_when_to_retry() {
        let busy = Error::AgentRejected {
            code: "AGENT_BUSY".into(),
            reason: "8 commands running".into(),
        }
        .into_response();
        assert_eq!(busy.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(busy.headers()[RETRY_AFTER], "1");
        let offline = Error::AgentOffline(AgentId::new_random()).into_response();
        assert_eq!(offline.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(offline.headers()[RETRY_AFTER], "5");
        let blocked = Error::PolicyBlocked { reasons: vec![] }.into_response();
        assert!(blocked.headers().get(RETRY_AFTER).is_none());
    }

    #[test]
    fn internal_errors_hide_their_detail() {
        let err = Error::Certificate("secret path /x".into());
        assert_eq!(err.api_body().error.message, "internal error");
        assert_eq!(Status::from(err).code(), Code::Internal);
    }
}
