//! `vigil-controller agents [list] | revoke ID`, through the controller's HTTP API.

use std::io::Write;

use clap::{Args, Subcommand};
use reqwest::Method;
use serde_json::Value;

use super::client::{ApiClient, ClientArgs};
use crate::agents::AgentView;
use crate::{Error, Result};

/// `vigil-controller agents …` (without a subcommand: `list`).
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct AgentsArgs {
    /// What to do (default: list).
    #[command(subcommand)]
    pub command: Option<AgentsCommand>,
    #[command(flatten)]
    pub list: ListArgs,
}

/// The `agents` subcommands.
#[derive(Debug, Subcommand)]
pub enum AgentsCommand {
    /// List enrolled agents: id, host name, connected, read-only, version, last seen, labels.
    List(ListArgs),
    /// Revoke an agent: its certificate stops working and its live stream is cut.
    Revoke(RevokeArgs),
}

/// Arguments of `agents list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// Print the API's JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `agents revoke`.
#[derive(Debug, Args)]
pub struct RevokeArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// The agent's id.
    pub id: String,
}

/// Runs an `agents` subcommand.
pub fn run(args: AgentsArgs) -> Result<()> {
    super::client_runtime()?.block_on(async {
        match args.command {
            None => list(args.list).await,
            Some(AgentsCommand::List(list_args)) => list(list_args).await,
            Some(AgentsCommand::Revoke(revoke_args)) => revoke(revoke_args).await,
        }
    })
}

async fn list(args: ListArgs) -> Result<()> {
    let client = ApiClient::new(&args.client)?;
    let agents: Vec<AgentView> = client
        .json(client.request(Method::GET, "/api/agents"))
        .await?;
    let text = if args.json {
        serde_json::to_string_pretty(&agents)? + "\n"
    } else {
        table(&agents)
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(Error::WriteOutput)
}

/// The agents as an aligned table.
pub fn table(agents: &[AgentView]) -> String {
    let header = [
        "ID",
        "HOSTNAME",
        "CONNECTED",
        "READ-ONLY",
        "VERSION",
        "LAST SEEN",
        "LABELS",
    ];
    let rows: Vec<Vec<String>> = agents
        .iter()
        .map(|a| {
            vec![
                a.id.clone(),
                a.hostname.clone(),
                if a.connected { "yes" } else { "no" }.to_owned(),
                if a.read_only { "yes" } else { "no" }.to_owned(),
                a.version.clone(),
                a.last_seen.clone().unwrap_or_else(|| "never".into()),
                a.labels
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(","),
            ]
        })
        .collect();
    super::table::render(&header, &rows)
}

async fn revoke(args: RevokeArgs) -> Result<()> {
    let client = ApiClient::new(&args.client)?;
    let path = format!("/api/agents/{}/revoke", args.id.trim());
    let _: Value = client.json(client.request(Method::POST, &path)).await?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "revoked agent {}", args.id.trim()).map_err(Error::WriteOutput)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_aligned() {
        let agent = AgentView {
            id: "0b6f3a52-0000-4000-8000-000000000001".into(),
            hostname: "node-1".into(),
            connected: true,
            read_only: false,
            labels: [("site".to_owned(), "home".to_owned())].into(),
            last_seen: None,
            version: "0.1.0".into(),
            sandbox: None,
        };
        let text = table(&[agent]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].find("HOSTNAME"), lines[1].find("node-1"));
        assert!(lines[1].ends_with("site=home"));
    }
}
