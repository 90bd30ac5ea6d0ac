//! The one place where an [`Error`] becomes an HTTP answer (status, code, message, details)
//! or a gRPC [`Status`]. Internal failures are logged here and answered without detail.

use axum::Json;
use axum::http::StatusCode;
use axum::http::header::WWW_AUTHENTICATE;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tonic::{Code, Status};
use tracing::error;

use super::Error;

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

    /// The HTTP status of this error.
    pub fn http_status(&self) -> StatusCode {
        match self {
            Error::Json(_) | Error::Config(_) | Error::InvalidInput(_) | Error::BadCsr(_) => {
                StatusCode::BAD_REQUEST
            }
            Error::Unauthenticated(_)
            | Error::TokenInvalid
            | Error::TokenExpired
            | Error::TokenExhausted
            | Error::TokenRevoked => StatusCode::UNAUTHORIZED,
            Error::PermissionDenied(_)
            | Error::PolicyBlocked { .. }
            | Error::AgentRejected { .. } => StatusCode::FORBIDDEN,
            Error::NotFound(_) | Error::AgentRevoked(_) => StatusCode::NOT_FOUND,
            Error::AlreadyConnected => StatusCode::CONFLICT,
            Error::UnboundedCommand { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            Error::AgentOffline(_) | Error::AgentGone(_) | Error::ResourceOffline { .. } => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            Error::ExecTimeout(_) => StatusCode::GATEWAY_TIMEOUT,
            Error::Api { status, .. } => {
                StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
            }
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The API error code of this error.
    pub fn api_code(&self) -> &str {
        match self {
            Error::Json(_) | Error::Config(_) | Error::InvalidInput(_) | Error::BadCsr(_) => {
                "INVALID_INPUT"
            }
            Error::Unauthenticated(_)
            | Error::TokenInvalid
            | Error::TokenExpired
            | Error::TokenExhausted
            | Error::TokenRevoked => "UNAUTHENTICATED",
            Error::PermissionDenied(_) => "ACTION_NOT_ALLOWED",
            Error::PolicyBlocked { .. } => "POLICY_BLOCKED",
            Error::AgentRejected { code, .. } => code,
            Error::NotFound(_) | Error::AgentRevoked(_) => "NOT_FOUND",
            Error::AlreadyConnected => "ALREADY_EXISTS",
            Error::UnboundedCommand { .. } => "UNBOUNDED_COMMAND",
            Error::AgentOffline(_) | Error::AgentGone(_) | Error::ResourceOffline { .. } => {
                "AGENT_OFFLINE"
            }
            Error::ExecTimeout(_) => "TIMEOUT",
            Error::Api { code, .. } => code,
            _ => "INTERNAL",
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
            Error::Api { details, .. } => details.clone(),
            _ => json!({}),
        }
    }

    /// The message shown to API callers: the error itself, or a neutral sentence for
    /// internal failures (whose detail goes to the log).
    fn public_message(&self) -> String {
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

    /// The gRPC code of this error.
    pub fn grpc_code(&self) -> Code {
        match self {
            Error::Unauthenticated(_)
            | Error::TokenInvalid
            | Error::TokenExpired
            | Error::TokenExhausted
            | Error::TokenRevoked => Code::Unauthenticated,
            Error::Json(_) | Error::Config(_) | Error::InvalidInput(_) | Error::BadCsr(_) => {
                Code::InvalidArgument
            }
            Error::AlreadyConnected => Code::AlreadyExists,
            Error::PermissionDenied(_)
            | Error::AgentRevoked(_)
            | Error::PolicyBlocked { .. }
            | Error::AgentRejected { .. } => Code::PermissionDenied,
            Error::UnboundedCommand { .. } => Code::FailedPrecondition,
            Error::NotFound(_) => Code::NotFound,
            Error::AgentOffline(_) | Error::AgentGone(_) | Error::ResourceOffline { .. } => {
                Code::Unavailable
            }
            Error::ExecTimeout(_) => Code::DeadlineExceeded,
            _ => Code::Internal,
        }
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        self.log_if_internal();
        let status = self.http_status();
        let mut response = (status, Json(self.api_body())).into_response();
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

    #[test]
    fn internal_errors_hide_their_detail() {
        let err = Error::Certificate("secret path /x".into());
        assert_eq!(err.api_body().error.message, "internal error");
        assert_eq!(Status::from(err).code(), Code::Internal);
    }
}
