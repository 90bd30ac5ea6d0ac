//! `vigil-agent run`.

use super::{ConfigArgs, StateArgs};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::link::{self, Runtime};
use crate::state::StateDir;
use clap::Args;
use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;
use tracing::info;

pub const LONG_ABOUT: &str = "\
Connect to the controller with this host's certificate and keep the connection up, \
reconnecting with backoff. Every command that arrives is checked again here: reads must be \
provably read-only and bounded, writes need a grant signed by the controller's key for this \
agent and this exact command. With --read-only (or read_only = true in the config) every \
write is refused for the life of the process. SIGTERM or SIGINT stops the agent and kills \
running commands. Exits with status 3 when the controller revokes the agent.";

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    state: StateArgs,
    /// Refuse every write, whatever the controller sends.
    #[arg(long)]
    read_only: bool,
    #[command(flatten)]
    config: ConfigArgs,
}

pub async fn run(args: RunArgs) -> Result<()> {
    let config = Config::load(args.config.config.as_deref(), args.read_only)?;
    let platform = crate::platform::detect(&config.discovery).await;
    let runtime = Runtime::new(StateDir::new(args.state.state_dir), config, platform)?;
    let shutdown = CancellationToken::new();
    let mut term =
        signal(SignalKind::terminate()).map_err(|e| Error::io("listen for SIGTERM", e))?;
    let mut int = signal(SignalKind::interrupt()).map_err(|e| Error::io("listen for SIGINT", e))?;
    let stop = shutdown.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = term.recv() => info!("SIGTERM received; stopping"),
            _ = int.recv() => info!("SIGINT received; stopping"),
        }
        stop.cancel();
    });
    link::run(runtime, shutdown).await
}
