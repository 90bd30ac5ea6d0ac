//! Replicas of one controller on one PostgreSQL. Each replica registers itself with a lease
//! it renews ([`lease`]); one that cannot renew in time fences itself (drops its agent
//! streams, refuses new ones and new work) before the others may treat it as dead. The
//! database records which replica holds each agent's newest stream, and a command for an
//! agent held elsewhere is forwarded to that replica over the internal link ([`forward`]
//! is its client, `crate::gateway::cluster_link` its server; [`tls`] their mutual TLS).
//!
//! A single controller (SQLite, or PostgreSQL without `--cluster-listen`) runs the same
//! lease, listed as the only replica; it has nowhere to forward.

pub mod forward;
pub mod inventory;
pub mod lease;
pub mod tls;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use vigil_shared::ids::AgentId;

use crate::agents::Agents;
use crate::error::codes::ApiCode;
use crate::store::Store;
use crate::store::replicas::{AgentOwner, ReplicaRecord, ReplicaRow};
use crate::{Error, Result};

pub use forward::{Forwarder, RemoteExec};

/// How long a lease lasts from its renewal (the database's clock).
pub const LEASE: Duration = Duration::from_secs(10);
/// How often a replica renews its lease.
pub const RENEW_EVERY: Duration = Duration::from_secs(2);
/// A replica fences itself this long before its lease would lapse, so it has stopped
/// before anyone may take over.
pub const FENCE_MARGIN: Duration = Duration::from_secs(2);
/// Lapsed replicas are forgotten (with the streams the table says they held) after this.
pub const FORGET_AFTER: Duration = Duration::from_secs(600);

/// `--cluster-listen` and `--cluster-advertise`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterListen {
    /// Where the internal link listens.
    pub listen: SocketAddr,
    /// What the other replicas dial (`HOST:PORT`).
    pub advertise: String,
}

impl ClusterListen {
    /// The settings, checked: a replica needs PostgreSQL, and an address the others can
    /// dial.
    pub fn from_settings(
        listen: Option<&str>,
        advertise: Option<&str>,
        has_database_url: bool,
    ) -> Result<Option<ClusterListen>> {
        let Some(listen) = listen else {
            if advertise.is_some() {
                return Err(Error::Config(
                    "--cluster-advertise needs --cluster-listen".into(),
                ));
            }
            return Ok(None);
        };
        if !has_database_url {
            return Err(Error::Config(
                "--cluster-listen makes this controller one of several replicas, which share \
                 one PostgreSQL: give --database-url postgres://… (SQLite serves one controller)"
                    .into(),
            ));
        }
        let listen: SocketAddr = listen
            .trim()
            .parse()
            .map_err(|_| Error::Config(format!("--cluster-listen {listen:?} is not an IP:PORT")))?;
        let advertise = match advertise {
            Some(advertise) => host_port("--cluster-advertise", advertise)?,
            None if listen.ip().is_unspecified() => {
                return Err(Error::Config(format!(
                    "--cluster-listen {listen} listens on every address: give \
                     --cluster-advertise HOST:PORT, the address the other replicas dial"
                )));
            }
            None => listen.to_string(),
        };
        Ok(Some(ClusterListen { listen, advertise }))
    }
}

/// `--gateway-endpoints`, each checked to be `HOST:PORT`.
pub fn gateway_endpoints(list: &[String]) -> Result<Vec<String>> {
    list.iter()
        .map(|entry| host_port("--gateway-endpoints", entry))
        .collect()
}

/// `text` as `HOST:PORT` (an IPv6 host in brackets), trimmed.
fn host_port(flag: &str, text: &str) -> Result<String> {
    let text = text.trim();
    let bad = || Error::Config(format!("{flag} {text:?} is not HOST:PORT"));
    let (host, port) = text.rsplit_once(':').ok_or_else(bad)?;
    let host_ok = if let Some(inner) = host.strip_prefix('[') {
        inner
            .strip_suffix(']')
            .is_some_and(|ip| ip.parse::<std::net::Ipv6Addr>().is_ok())
    } else {
        !host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
    };
    if !host_ok || port.parse::<u16>().map_or(true, |p| p == 0) {
        return Err(bad());
    }
    Ok(text.to_owned())
}

/// This replica's place among the others. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Cluster {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    me: ReplicaRecord,
    agents: Agents,
    fenced: AtomicBool,
    draining: AtomicBool,
    forwarder: Option<Forwarder>,
    /// When this replica started.
    started: std::time::Instant,
}

impl Cluster {
    /// This replica (`me`) holding `agents`' streams; `forwarder` reaches the others
    /// (none for a single controller).
    pub fn new(agents: Agents, me: ReplicaRecord, forwarder: Option<Forwarder>) -> Self {
        Cluster {
            inner: Arc::new(Inner {
                me,
                agents,
                fenced: AtomicBool::new(false),
                draining: AtomicBool::new(false),
                forwarder,
                started: std::time::Instant::now(),
            }),
        }
    }

    /// True for [`crate::agents::remote::MOVING_FOR`] after this replica started: it has
    /// not yet seen which agents left a replica moments ago (a restart in a rolling
    /// update), so any enrolled agent it finds nowhere may be on its way.
    pub fn is_new(&self) -> bool {
        self.inner.started.elapsed() < crate::agents::remote::MOVING_FOR
    }

    /// The agents.
    pub fn agents(&self) -> &Agents {
        &self.inner.agents
    }

    /// This replica's id.
    pub fn id(&self) -> &str {
        &self.inner.me.id
    }

    /// What this replica registers.
    pub fn record(&self) -> &ReplicaRecord {
        &self.inner.me
    }

    /// The database.
    pub fn store(&self) -> &Store {
        self.inner.agents.store()
    }

    /// True while this replica has fenced itself (its lease could not be renewed).
    pub fn is_fenced(&self) -> bool {
        self.inner.fenced.load(Ordering::SeqCst)
    }

    pub(crate) fn set_fenced(&self, fenced: bool) -> bool {
        self.inner.fenced.swap(fenced, Ordering::SeqCst)
    }

    /// True once this replica is stopping.
    pub fn is_draining(&self) -> bool {
        self.inner.draining.load(Ordering::SeqCst)
    }

    /// Marks this replica as stopping: it takes no new agent streams or work.
    pub fn start_draining(&self) {
        self.inner.draining.store(true, Ordering::SeqCst);
    }

    /// `REPLICA_FENCED` while this replica is fenced: it answers nothing that needs the
    /// database or its agents (the load balancer sends the request to another).
    pub fn ensure_not_fenced(&self) -> Result<()> {
        if self.is_fenced() {
            return Err(Error::coded(
                ApiCode::ReplicaFenced,
                "this controller replica lost its database lease and takes no work until it \
                 renews it; retry (another replica answers)",
            ));
        }
        Ok(())
    }

    /// `REPLICA_FENCED` while this replica is fenced or draining: it must not take new
    /// agent streams.
    pub fn ensure_serving(&self) -> Result<()> {
        self.ensure_not_fenced()?;
        if self.is_draining() {
            return Err(Error::coded(
                ApiCode::ReplicaFenced,
                "this controller replica is shutting down; retry (another replica answers)",
            ));
        }
        Ok(())
    }

    /// Records that this replica holds `agent`'s newest stream `conn`.
    pub async fn stream_opened(&self, agent: AgentId, conn: u64) -> Result<()> {
        self.ensure_serving()?;
        self.store().claim_agent(agent, self.id(), conn).await?;
        self.inner.agents.remote().remove(agent);
        Ok(())
    }

    /// Records that the stream `conn` of `agent` ended (a newer one, anywhere, stays).
    pub async fn stream_closed(&self, agent: AgentId, conn: u64) {
        if let Err(error) = self.store().release_agent(agent, self.id(), conn).await {
            tracing::warn!(%agent, %error, "could not record that an agent stream ended");
        }
    }

    /// The live replica other than this one that holds `agent`'s stream: from what the
    /// last renewal read, else from the database (a stream opened since).
    pub async fn remote_owner(&self, agent: AgentId) -> Option<AgentOwner> {
        if let Some(owner) = self.inner.agents.remote().get(agent) {
            return Some(owner);
        }
        match self.store().live_owner_of(agent).await {
            Ok(Some(owner)) if owner.replica_id != self.id() => Some(owner),
            Ok(_) => None,
            Err(error) => {
                tracing::warn!(%agent, %error, "could not look up which replica holds an agent");
                None
            }
        }
    }

    /// The client of the link to the other replicas, when this one is a replica.
    pub fn forwarder(&self) -> Option<&Forwarder> {
        self.inner.forwarder.as_ref()
    }

    /// Every replica the database lists.
    pub async fn replicas(&self) -> Result<Vec<ReplicaRow>> {
        self.store().list_replicas().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_settings_need_postgres_and_a_dialable_address() {
        assert_eq!(
            ClusterListen::from_settings(None, None, false).unwrap(),
            None
        );
        let err = ClusterListen::from_settings(Some("127.0.0.1:8642"), None, false).unwrap_err();
        assert!(err.to_string().contains("--database-url"), "{err}");
        let err = ClusterListen::from_settings(Some("0.0.0.0:8642"), None, true).unwrap_err();
        assert!(err.to_string().contains("--cluster-advertise"), "{err}");
        let listen =
            ClusterListen::from_settings(Some("0.0.0.0:8642"), Some("vigil-0.vigil:8642"), true)
                .unwrap()
                .unwrap();
        assert_eq!(listen.advertise, "vigil-0.vigil:8642");
        let listen = ClusterListen::from_settings(Some("10.0.0.2:8642"), None, true)
            .unwrap()
            .unwrap();
        assert_eq!(listen.advertise, "10.0.0.2:8642");
        assert!(ClusterListen::from_settings(None, Some("a:1"), true).is_err());
        assert!(ClusterListen::from_settings(Some("nope"), None, true).is_err());
    }

    #[test]
    fn gateway_endpoints_are_host_and_port() {
        let good = ["a.example:8641", "10.0.0.1:1", "[::1]:8641"].map(String::from);
        assert_eq!(gateway_endpoints(&good).unwrap(), good.to_vec());
        for bad in [
            "a.example",
            "a.example:0",
            ":8641",
            "a b:1",
            "[nope]:1",
            "a:99999",
        ] {
            assert!(gateway_endpoints(&[bad.into()]).is_err(), "{bad}");
        }
    }
}
