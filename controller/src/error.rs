//! The controller's error type.

use std::io;

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
    /// A value could not be encoded as JSON.
    #[error("encoding JSON")]
    Json(#[from] serde_json::Error),
}

impl Error {
    /// The process exit code for this error. Every error exits with 2, the code clap uses
    /// for usage errors, so 0 always means "classified, see the output".
    pub fn exit_code(&self) -> u8 {
        2
    }

    /// True when the reader of our output went away (`… | head`): not worth reporting.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::WriteOutput(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }
}

/// The controller's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
