//! `vigil-controller approvals [list] | approve ID | deny ID --reason TEXT`, through the
//! controller's HTTP API. Deciding needs an operator token.

use clap::{Args, Subcommand};
use reqwest::Method;
use serde_json::{Value, json};

use super::client::{ApiClient, ClientArgs};
use super::table::write_out;
use crate::Result;

/// `vigil-controller approvals …` (without a subcommand: `list`).
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ApprovalsArgs {
    /// What to do (default: list).
    #[command(subcommand)]
    pub command: Option<ApprovalsCommand>,
    #[command(flatten)]
    pub list: ListArgs,
}

/// The `approvals` subcommands.
#[derive(Debug, Subcommand)]
pub enum ApprovalsCommand {
    /// List approvals (pending by default): id, status, run, risk, target, command, expiry.
    List(ListArgs),
    /// Approve a pending write: it runs at once on its agent with a signed grant.
    Approve(DecideArgs),
    /// Deny a pending write; the reason is shown to the requester and audited.
    Deny(DenyArgs),
}

/// Arguments of `approvals list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// pending (default), approved, denied, expired, withdrawn or all.
    #[arg(long, value_name = "STATUS", default_value = "pending")]
    pub status: String,
    /// Print the API's JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `approvals approve`.
#[derive(Debug, Args)]
pub struct DecideArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// The approval's id.
    pub id: String,
}

/// Arguments of `approvals deny`.
#[derive(Debug, Args)]
pub struct DenyArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// The approval's id.
    pub id: String,
    /// Why (the assistant is told `Command denied: <reason>`).
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
}

/// Runs an `approvals` subcommand.
pub fn run(args: ApprovalsArgs) -> Result<()> {
    super::client_runtime()?.block_on(async {
        match args.command {
            None => list(args.list).await,
            Some(ApprovalsCommand::List(list_args)) => list(list_args).await,
            Some(ApprovalsCommand::Approve(a)) => {
                decide(&a.client, &a.id, "approve", json!({})).await
            }
            Some(ApprovalsCommand::Deny(d)) => {
                decide(&d.client, &d.id, "deny", json!({ "reason": d.reason })).await
            }
        }
    })
}

async fn list(args: ListArgs) -> Result<()> {
    let client = ApiClient::new(&args.client)?;
    let path = format!("/api/ai/approvals?status={}", args.status.trim());
    let rows: Vec<Value> = client.json(client.request(Method::GET, &path)).await?;
    let text = if args.json {
        serde_json::to_string_pretty(&rows)? + "\n"
    } else {
        // A person reads host names; --json keeps the ids.
        let agents: Vec<crate::agents::AgentView> = client
            .json(client.request(Method::GET, "/api/agents"))
            .await
            .unwrap_or_default();
        let hosts: std::collections::HashMap<String, String> =
            agents.into_iter().map(|a| (a.id, a.hostname)).collect();
        let rows: Vec<Value> = rows
            .into_iter()
            .map(|mut row| {
                if let Some(host) = row["agent"].as_str().and_then(|id| hosts.get(id)) {
                    row["agent"] = Value::String(host.clone());
                }
                row
            })
            .collect();
        table(&rows)
    };
    write_out(&text)
}

async fn decide(client: &ClientArgs, id: &str, verb: &str, body: Value) -> Result<()> {
    let api = ApiClient::new(client)?;
    let path = format!("/api/ai/approvals/{}/{verb}", id.trim());
    let row: Value = api
        .json(api.request(Method::POST, &path).json(&body))
        .await?;
    let status = row["status"].as_str().unwrap_or("?");
    write_out(&format!(
        "approval {} {status}: {}\n",
        id.trim(),
        text(&row["command"])
    ))
}

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_owned()
}

/// The approvals as an aligned table.
pub fn table(rows: &[Value]) -> String {
    let now = crate::clock::unix_now();
    let header = [
        "ID", "STATUS", "RUN", "RISK", "HOST", "TARGET", "COMMAND", "EXPIRES",
    ];
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let command = super::table::cell(&text(&r["command"]), 60);
            vec![
                text(&r["id"]),
                text(&r["status"]),
                text(&r["run_state"]),
                text(&r["risk"]),
                text(&r["agent"]),
                text(&r["target"]),
                command,
                r["expires_at"]
                    .as_i64()
                    .map(|t| crate::clock::relative(t, now))
                    .unwrap_or_default(),
            ]
        })
        .collect();
    super::table::render(&header, &rows)
}
