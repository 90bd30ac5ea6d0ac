//! The controller's error type: one enum for the whole crate. [`status`] maps each variant
//! to an HTTP status and API code and to a gRPC status, in one place.

pub mod codes;
mod status;

use std::io;
use std::path::PathBuf;

use vigil_shared::ids::AgentId;

pub use codes::{ApiCode, StreamErrorCode};
pub use status::ApiErrorBody;

/// Everything that can go wrong in the controller.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading commands from standard input failed (including input that is not UTF-8).
    #[error("reading line {line} of standard input")]
    ReadInput {
        /// 1-based line number that could not be read.
        line: usize,
        /// The underlying I/O error.
        #[source]
        source: io::Error,
    },
    /// Writing the output failed.
    #[error("writing output")]
    WriteOutput(#[source] io::Error),
    /// A value could not be encoded or decoded as JSON.
    #[error("encoding JSON")]
    Json(#[from] serde_json::Error),

    /// A command-line flag, environment variable or configuration value is not valid.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A request or argument is not valid (HTTP 400, gRPC `INVALID_ARGUMENT`).
    #[error("{0}")]
    InvalidInput(String),
    /// A file in the data directory could not be read or written.
    #[error("{action} {}", path.display())]
    File {
        /// What was being done (`reading`, `writing`, `creating`).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: io::Error,
    },
    /// A socket could not be bound or served.
    #[error("{0}")]
    Network(String),
    /// The database failed.
    #[error("database error")]
    Database(#[from] sqlx::Error),
    /// A database migration failed.
    #[error("database migration failed")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A key or certificate could not be created, read or signed.
    #[error("certificate error: {0}")]
    Certificate(String),

    /// No or a wrong API token (HTTP 401).
    #[error("{0}")]
    Unauthenticated(String),
    /// The join token is unknown or malformed.
    #[error("join token is invalid")]
    TokenInvalid,
    /// The join token's TTL has passed.
    #[error("join token has expired")]
    TokenExpired,
    /// The join token was used as often as it allows.
    #[error("join token has no uses left")]
    TokenExhausted,
    /// The join token was revoked.
    #[error("join token was revoked")]
    TokenRevoked,
    /// An enrollment or renewal CSR could not be parsed or verified.
    #[error("invalid certificate signing request: {0}")]
    BadCsr(String),

    /// No agent (or route) with this id (HTTP 404).
    #[error("{0}")]
    NotFound(String),
    /// The agent's identity was revoked.
    #[error("agent {0} is revoked")]
    AgentRevoked(AgentId),
    /// The agent is known but has no live stream (HTTP 503).
    #[error("agent {0} is not connected")]
    AgentOffline(AgentId),
    /// A resource is known and has execution paths, but none of their agents is connected
    /// (HTTP 503 `AGENT_OFFLINE`).
    #[error("no agent that can reach {resource} is connected (tried {})", agents.join(", "))]
    ResourceOffline {
        /// The resource id.
        resource: String,
        /// The agents of its routing chain, best first.
        agents: Vec<String>,
    },
    /// The stream ended before the command did.
    #[error("agent {0} disconnected before the command finished")]
    AgentGone(AgentId),
    /// A second live stream for one identity (gRPC `ALREADY_EXISTS`).
    #[error("agent is already connected")]
    AlreadyConnected,
    /// The peer may not do this (gRPC `PERMISSION_DENIED`).
    #[error("{0}")]
    PermissionDenied(String),

    /// The classifier did not prove the command read-only (HTTP 403).
    #[error("command is not provably read-only: {}", reasons.join("; "))]
    PolicyBlocked {
        /// The classifier's reasons, most important first.
        reasons: Vec<String>,
    },
    /// The command is read-only but would not end by itself (HTTP 422).
    #[error("command would not end by itself{}", rewrite.as_deref().map(|r| format!("; try: {r}")).unwrap_or_default())]
    UnboundedCommand {
        /// The classifier's reasons.
        reasons: Vec<String>,
        /// A bounded command with the same purpose, where one exists.
        rewrite: Option<String>,
        /// `tty`, `pager`, `stream` or `repl`.
        category: Option<&'static str>,
    },
    /// The agent's guard refused the command (the HTTP status of the agent's code in
    /// [`codes::ApiCode`]; an unknown code is 502).
    #[error("{reason}")]
    AgentRejected {
        /// The agent's machine-readable code (`POLICY_BLOCKED`, `AGENT_BUSY`, …).
        code: String,
        /// The agent's sentence.
        reason: String,
    },
    /// The command did not report an end in time (HTTP 504).
    #[error("the command did not finish within {0} s")]
    ExecTimeout(u64),

    /// The CLI could not reach the controller's HTTP API.
    #[error("cannot reach the controller at {url}")]
    Http {
        /// The URL called.
        url: String,
        /// The client error.
        #[source]
        source: reqwest::Error,
    },
    /// An answer of the API with a code from the table ([`codes::ApiCode`]), which gives
    /// its HTTP status.
    #[error("{message}")]
    Coded {
        /// The code.
        code: codes::ApiCode,
        /// A sentence a person can read.
        message: String,
        /// Structured details (an object).
        details: serde_json::Value,
    },
    /// The controller's HTTP API answered with an error (the CLI's view of a remote
    /// answer).
    #[error("{message}")]
    Api {
        /// The HTTP status.
        status: u16,
        /// The API error code (`POLICY_BLOCKED`, …).
        code: String,
        /// The API's message.
        message: String,
        /// The API's details object.
        details: serde_json::Value,
    },
}

impl Error {
    /// The process exit code for this error: 2 for usage errors and refusals (what the
    /// caller must change), 1 for failures of the machinery (files, database, network).
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::File { .. }
            | Error::Network(_)
            | Error::Database(_)
            | Error::Migrate(_)
            | Error::Certificate(_)
            | Error::Http { .. } => 1,
            _ => 2,
        }
    }

    /// True when the reader of our output went away (`… | head`): not worth reporting.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::WriteOutput(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }

    /// An API answer with `code` (its status comes from the table) and no details.
    pub fn coded(code: ApiCode, message: impl Into<String>) -> Error {
        Error::Coded {
            code,
            message: message.into(),
            details: serde_json::json!({}),
        }
    }

    /// An API answer with `code` and `details`.
    pub fn coded_with(
        code: ApiCode,
        message: impl Into<String>,
        details: serde_json::Value,
    ) -> Error {
        Error::Coded {
            code,
            message: message.into(),
            details,
        }
    }

    /// A file error for `path`.
    pub fn file(action: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> Error {
        let path = path.into();
        move |source| Error::File {
            action,
            path,
            source,
        }
    }
}

/// The controller's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
