//! `vigil-controller token create | list | revoke`: join tokens, directly on the data
//! directory's database (safe while `serve` runs: SQLite in WAL mode).

use std::io::Write;

use clap::{Args, Subcommand};
use time::OffsetDateTime;

use crate::agents::join_tokens::{self, Issued, JoinTokenRequest};
use crate::clock::{rfc3339, unix_now};
use crate::config::{DataDirArg, SecretsDirArg};
use crate::data_dir::DataDir;
use crate::pki::{Pki, join_token};
use crate::store::{DatabaseArg, JoinTokenRow, Store};
use crate::{Error, Result};

/// `vigil-controller token …`
#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Create a join token and print it alone on the last line of standard output.
    Create(CreateArgs),
    /// List join tokens: id, labels, uses left, expiry, state.
    List(ListArgs),
    /// Revoke a join token by its id (from `token list`) or by the token itself.
    Revoke(RevokeArgs),
}

/// Arguments of `token create`.
#[derive(Debug, Args)]
pub struct CreateArgs {
    #[command(flatten)]
    pub data_dir: DataDirArg,
    #[command(flatten)]
    pub secrets: SecretsDirArg,
    #[command(flatten)]
    pub database: DatabaseArg,
    /// How many agents may enroll with the token.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub uses: u32,
    /// How long the token is valid: 90s, 30m, 1h, 1h30m, at most 24h.
    #[arg(long, default_value = "1h", value_name = "DURATION")]
    pub ttl: String,
    /// A label given to agents that enroll with the token (repeatable).
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,
}

/// Arguments of `token list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub data_dir: DataDirArg,
    #[command(flatten)]
    pub database: DatabaseArg,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `token revoke`.
#[derive(Debug, Args)]
pub struct RevokeArgs {
    #[command(flatten)]
    pub data_dir: DataDirArg,
    #[command(flatten)]
    pub database: DatabaseArg,
    /// The token's id (first 8 hex characters of its hash), full hash, or the token.
    pub id: String,
}

/// Runs a `token` subcommand.
pub fn run(command: TokenCommand) -> Result<()> {
    super::client_runtime()?.block_on(async {
        match command {
            TokenCommand::Create(args) => create(args).await,
            TokenCommand::List(args) => list(args).await,
            TokenCommand::Revoke(args) => revoke(args).await,
        }
    })
}

async fn create(args: CreateArgs) -> Result<()> {
    let request = JoinTokenRequest {
        uses: join_tokens::check_uses("--uses", args.uses)?,
        ttl_s: join_token::parse_ttl(&args.ttl)?,
        labels: join_token::parse_labels(&args.labels)?,
    };
    let dir = DataDir::new(&args.data_dir.data_dir);
    let ca = Pki::load_or_create_ca(&dir, args.secrets.get(), OffsetDateTime::now_utc())?;
    let store = Store::open_selected(&dir, args.database.database_url.as_deref()).await?;
    let issued = join_tokens::issue(&store, request, "cli").await;
    store.close().await;
    let Issued { token, row } = issued?;

    let mut err = std::io::stderr().lock();
    let labels_text = format_labels(&row);
    let _ = writeln!(
        err,
        "join token {}: {} use(s), expires {}{}",
        row.id,
        row.uses_total,
        rfc3339(row.expires_at),
        if labels_text.is_empty() {
            String::new()
        } else {
            format!(", labels {labels_text}")
        }
    );
    let _ = writeln!(
        err,
        "enroll with: vigil-agent join --url https://<controller>:8641 --token <token> --ca-fingerprint {}",
        ca.fingerprint()
    );
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", token.token)
        .and_then(|()| out.flush())
        .map_err(Error::WriteOutput)
}

fn format_labels(row: &JoinTokenRow) -> String {
    row.labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

async fn list(args: ListArgs) -> Result<()> {
    let store = Store::open_selected(
        &DataDir::new(&args.data_dir.data_dir),
        args.database.database_url.as_deref(),
    )
    .await?;
    let tokens = store.list_join_tokens().await?;
    store.close().await;
    let now = unix_now();
    let mut out = std::io::stdout().lock();
    let text = if args.json {
        let rows: Vec<serde_json::Value> = tokens
            .iter()
            .map(|t| {
                serde_json::json!({
                    "id": t.id,
                    "labels": t.labels,
                    "uses_left": t.uses_left,
                    "uses_total": t.uses_total,
                    "expires_at": rfc3339(t.expires_at),
                    "state": t.state(now),
                })
            })
            .collect();
        serde_json::to_string_pretty(&rows)? + "\n"
    } else {
        let mut text = format!(
            "{:<8}  {:<6}  {:<20}  {:<8}  LABELS\n",
            "ID", "USES", "EXPIRES", "STATE"
        );
        for t in &tokens {
            let uses = format!("{}/{}", t.uses_left, t.uses_total);
            let state = t.state(now).to_string();
            text += &format!(
                "{:<8}  {:<6}  {:<20}  {:<8}  {}\n",
                t.id,
                uses,
                rfc3339(t.expires_at),
                state,
                format_labels(t)
            );
        }
        text
    };
    out.write_all(text.as_bytes()).map_err(Error::WriteOutput)
}

async fn revoke(args: RevokeArgs) -> Result<()> {
    let store = Store::open_selected(
        &DataDir::new(&args.data_dir.data_dir),
        args.database.database_url.as_deref(),
    )
    .await?;
    let row = store.revoke_join_token(&args.id, unix_now()).await?;
    store.close().await;
    let mut out = std::io::stdout().lock();
    writeln!(out, "revoked join token {}", row.id).map_err(Error::WriteOutput)
}
