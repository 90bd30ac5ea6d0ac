//! The `vigil-controller` binary: parses the command line, sets up logging to standard
//! error and runs [`vigil_controller::cli::run`].

use std::error::Error as _;
use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use tracing::{debug, error};
use tracing_subscriber::EnvFilter;
use vigil_controller::cli::{self, Cli};

/// Log filter used when `RUST_LOG` is not set.
const DEFAULT_LOG_FILTER: &str = "warn";

fn main() -> ExitCode {
    init_tracing();
    let cli = Cli::parse();
    match cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if err.is_broken_pipe() => {
            debug!("output closed by the reader");
            ExitCode::SUCCESS
        }
        Err(err) => {
            let cause = err.source().map(ToString::to_string).unwrap_or_default();
            error!(error = %err, %cause, "vigil-controller failed");
            ExitCode::from(err.exit_code())
        }
    }
}

fn init_tracing() {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_LOG_FILTER));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}
