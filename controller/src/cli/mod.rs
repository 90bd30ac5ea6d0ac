//! The `vigil-controller` command line: the clap definitions and the dispatch to each
//! subcommand, one module per subcommand. `main.rs` only sets up logging, calls [`run`]
//! and turns its result into the process exit code.
//!
//! Subcommands that touch state (`serve`, `token`, `ca show`) work on `--data-dir`
//! directly; those that need the running controller (`agents`, `approvals`, `resources`,
//! `exec`, `chat`) call its HTTP API ([`client`]).

pub mod agents;
pub mod apitoken;
pub mod approvals;
pub mod audit;
pub mod ca;
pub mod chat;
pub mod client;
pub mod cluster;
pub mod exec;
pub mod exec_fanout;
pub mod exec_write;
pub mod findings;
pub mod mcp;
pub mod policy;
pub mod ready;
pub mod resources;
pub mod secrets;
pub mod serve;
pub mod table;
pub mod token;

use clap::{Parser, Subcommand};

use crate::{Error, Result};

const AFTER_HELP: &str = "\
Exit codes: 0 success; 1 a failure of files, database or network; 2 bad usage or a refusal.
`exec` exits with the remote command's exit code (128+N when signal N ended it); a fan-out
(`exec --all`, `--label`, several `--target`) exits 0 when every target exited 0, 1 when any
failed, was refused or was offline. `chat`
exits 1 when its turn sent an error event, 130 on Ctrl-C (see `chat --help`).

Environment: VIGIL_DATA_DIR and VIGIL_DATABASE_URL (serve and the state subcommands), VIGIL_CONFIG
and the other VIGIL_* keys listed by `serve --help` (serve), VIGIL_URL and VIGIL_TOKEN (agents,
approvals, resources, exec, chat); NO_COLOR turns off chat's colours. Logs go to standard
error; set RUST_LOG (for example RUST_LOG=debug) to see more.";

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

/// The subcommands, each in its own module.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the controller: the agent gateway and the HTTP API.
    Serve(Box<crate::config::ServeArgs>),
    /// Create, list and revoke join tokens for enrolling agents.
    #[command(subcommand)]
    Token(token::TokenCommand),
    /// Create, list and revoke API tokens (bearer tokens with a role) for the HTTP API.
    #[command(subcommand)]
    Apitoken(apitoken::ApiTokenCommand),
    /// Verify the audit log's hash chain.
    #[command(subcommand)]
    Audit(audit::AuditCommand),
    /// Show the controller's certificate authority.
    #[command(subcommand)]
    Ca(ca::CaCommand),
    /// Make the shared identity of several replicas (`secrets init --dir DIR`), for
    /// `serve --secrets-dir DIR`.
    #[command(subcommand)]
    Secrets(secrets::SecretsCommand),
    /// List or revoke agents (through the running controller's API).
    Agents(agents::AgentsArgs),
    /// Search what the agents see, or show one resource's routing chain (through the
    /// running controller's API).
    Resources(resources::ResourcesArgs),
    /// List, approve or deny the writes waiting for a person (through the running
    /// controller's API; deciding needs an operator token).
    Approvals(approvals::ApprovalsArgs),
    /// List what patrol checks and alerts found, or acknowledge or snooze a finding
    /// (through the running controller's API; changing needs an operator token).
    Findings(findings::FindingsArgs),
    /// Run a read-only command on an agent or in a resource, on many at once (--all,
    /// --label K=V, several --target), or with --write request a write through an approval
    /// and wait for its decision (through the running controller's API).
    Exec(exec::ExecArgs),
    /// Chat with the assistant in this terminal: interactive, or one message with -m
    /// (through the running controller's API).
    Chat(chat::ChatArgs),
    /// Inspect the command classifier (the policy engine's first gate).
    #[command(subcommand)]
    Policy(policy::PolicyCommand),
    /// Exit 0 when a running controller answers GET /readyz with 200, 1 otherwise (the
    /// container image's health check).
    Ready(ready::ReadyArgs),
    /// List the controller's replicas: state, agents held, addresses, lease (through the
    /// running controller's API; admin token).
    Cluster(cluster::ClusterArgs),
    /// Serve MCP over standard input and output, for MCP clients that launch a local
    /// command: every request goes to the running controller's /mcp with the API token
    /// (VIGIL_URL, VIGIL_TOKEN); its gates and approvals apply as over HTTP.
    Mcp(mcp::McpArgs),
}

impl Cli {
    /// The log filter to use when `RUST_LOG` is not set: `info` for the server, `warn`
    /// for one-shot commands.
    pub fn default_log_filter(&self) -> &'static str {
        match self.command {
            Command::Serve(_) => "info",
            _ => "warn",
        }
    }
}

/// Runs the parsed command line; returns the process exit code.
pub fn run(cli: Cli) -> Result<u8> {
    match cli.command {
        Command::Serve(args) => serve::run(&args).map(|()| 0),
        Command::Token(command) => token::run(command).map(|()| 0),
        Command::Apitoken(command) => apitoken::run(command).map(|()| 0),
        Command::Audit(command) => audit::run(command),
        Command::Ca(command) => ca::run(command).map(|()| 0),
        Command::Secrets(command) => secrets::run(command).map(|()| 0),
        Command::Agents(args) => agents::run(args).map(|()| 0),
        Command::Resources(args) => resources::run(args).map(|()| 0),
        Command::Approvals(args) => approvals::run(args).map(|()| 0),
        Command::Findings(args) => findings::run(args).map(|()| 0),
        Command::Exec(args) => exec::run(args),
        Command::Chat(args) => chat::run(args),
        Command::Policy(command) => policy::run(command).map(|()| 0),
        Command::Ready(args) => ready::run(&args),
        Command::Cluster(args) => cluster::run(&args).map(|()| 0),
        Command::Mcp(args) => mcp::run(&args).map(|()| 0),
    }
}

/// A single-threaded runtime for the client subcommands.
pub(crate) fn client_runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Network(format!("starting the async runtime: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// The `policy check` arguments of a parsed command line (other subcommands panic).
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

    #[test]
    fn parses_serve_token_agents_and_exec() {
        let cli = Cli::try_parse_from([
            "vigil-controller",
            "serve",
            "--gateway-san",
            "a",
            "--gateway-san",
            "b",
        ])
        .unwrap();
        let Command::Serve(args) = cli.command else {
            panic!("not serve")
        };
        assert_eq!(args.gateway_sans, ["a", "b"]);
        assert_eq!(cli_default_filter(&["serve"]), "info");

        let cli = Cli::try_parse_from([
            "vigil-controller",
            "token",
            "create",
            "--ttl",
            "30m",
            "--label",
            "a=b",
            "--data-dir",
            "/x",
        ])
        .unwrap();
        assert!(matches!(
            cli.command,
            Command::Token(token::TokenCommand::Create(_))
        ));

        let cli = Cli::try_parse_from(["vigil-controller", "agents"]).unwrap();
        assert!(matches!(
            cli.command,
            Command::Agents(agents::AgentsArgs { command: None, .. })
        ));
        let cli = Cli::try_parse_from(["vigil-controller", "agents", "revoke", "abc"]).unwrap();
        assert!(matches!(
            cli.command,
            Command::Agents(agents::AgentsArgs {
                command: Some(_),
                ..
            })
        ));

        let cli = Cli::try_parse_from([
            "vigil-controller",
            "exec",
            "--agent",
            "x",
            "--",
            "ls",
            "-l",
            "/tmp",
        ])
        .unwrap();
        let Command::Exec(args) = cli.command else {
            panic!("not exec")
        };
        assert_eq!(args.shell_command(), "ls -l /tmp");
    }

    fn cli_default_filter(args: &[&str]) -> &'static str {
        let mut argv = vec!["vigil-controller"];
        argv.extend_from_slice(args);
        Cli::try_parse_from(argv).unwrap().default_log_filter()
    }
}
