//! `vigil-controller serve`: validates the flags, starts the controller and runs it until
//! SIGINT or SIGTERM.

use tokio::signal::unix::{SignalKind, signal};
use tracing::info;

use crate::config::{Config, ServeArgs};
use crate::server;
use crate::{Error, Result};

/// Runs `serve`.
pub fn run(args: &ServeArgs) -> Result<()> {
    let config = Config::from_args(args)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Network(format!("starting the async runtime: {e}")))?;
    runtime.block_on(async {
        let mut running = server::start(&config).await?;
        let result = tokio::select! {
            result = running.wait() => result,
            signal = shutdown_signal() => {
                info!(signal, "shutting down");
                Ok(())
            }
        };
        let stopped = running.shutdown().await;
        result.and(stopped)
    })
}

/// Resolves on SIGINT or SIGTERM, with the signal's name.
async fn shutdown_signal() -> &'static str {
    let mut terminate = match signal(SignalKind::terminate()) {
        Ok(stream) => stream,
        Err(error) => {
            tracing::warn!(%error, "cannot watch SIGTERM; only SIGINT stops the controller");
            let _ = tokio::signal::ctrl_c().await;
            return "SIGINT";
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => "SIGINT",
        _ = terminate.recv() => "SIGTERM",
    }
}
