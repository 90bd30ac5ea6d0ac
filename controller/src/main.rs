//! The `vigil-controller` binary: parses the command line, sets up logging to standard
//! error and runs [`vigil_controller::cli::run`].

use std::error::Error as _;
use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use tracing::{debug, error};
use tracing_subscriber::EnvFilter;
use vigil_controller::cli::{self, Cli};

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing(cli.default_log_filter());
    match cli::run(cli) {
        Ok(code) => ExitCode::from(code),
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

/// Logs to standard error, filtered by `RUST_LOG` or else `default_filter`.
fn init_tracing(default_filter: &str) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_filter));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}
