//! The `vigil-controller` command line: the clap definitions and the dispatch to each
//! subcommand. Each subcommand lives in its own module; `main.rs` only sets up logging,
//! calls [`run`] and turns an [`Error`](crate::Error) into an exit code.

pub mod policy;

use clap::{Parser, Subcommand};

use crate::Result;

const AFTER_HELP: &str = "\
Planned subcommands (not built yet): serve, token, apitoken, agents, approvals, audit verify,
ca show, exec.

Logs go to standard error; set RUST_LOG (for example RUST_LOG=debug) to see more.";

/// `vigil-controller`: the Vigil controller.
#[derive(Debug, Parser)]
#[command(
    name = "vigil-controller",
    version,
    about = "The Vigil controller: a safety-gated AI operator for self-hosted infrastructure",
    after_help = AFTER_HELP,
    propagate_version = true
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands. Later ones (`serve`, `token`, `apitoken`, `agents`, `approvals`,
/// `audit`, `ca`, `exec`) are added here as variants, each with its own module.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Inspect the command classifier (the policy engine's first gate).
    #[command(subcommand)]
    Policy(policy::PolicyCommand),
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Policy(command) => policy::run(command),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// The `policy check` arguments of a parsed command line (other subcommands panic).
    #[allow(irrefutable_let_patterns)] // only until the next subcommand lands
    fn check_args(cli: Cli) -> policy::CheckArgs {
        let Command::Policy(policy::PolicyCommand::Check(args)) = cli.command else {
            panic!("not `policy check`");
        };
        args
    }

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn parses_policy_check_with_a_command() {
        let cli = Cli::try_parse_from(["vigil-controller", "policy", "check", "--human", "uptime"])
            .unwrap();
        let args = check_args(cli);
        assert_eq!(args.command.as_deref(), Some("uptime"));
        assert!(args.human);
    }

    #[test]
    fn parses_policy_check_without_a_command() {
        let cli = Cli::try_parse_from(["vigil-controller", "policy", "check"]).unwrap();
        let args = check_args(cli);
        assert_eq!(args.command, None);
        assert!(!args.human);
    }
}
