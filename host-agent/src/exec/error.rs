//! Why a command could not be prepared, started, stopped or understood: the error of the
//! runners, the backends' helpers and the pump's kill actions. What reaches the controller
//! is a [`crate::guard::Refusal`] (a code and a reason); this is what the code is chosen
//! from.

/// A failure around one command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    /// This runner cannot reach the target.
    #[error("{0}")]
    Unreachable(String),
    /// The process did not start.
    #[error("{0}")]
    NotStarted(String),
    /// A tool the agent runs for itself failed: a non-zero exit, a timeout, a signal.
    #[error("{0}")]
    Failed(String),
    /// The command could not be stopped and may still be running.
    #[error("{0}")]
    NotStopped(String),
    /// The command is not one this backend can run as given (a `kubectl logs` option it
    /// does not serve).
    #[error("{0}")]
    Unsupported(String),
    /// A backend answered something that cannot be used (an exec stream without an exit
    /// status).
    #[error("{0}")]
    Unusable(String),
}
