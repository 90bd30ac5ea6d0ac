//! The `vigil-agent` binary. Only `version` exists so far; running without a subcommand
//! prints the help.

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

const AFTER_HELP: &str =
    "Planned subcommands (not built yet): join, run, install, uninstall, status.";

/// `vigil-agent`: the Vigil host agent.
#[derive(Debug, Parser)]
#[command(
    name = "vigil-agent",
    version,
    about = "The Vigil host agent: runs bounded, checked commands for the Vigil controller",
    after_help = AFTER_HELP,
    arg_required_else_help = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the agent's version.
    Version,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Version => {
            match writeln!(io::stdout().lock(), "vigil-agent {}", vigil_agent::VERSION) {
                Ok(()) => ExitCode::SUCCESS,
                Err(_) => ExitCode::from(2),
            }
        }
    }
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
