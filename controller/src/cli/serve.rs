//! `vigil-controller serve`: validates the flags, starts the controller and runs it until
//! SIGINT or SIGTERM.

use std::io::Write;

use tokio::signal::unix::{SignalKind, signal};
use tracing::info;

use crate::config::{Config, ServeArgs};
use crate::data_dir::{ADMIN_TOKEN, DataDir};
use crate::server::{self, RunningController};
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
        print_welcome(&config, &running);
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

/// Tells a person at the terminal where the API is and how to call it (standard error).
fn print_welcome(config: &Config, running: &RunningController) {
    let token = DataDir::new(&config.data_dir).path(ADMIN_TOKEN);
    let base = &running.install.base_url;
    let mut text = format!(
        "\nVigil controller: HTTP API at {base}, agent gateway at {}\nAdmin token: {}\n\
         Web page: {base}/ (sign in with the admin token); terminal chat: vigil-controller chat --url {base} --data-dir {}\n",
        running.grpc_addr,
        token.display(),
        config.data_dir.display(),
    );
    if let Some(agent) = &running.local_agent {
        text += &format!(
            "Local agent: {agent} (log in {})\nTry:\n  curl -H \"Authorization: Bearer $(cat {})\" \\\n    -H 'Accept: application/json' -d '{{\"agent\":\"{agent}\",\"command\":\"uptime\"}}' \\\n    {base}/api/exec\n",
            config.data_dir.join(crate::local_agent::LOG_FILE).display(),
            token.display(),
        );
    }
    text += &format!(
        "Install an agent on another host: POST {base}/api/join-tokens returns the install line.\n\n"
    );
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}
