//! `--local-agent`: one agent for this machine, for `make run` and trying Vigil out. The
//! controller enrolls `vigil-agent` (the binary next to its own) into
//! `<data-dir>/local-agent` with a single-use join token on first start, reuses that
//! enrollment afterwards, and supervises `vigil-agent run` as a child: restarted with
//! backoff when it exits, killed on shutdown, given up when the controller revoked it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use crate::agents::join_tokens::{self, JoinTokenRequest};
use crate::store::Store;
use crate::{Error, Result};

/// The local agent's state directory, inside the data directory.
pub const STATE_DIR: &str = "local-agent";
/// Its log file, inside the data directory.
pub const LOG_FILE: &str = "local-agent.log";
/// `vigil-agent run` exits with this code when the controller revoked it.
const EXIT_REVOKED: i32 = 3;
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// `vigil-agent` next to the running controller binary.
pub fn agent_binary() -> Result<PathBuf> {
    let path = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("vigil-agent")))
        .filter(|path| path.is_file())
        .ok_or_else(|| {
            Error::Config(
                "--local-agent needs vigil-agent next to vigil-controller (cargo build --workspace)"
                    .into(),
            )
        })?;
    Ok(path)
}

/// The gateway URL the local agent joins: the gateway's own address (loopback when it
/// listens on every interface).
pub fn gateway_url(grpc_addr: std::net::SocketAddr) -> String {
    match grpc_addr.ip() {
        ip if ip.is_unspecified() => format!("https://127.0.0.1:{}", grpc_addr.port()),
        _ => format!("https://{grpc_addr}"),
    }
}

/// The enrolled local agent.
#[derive(Debug, Clone)]
pub struct LocalAgent {
    /// `vigil-agent`.
    pub binary: PathBuf,
    /// Its state directory.
    pub state_dir: PathBuf,
    /// Its agent id.
    pub id: String,
    log: PathBuf,
}

fn agent_id(state_dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(state_dir.join("identity.json")).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    value["agent_id"].as_str().map(str::to_owned)
}

/// Enrolls the local agent unless `<data_dir>/local-agent` already holds an identity.
pub async fn enroll(
    data_dir: &Path,
    store: &Store,
    gateway_url: &str,
    ca_fingerprint: &str,
) -> Result<LocalAgent> {
    let binary = agent_binary()?;
    let state_dir = std::path::absolute(data_dir.join(STATE_DIR))
        .map_err(Error::file("resolving", data_dir.join(STATE_DIR)))?;
    let log = data_dir.join(LOG_FILE);
    if let Some(id) = agent_id(&state_dir) {
        info!(agent = %id, state_dir = %state_dir.display(), "reusing the local agent's enrollment");
        return Ok(LocalAgent {
            binary,
            state_dir,
            id,
            log,
        });
    }
    let request = JoinTokenRequest {
        uses: 1,
        ttl_s: 600,
        labels: BTreeMap::from([("local".to_owned(), "true".to_owned())]),
    };
    let token = join_tokens::issue(store, request, "local-agent")
        .await?
        .token;
    let output = Command::new(&binary)
        .args([
            "join",
            "--url",
            gateway_url,
            "--ca-fingerprint",
            ca_fingerprint,
        ])
        .arg("--state-dir")
        .arg(&state_dir)
        .env("VIGIL_AGENT_TOKEN", &token.token)
        .stdin(Stdio::null())
        .output()
        .await
        .map_err(Error::file("running", &binary))?;
    if !output.status.success() {
        return Err(Error::Network(format!(
            "enrolling the local agent failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    let id = agent_id(&state_dir).ok_or_else(|| {
        Error::Network(format!(
            "the local agent wrote no identity in {}",
            state_dir.display()
        ))
    })?;
    info!(agent = %id, state_dir = %state_dir.display(), "enrolled the local agent");
    Ok(LocalAgent {
        binary,
        state_dir,
        id,
        log,
    })
}

impl LocalAgent {
    fn spawn(&self) -> Result<Child> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .map_err(Error::file("opening", &self.log))?;
        let log_err = log.try_clone().map_err(Error::file("opening", &self.log))?;
        let mut command = Command::new(&self.binary);
        command.arg("run").arg("--state-dir").arg(&self.state_dir);
        // The controller's data directory (its keys, tokens and database) is hidden from
        // the agent's reads even where the host registry cannot be written.
        if let Some(data_dir) = self.log.parent().and_then(|d| std::path::absolute(d).ok()) {
            command.arg("--hide").arg(data_dir);
        }
        command
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .kill_on_drop(true)
            .spawn()
            .map_err(Error::file("running", &self.binary))
    }

    /// Runs `vigil-agent run` until `shutdown`, restarting it with backoff.
    pub async fn supervise(self, shutdown: CancellationToken) -> Result<()> {
        let mut backoff = Duration::from_secs(1);
        loop {
            let mut child = match self.spawn() {
                Ok(child) => child,
                Err(error) => {
                    warn!(%error, agent = %self.id, "cannot start the local agent");
                    if pause(backoff, &shutdown).await {
                        return Ok(());
                    }
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    continue;
                }
            };
            let started = Instant::now();
            info!(agent = %self.id, pid = child.id(), log = %self.log.display(), "started the local agent");
            let status = tokio::select! {
                status = child.wait() => status,
                () = shutdown.cancelled() => {
                    let _ = child.start_kill();
                    let _ = child.wait().await;
                    info!(agent = %self.id, "stopped the local agent");
                    return Ok(());
                }
            };
            let code = status
                .as_ref()
                .ok()
                .and_then(std::process::ExitStatus::code);
            if code == Some(EXIT_REVOKED) {
                warn!(agent = %self.id, "the local agent was revoked; not restarting it");
                shutdown.cancelled().await;
                return Ok(());
            }
            if started.elapsed() > Duration::from_secs(60) {
                backoff = Duration::from_secs(1);
            }
            warn!(agent = %self.id, ?code, retry_in_s = backoff.as_secs(), "the local agent exited");
            if pause(backoff, &shutdown).await {
                return Ok(());
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }
}

/// Sleeps for `backoff`; true when `shutdown` came first.
async fn pause(backoff: Duration, shutdown: &CancellationToken) -> bool {
    tokio::select! {
        () = tokio::time::sleep(backoff) => false,
        () = shutdown.cancelled() => true,
    }
}
