//! What can go wrong while confining a read: one error type for the whole sandbox, so that
//! the agent tells the controller `SANDBOX_UNAVAILABLE` from a code, not from a message's
//! first word, and retries a read whose hidden path lost its mask by its variant.

/// Why a read could not be confined, or must not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    /// A step of the confinement failed (a kernel call, the reads' mount namespace, the
    /// threads that spawn reads, a door); the message names the step.
    #[error("{0}")]
    Confine(String),
    /// A hidden path lost its mask since the reads' namespace was made. The read is tried
    /// once more, in a fresh namespace.
    #[error("a hidden path is no longer covered ({0})")]
    Uncovered(String),
    /// This host cannot confine the read as it must be, and the agent was not started with
    /// `--allow-unsandboxed-reads`: the read is refused (`SANDBOX_UNAVAILABLE`).
    #[error("{0}")]
    Unavailable(String),
    /// A flag of `sandbox-exec`, or a hidden-path pattern, is not acceptable.
    #[error("{0}")]
    Invalid(String),
}

/// A step's own message (`landlock ruleset: …`, `capget: …`) is a failed step.
impl From<String> for SandboxError {
    fn from(message: String) -> Self {
        SandboxError::Confine(message)
    }
}

impl From<&str> for SandboxError {
    fn from(message: &str) -> Self {
        SandboxError::Confine(message.to_owned())
    }
}

/// `Result` of the sandbox.
pub type Result<T, E = SandboxError> = std::result::Result<T, E>;

impl SandboxError {
    /// The error inside `error`, when a confined spawn failed because of the sandbox.
    pub fn of(error: &std::io::Error) -> Option<&SandboxError> {
        error.get_ref().and_then(|inner| inner.downcast_ref())
    }
}
