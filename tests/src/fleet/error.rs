//! The simulator's errors: each says what to fix.

use std::path::PathBuf;

/// A `Result` with the simulator's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why the simulator cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A flag is not acceptable.
    #[error("{0}")]
    Usage(String),
    /// The controller's HTTP API refused or failed a call.
    #[error("{call}: {message}")]
    Api {
        /// The method and path.
        call: String,
        /// The status and the controller's words.
        message: String,
    },
    /// The state file cannot be read or written.
    #[error("state file {path}: {message}")]
    State {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The descriptor limit is too low for the number of agents.
    #[error("{0}")]
    Limit(String),
    /// Enrollment, TLS or the agent link failed (the real agent's error).
    #[error(transparent)]
    Agent(#[from] vigil_agent::Error),
}
