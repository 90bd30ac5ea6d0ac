//! The `vigil-agent` command line: one module per subcommand; [`main`] parses, sets up
//! logging, runs the subcommand and maps its error to an exit code.
//!
//! Exit codes: 0 success, 1 failure, 2 bad flags or config, 3 revoked by the controller
//! (`run` only; the systemd unit does not restart on it).

mod join;
mod run;
mod service;
mod status;

use crate::error::{Error, Result};
use crate::exec::sandbox::{SUBCOMMAND as SANDBOX_EXEC, launcher};
use crate::{DEFAULT_STATE_DIR, ENV_CONFIG, ENV_STATE_DIR};
use clap::{Args, Parser, Subcommand};
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

const AFTER_HELP: &str = "\
Typical setup on a host:
  vigil-agent join --url https://CONTROLLER:8641 --token vjt_… --ca-fingerprint sha256:…
  vigil-agent install
  vigil-agent status

Exit codes: 0 success, 1 failure, 2 bad flags or config, 3 revoked by the controller.";

/// `vigil-agent`: the Vigil host agent.
#[derive(Debug, Parser)]
#[command(
    name = "vigil-agent",
    version,
    about = "The Vigil host agent: runs checked, bounded commands for the Vigil controller",
    long_about = "The Vigil host agent. It enrolls once with a join token, then keeps one \
                  mutually authenticated connection open to the controller and runs only \
                  commands it can prove read-only itself, or writes that carry a grant signed \
                  by the controller's key, each with a timeout, an output cap and a clean kill.",
    after_help = AFTER_HELP,
    arg_required_else_help = true
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Where the agent keeps its key, certificate and identity.
#[derive(Debug, Clone, Args)]
pub struct StateArgs {
    /// State directory (created 0700 by `join`).
    #[arg(long, env = ENV_STATE_DIR, default_value = DEFAULT_STATE_DIR, value_name = "DIR")]
    pub state_dir: PathBuf,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Enroll this host with a controller (a join token and the controller's CA fingerprint).
    #[command(long_about = join::LONG_ABOUT)]
    Join(join::JoinArgs),
    /// Connect to the controller and run checked commands until stopped.
    #[command(long_about = run::LONG_ABOUT)]
    Run(run::RunArgs),
    /// Install and start the agent as the systemd service `vigil-agent.service`.
    #[command(long_about = service::INSTALL_ABOUT)]
    Install(service::InstallArgs),
    /// Stop and remove the systemd service (the state directory stays unless --purge).
    Uninstall(service::UninstallArgs),
    /// Show enrollment, certificate expiry and connection state.
    #[command(long_about = status::LONG_ABOUT)]
    Status(status::StatusArgs),
    /// Print the agent's version.
    Version,
}

/// Parse the command line, run it, and return the exit code.
pub fn main() -> ExitCode {
    let mut args = std::env::args_os();
    if args.nth(1).is_some_and(|first| first == SANDBOX_EXEC) {
        // The read confinement as a program, for diagnosis and tests (hidden): no clap,
        // no logging, no runtime, one thread until it execs.
        return launcher::main("vigil-agent sandbox-exec", args);
    }
    let cli = Cli::parse();
    let verbose = matches!(cli.command, Command::Run(_));
    init_logging(if verbose { "info" } else { "warn" });
    let result = match cli.command {
        Command::Join(args) => block_on(join::join(args)),
        Command::Run(args) => block_on(run::run(args)),
        Command::Install(args) => service::install(args),
        Command::Uninstall(args) => service::uninstall(args),
        Command::Status(args) => status::status(args),
        Command::Version => {
            let mut out = io::stdout().lock();
            writeln!(out, "vigil-agent {}", crate::VERSION).map_err(output_error)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            let _ = writeln!(io::stderr().lock(), "vigil-agent: error: {error}");
            ExitCode::from(error.exit_code())
        }
    }
}

fn init_logging(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        .with_ansi(io::stderr().is_terminal())
        .try_init();
}

/// Run `future` on a single-threaded runtime. The agent's work is waiting on sockets and
/// child processes; one thread does it, and every extra worker would cost its own stack
/// and malloc arena while the agent idles (docs/benchmarks-history.md). Blocking calls
/// still go to tokio's blocking pool, whose threads exit when idle.
fn block_on(future: impl Future<Output = Result<()>>) -> Result<()> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("start the async runtime", e))?
        .block_on(future)
}

fn output_error(error: io::Error) -> Error {
    Error::io("write to standard output", error)
}

/// Make a path absolute against the current directory.
fn absolute(path: PathBuf) -> Result<PathBuf> {
    std::path::absolute(&path).map_err(|e| Error::io(format!("resolve {}", path.display()), e))
}

/// The config file flag shared by `run` and `install`.
#[derive(Debug, Clone, Args)]
pub struct ConfigArgs {
    /// TOML settings: read_only, max_output_cap_bytes, heartbeat_override_s (unknown keys are errors).
    #[arg(long, env = ENV_CONFIG, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
