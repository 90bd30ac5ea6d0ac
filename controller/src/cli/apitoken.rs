//! `vigil-controller apitoken create | list | revoke`: bearer tokens of the HTTP API,
//! directly on the database. Creation and revocation are audited (actor `cli`).

use std::io::Write;

use clap::{Args, Subcommand};

use crate::api::Role;
use crate::audit::{self, Entry};
use crate::clock::{rfc3339, unix_now};
use crate::config::DataDirArg;
use crate::data_dir::DataDir;
use crate::store::{DatabaseArg, Store};
use crate::{Error, Result};

/// `vigil-controller apitoken …`
#[derive(Debug, Subcommand)]
pub enum ApiTokenCommand {
    /// Create an API token and print it alone on the last line of standard output.
    Create(CreateArgs),
    /// List API tokens: id, name, role, created, last used, revoked.
    List(StateArgs),
    /// Revoke an API token by its id (from `apitoken list`).
    Revoke(RevokeArgs),
}

/// Where the state is: `--data-dir` and `--database-url`.
#[derive(Debug, Args)]
pub struct StateArgs {
    #[command(flatten)]
    pub data_dir: DataDirArg,
    #[command(flatten)]
    pub database: DatabaseArg,
}

impl StateArgs {
    /// Opens the selected database.
    pub async fn open(&self) -> Result<Store> {
        let dir = DataDir::new(&self.data_dir.data_dir);
        Store::open_selected(&dir, self.database.database_url.as_deref()).await
    }
}

/// Arguments of `apitoken create`.
#[derive(Debug, Args)]
pub struct CreateArgs {
    #[command(flatten)]
    pub state: StateArgs,
    /// viewer (read), operator (also decide approvals) or admin (everything).
    #[arg(long, value_parser = parse_role)]
    pub role: Role,
    /// Who holds it; the actor in the audit log.
    #[arg(long)]
    pub name: String,
}

/// Arguments of `apitoken revoke`.
#[derive(Debug, Args)]
pub struct RevokeArgs {
    #[command(flatten)]
    pub state: StateArgs,
    /// The token's id (12 hex characters).
    pub id: String,
}

fn parse_role(text: &str) -> std::result::Result<Role, String> {
    text.parse().map_err(|e: Error| e.to_string())
}

/// Runs an `apitoken` subcommand.
pub fn run(command: ApiTokenCommand) -> Result<()> {
    super::client_runtime()?.block_on(async {
        match command {
            ApiTokenCommand::Create(args) => create(args).await,
            ApiTokenCommand::List(args) => list(args).await,
            ApiTokenCommand::Revoke(args) => revoke(args).await,
        }
    })
}

fn write_out(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")
        .and_then(|()| out.flush())
        .map_err(Error::WriteOutput)
}

async fn create(args: CreateArgs) -> Result<()> {
    let store = args.state.open().await?;
    let (token, row) = store
        .create_api_token(&args.name, args.role, unix_now())
        .await?;
    audit::record(&store, Entry::new("cli", "api_token.create", &row.id)).await;
    store.close().await;
    let _ = writeln!(
        std::io::stderr().lock(),
        "API token {} ({}, role {}); it is shown only now",
        row.id,
        row.name,
        row.role
    );
    write_out(&token)
}

async fn list(args: StateArgs) -> Result<()> {
    let store = args.open().await?;
    let rows = store.list_api_tokens().await?;
    store.close().await;
    let mut text = format!(
        "{:<12}  {:<20}  {:<8}  {:<20}  {:<20}  REVOKED",
        "ID", "NAME", "ROLE", "CREATED", "LAST USED"
    );
    for row in rows {
        let when = |t: Option<i64>| t.map(rfc3339).unwrap_or_else(|| "-".into());
        text.push_str(&format!(
            "\n{:<12}  {:<20}  {:<8}  {:<20}  {:<20}  {}",
            row.id,
            row.name,
            row.role,
            rfc3339(row.created_at),
            when(row.last_used),
            when(row.revoked_at)
        ));
    }
    write_out(&text)
}

async fn revoke(args: RevokeArgs) -> Result<()> {
    let store = args.state.open().await?;
    let row = store.revoke_api_token(&args.id, unix_now()).await?;
    audit::record(&store, Entry::new("cli", "api_token.revoke", &row.id)).await;
    store.close().await;
    write_out(&format!("revoked API token {} ({})", row.id, row.name))
}
