//! The fleet simulator behind `vigil-fleet` (`make fleet`): many enrolled agent identities
//! in one process, each holding its own mutually authenticated AgentLink stream, so the
//! controller can be measured at thousands of agents on one machine.
//!
//! Start at [`run`]: it raises the descriptor limit ([`limits`]), loads or completes the
//! identities kept in the state directory ([`state`], [`enroll`], through the HTTP API in
//! [`api`]), then runs one task per identity ([`link`]) that says hello, heartbeats,
//! reports its host ([`inventory`]) and answers commands with canned output ([`exec`]),
//! reconnecting with the agent's own backoff. [`progress`] counts live streams and prints
//! `connected N/N`; [`measure`] is the `measure` subcommand that `make fleet` uses.
//!
//! The transport is the real agent's (`vigil_agent::link::tls`): the same TLS 1.3
//! configurations, dialer and tonic channel; only what runs behind the stream is canned.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

pub mod api;
pub mod enroll;
mod error;
pub mod exec;
pub mod inventory;
pub mod limits;
pub mod link;
pub mod measure;
pub mod procfs;
pub mod progress;
pub mod state;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tracing::info;

pub use error::{Error, Result};

/// What a run needs (the flags of `vigil-fleet`).
#[derive(Debug, Clone)]
pub struct FleetOptions {
    /// The controller's HTTP API, `http(s)://HOST:PORT`.
    pub url: String,
    /// An admin API token (needed only when identities must be enrolled).
    pub token: Option<String>,
    /// A PEM file with the CA of an HTTPS API.
    pub http_ca: Option<PathBuf>,
    /// How many agents to simulate.
    pub agents: usize,
    /// Where the identities are kept.
    pub state_dir: PathBuf,
    /// The gateways, `https://HOST:PORT`: identities enroll through the first, and their
    /// streams spread over all (several replicas); by default the one the API's install
    /// line names.
    pub gateways: Vec<String>,
    /// The CA pin, `sha256:<hex>`; by default the one the API's install line names.
    pub ca_fingerprint: Option<String>,
    /// Enrollments and stream openings in flight at once.
    pub concurrency: usize,
    /// Labels of the join tokens, so of every enrolled identity.
    pub labels: BTreeMap<String, String>,
    /// Host names are `<prefix>-<index>`.
    pub hostname_prefix: String,
    /// Overrides the heartbeat interval the HelloAck asks for.
    pub heartbeat: Option<Duration>,
}

/// Enrolls what is missing, then keeps every stream up until `shutdown`.
pub async fn run(options: FleetOptions, shutdown: CancellationToken) -> Result<()> {
    limits::raise_nofile(options.agents)?;
    let Some(state) = enroll::ensure(&options, &shutdown).await? else {
        return Ok(());
    };
    let identities = state.identities(options.agents)?;
    let gateways: Vec<vigil_agent::link::ControllerUrl> = if options.gateways.is_empty() {
        vec![state.gateway.parse()?]
    } else {
        options
            .gateways
            .iter()
            .map(|url| url.parse())
            .collect::<vigil_agent::Result<_>>()?
    };
    info!(
        agents = identities.len(),
        gateways = gateways.len(),
        "opening one stream per identity"
    );
    let progress = Arc::new(progress::Progress::new(identities.len()));
    let fleet = Arc::new(link::Fleet::new(
        gateways,
        Arc::clone(&progress),
        options.concurrency,
        options.heartbeat,
        shutdown.clone(),
    ));
    let reporter = tokio::spawn(progress::report(Arc::clone(&progress), shutdown.clone()));
    let mut tasks = tokio::task::JoinSet::new();
    for (index, identity) in identities.into_iter().enumerate() {
        tasks.spawn(link::run_agent(Arc::clone(&fleet), identity, index));
    }
    while tasks.join_next().await.is_some() {}
    reporter.abort();
    info!("every stream is closed");
    Ok(())
}
