//! The crate's one error type and the process exit codes it maps to.

use std::io;
use std::path::PathBuf;

/// `Result` with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Exit code: success.
pub const EXIT_OK: u8 = 0;
/// Exit code: the operation failed (network, controller refusal, I/O).
pub const EXIT_FAILURE: u8 = 1;
/// Exit code: bad command-line input or configuration.
pub const EXIT_USAGE: u8 = 2;
/// Exit code: the controller ended the link for good (revoked); do not restart.
pub const EXIT_REVOKED: u8 = 3;

/// Everything that can go wrong in the agent, with messages meant for a person.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A flag or argument is not acceptable.
    #[error("{0}")]
    Usage(String),
    /// The config file is missing, unreadable or invalid.
    #[error("config {path}: {message}")]
    Config { path: PathBuf, message: String },
    /// The state directory holds no identity.
    #[error("not enrolled: {dir} holds no identity; run `vigil-agent join` first")]
    NotEnrolled { dir: PathBuf },
    /// A state file exists but cannot be used.
    #[error("state file {path}: {message}")]
    State { path: PathBuf, message: String },
    /// A file-system operation failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
    /// The TCP connection could not be made.
    #[error("could not connect to {url}: {source}")]
    Connect {
        url: String,
        #[source]
        source: io::Error,
    },
    /// The gateway's certificate chain does not contain the pinned CA.
    #[error(
        "the controller's CA does not match --ca-fingerprint: {url} presented no certificate \
         with fingerprint {expected}"
    )]
    CaMismatch { url: String, expected: String },
    /// The TLS handshake failed for another reason.
    #[error("TLS handshake with {url} failed: {message}")]
    Tls { url: String, message: String },
    /// The controller refused to enroll the agent.
    #[error("enrollment refused: {0}")]
    EnrollRefused(String),
    /// A gRPC call failed.
    #[error("{context}: {code:?}: {message}")]
    Grpc {
        context: &'static str,
        code: tonic::Code,
        message: String,
    },
    /// The controller broke the protocol.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// The controller ended the link and asked the agent not to come back.
    #[error("the controller ended the link and asked the agent not to reconnect: {0}")]
    Revoked(String),
    /// Key, CSR or certificate handling failed.
    #[error("certificate handling failed: {0}")]
    Crypto(String),
    /// Installing or removing the systemd unit failed.
    #[error("{0}")]
    Install(String),
}

impl Error {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Usage(_) | Error::Config { .. } => EXIT_USAGE,
            Error::Revoked(_) => EXIT_REVOKED,
            _ => EXIT_FAILURE,
        }
    }

    /// An [`Error::Io`] with a sentence of context.
    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}

impl From<rcgen::Error> for Error {
    fn from(error: rcgen::Error) -> Self {
        Error::Crypto(error.to_string())
    }
}

impl From<rustls::Error> for Error {
    fn from(error: rustls::Error) -> Self {
        Error::Crypto(error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_distinguish_usage_failure_and_revocation() {
        assert_eq!(Error::Usage("x".into()).exit_code(), EXIT_USAGE);
        assert_eq!(Error::Revoked("gone".into()).exit_code(), EXIT_REVOKED);
        assert_eq!(Error::Protocol("x".into()).exit_code(), EXIT_FAILURE);
    }
}
