//! The link to the controller: enrollment ([`enroll()`]), and for `run` one mutually
//! authenticated stream at a time ([`session`]) with reconnects under [`Backoff`].
//!
//! [`run`] owns the process-wide pieces (the guard with its fixed read-only mode and nonce
//! cache, the executor) and loops: load the credentials (a renewal may have replaced
//! them), run a stream, record `status.json`, back off, again. A `Goodbye` with
//! `retry: false` ends the loop with [`Error::Revoked`] unless the state directory now
//! holds a different identity (someone ran `join` again while the agent was running).

mod backoff;
mod dispatch;
pub mod enroll;
mod pin;
pub mod renew;
pub mod session;
pub mod tls;

pub use backoff::Backoff;
pub use enroll::{JoinOptions, enroll};
pub use pin::{PinMismatch, PinnedCaVerifier};
pub use tls::ControllerUrl;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::exec::{Executor, HostRunner, ReadSandbox};
use crate::guard::Guard;
use crate::inventory::SourceCtx;
use crate::inventory::reporter::Discovery;
use crate::platform::Platform;
use crate::state::{Credentials, LinkStatus, StateDir, format_time, now_unix};
use session::End;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, info, info_span, warn};
use vigil_shared::grant::verifying_key_from_bytes;
use vigil_shared::ids::AgentId;

/// How long a final goodbye waits for a re-join to write a new identity.
pub const REJOIN_GRACE: Duration = Duration::from_secs(3);

/// What every stream of one `run` process shares.
#[derive(Debug)]
pub struct Runtime {
    state: StateDir,
    config: Config,
    agent_id: AgentId,
    guard: Arc<Guard>,
    executor: Arc<Executor>,
    platform: Platform,
    discovery: Arc<Discovery>,
    sandbox: Arc<ReadSandbox>,
}

impl Runtime {
    /// Load the credentials and build the guard and the executor for `platform`, with
    /// host reads confined by `sandbox`.
    pub fn new(
        state: StateDir,
        config: Config,
        platform: Platform,
        sandbox: ReadSandbox,
    ) -> Result<Runtime> {
        let creds = state.load()?;
        let sandbox = Arc::new(sandbox);
        let executor = Arc::new(Executor::new(
            HostRunner::in_root(sandbox.host_root()),
            platform.backends.clone(),
            config.max_output_cap_bytes,
            Arc::clone(&sandbox),
        ));
        let guard = Arc::new(guard_for(&state, &creds, config.read_only)?);
        let discovery = Arc::new(
            Discovery::start(
                platform.sources.clone(),
                SourceCtx {
                    agent_id: creds.agent_id.to_string(),
                    hostname: crate::inventory::hostname(),
                },
                Duration::from_secs(config.discovery.rescan_s),
                Duration::from_millis(config.discovery.debounce_ms),
            )
            .with_sandbox(sandbox.facts()),
        );
        let sandbox_for_runtime = Arc::clone(&sandbox);
        Ok(Runtime {
            agent_id: creds.agent_id,
            state,
            config,
            guard,
            executor,
            platform,
            discovery,
            sandbox: sandbox_for_runtime,
        })
    }

    /// Apply the controller's `SandboxPolicy` (paths it adds to what reads never see).
    /// Returns true when that changed what is hidden; the facts then say so.
    pub fn apply_sandbox_policy(&self, hide: &[String]) -> bool {
        let changed = self.sandbox.apply_controller_policy(hide);
        let refused = self.sandbox.hidden().from_controller().refused;
        if !refused.is_empty() {
            warn!(
                ?refused,
                "the controller asked to hide patterns that are not valid"
            );
        }
        if changed {
            info!(
                patterns = hide.len(),
                "the controller changed what reads never see"
            );
            self.discovery.set_sandbox(self.sandbox.facts());
        }
        changed
    }

    /// The host facts with the read sandbox's.
    pub fn host_facts(&self) -> vigil_proto::agent::v1::HostFacts {
        self.discovery.host_facts()
    }

    /// The agent id the guard checks grants against.
    pub fn agent_id(&self) -> AgentId {
        self.agent_id
    }

    /// Write `status.json`; a failure is logged, not fatal.
    fn set_status(&self, connected: bool, last_error: Option<String>) {
        let status = LinkStatus {
            connected,
            since: format_time(now_unix()),
            last_error,
            pid: std::process::id(),
            read_only: self.config.read_only,
        };
        if let Err(error) = self.state.write_status(&status) {
            warn!(%error, "could not write status.json");
        }
    }

    /// Take over a new identity written by `join` while running (read-only mode stays).
    fn adopt(&mut self, creds: &Credentials) -> Result<()> {
        if creds.agent_id != self.agent_id {
            info!(old = %self.agent_id, new = %creds.agent_id, "the state directory holds a new identity; using it");
            self.guard = Arc::new(guard_for(&self.state, creds, self.config.read_only)?);
            self.agent_id = creds.agent_id;
        }
        Ok(())
    }
}

fn guard_for(state: &StateDir, creds: &Credentials, read_only: bool) -> Result<Guard> {
    let key = verifying_key_from_bytes(&creds.grant_key).ok_or_else(|| Error::State {
        path: state.file(crate::state::GRANT_KEY_FILE),
        message: "not a valid Ed25519 public key".into(),
    })?;
    Ok(Guard::new(creds.agent_id, key, read_only))
}

/// After a final goodbye, whether `join` is replacing the identity: the controller
/// revokes the old identity during the new enrollment, a moment before `join` writes the
/// new files, so they are given [`REJOIN_GRACE`] to appear.
async fn new_identity_appears(rt: &Runtime, shutdown: &CancellationToken) -> bool {
    let deadline = Instant::now() + REJOIN_GRACE;
    loop {
        let current = rt.state.identity().ok().flatten().map(|i| i.agent_id);
        if current.is_some_and(|id| id != rt.agent_id.to_string()) {
            return true;
        }
        if Instant::now() >= deadline || shutdown.is_cancelled() {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Keep the link up until `shutdown` or a final goodbye.
pub async fn run(mut rt: Runtime, shutdown: CancellationToken) -> Result<()> {
    let mut backoff = Backoff::new();
    // Which of the controller's gateways to dial next: every reconnect moves on to the
    // next one, so an agent whose replica went away lands on another. The first is the
    // one it enrolled through when that is one of them, else one picked by its id, so a
    // fleet enrolled through a load balancer spreads over the replicas.
    let mut next_gateway = rt
        .state
        .load()
        .map(|creds| first_gateway(&creds.identity, rt.agent_id))
        .unwrap_or_default();
    info!(agent = %rt.agent_id, read_only = rt.config.read_only, "agent starting");
    loop {
        let mut connected: Option<Instant> = None;
        let result = match rt.state.load().and_then(|c| rt.adopt(&c).map(|()| c)) {
            Ok(creds) => {
                let gateways = creds.identity.gateways();
                let url = gateways[next_gateway % gateways.len()].clone();
                next_gateway = next_gateway.wrapping_add(1);
                let span = info_span!("stream", agent = %creds.agent_id, url = %url);
                session::run_stream(&rt, &creds, &url, &shutdown, &mut connected)
                    .instrument(span)
                    .await
            }
            Err(error) => Err(error),
        };
        let lived = connected.map_or(Duration::ZERO, |t| t.elapsed());
        let reason = match result {
            Ok(End::Shutdown) => {
                rt.set_status(false, Some("the agent stopped".into()));
                info!("agent stopped");
                return Ok(());
            }
            Ok(End::Goodbye {
                reason,
                retry: false,
            }) => {
                if !new_identity_appears(&rt, &shutdown).await {
                    rt.set_status(false, Some(format!("revoked: {reason}")));
                    return Err(Error::Revoked(reason));
                }
                format!("goodbye ({reason}); a new identity is waiting")
            }
            Ok(End::Goodbye {
                reason,
                retry: true,
            }) => format!("goodbye: {reason}"),
            Ok(End::Closed(reason)) => reason,
            Err(error) => error.to_string(),
        };
        rt.set_status(false, Some(reason.clone()));
        backoff.after_stream(lived);
        let delay = backoff.next_delay();
        warn!(error = %reason, connected_s = lived.as_secs(), retry_in_ms = delay.as_millis() as u64, "link down");
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = shutdown.cancelled() => {
                rt.set_status(false, Some("the agent stopped".into()));
                return Ok(());
            }
        }
    }
}

/// The index of the gateway to dial first (see [`run`]).
fn first_gateway(identity: &crate::state::Identity, agent: AgentId) -> usize {
    let gateways = identity.gateways();
    gateways
        .iter()
        .position(|url| *url == identity.url)
        .unwrap_or_else(|| {
            let spread = agent.to_string().bytes().fold(0usize, |sum, b| {
                sum.wrapping_mul(31).wrapping_add(usize::from(b))
            });
            spread % gateways.len()
        })
}

#[cfg(test)]
mod tests;
