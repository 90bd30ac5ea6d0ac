//! The agents the controller knows: an in-memory [`registry`] of every enrolled agent
//! (loaded from the database at start, the database staying the record), joined with the
//! live streams ([`sessions`], each with its command queue, [`queue`]) to list them; what
//! the streams report, written in batches ([`writer`]); which agent speaks for each
//! Proxmox node ([`claims`]); and revocation (database, the handshake's revocation set
//! [`revocations`], and the live stream); issuing join tokens ([`join_tokens`]); and the
//! streams other replicas hold ([`remote`]). The gateway (transport) and the replicas'
//! lease (`crate::cluster`) use this state; this module imports neither.

pub mod claims;
pub mod join_tokens;
pub mod queue;
pub mod registry;
pub mod remote;
pub mod revocations;
pub mod sessions;
pub mod writer;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use vigil_proto::agent::v1::{Goodbye, SandboxPolicy, controller_message};
use vigil_shared::ids::AgentId;

use crate::clock::{rfc3339, unix_now};
use crate::inventory::Inventory;
use crate::store::Store;
use crate::store::agents::AgentRow;
use crate::{Error, Result};
use claims::NodeClaims;
pub use revocations::RevocationSet;
use sessions::Sessions;

pub use registry::Registry;
pub use writer::Writer;

/// One agent as `GET /api/agents` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentView {
    /// The agent's id (UUID).
    pub id: String,
    /// Its host name.
    pub hostname: String,
    /// True while it has a live stream.
    pub connected: bool,
    /// True when it refuses every write.
    pub read_only: bool,
    /// Labels from its join token.
    pub labels: BTreeMap<String, String>,
    /// When it was last seen (RFC 3339, UTC), if ever.
    pub last_seen: Option<String>,
    /// Its version.
    pub version: String,
    /// How it confines host reads (`facts.sandbox`: level, Landlock ABI, seccomp, …), as
    /// its last facts said; absent from agents that predate the read sandbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<serde_json::Value>,
}

/// What a stream's hello says about its agent, for the record.
#[derive(Debug, Clone, Copy)]
pub struct HelloRecord<'a> {
    /// The host name.
    pub hostname: &'a str,
    /// The agent's version.
    pub version: &'a str,
    /// Whether it refuses every write.
    pub read_only: bool,
}

/// The registry of agents.
#[derive(Debug, Clone)]
pub struct Agents {
    store: Store,
    registry: Arc<Registry>,
    writer: Arc<Writer>,
    sessions: Arc<Sessions>,
    revocations: Arc<RevocationSet>,
    inventory: Arc<Inventory>,
    node_claims: Arc<NodeClaims>,
    remote: Arc<remote::RemoteStreams>,
    /// Agents whose inventory changed since the other replicas were last told.
    inventory_changed: Arc<std::sync::Mutex<std::collections::HashSet<AgentId>>>,
}

impl Agents {
    /// The registry over `store` (every agent it holds is loaded now), the live `sessions`
    /// and the handshake's `revocations`.
    pub async fn load(
        store: Store,
        sessions: Arc<Sessions>,
        revocations: Arc<RevocationSet>,
    ) -> Result<Self> {
        let registry = Registry::from_rows(store.list_agents(true).await?);
        tracing::info!(agents = registry.len(), "loaded the agent registry");
        Ok(Agents {
            store,
            registry: Arc::new(registry),
            writer: Arc::new(Writer::default()),
            sessions,
            revocations,
            inventory: Arc::new(Inventory::new()),
            node_claims: Arc::new(NodeClaims::default()),
            remote: Arc::new(remote::RemoteStreams::default()),
            inventory_changed: Arc::default(),
        })
    }

    /// The record of `id`, revoked or not, from memory.
    pub fn get(&self, id: AgentId) -> Option<Arc<AgentRow>> {
        self.registry.get(id)
    }

    /// Every agent's record, oldest first; revoked ones only when `include_revoked`.
    pub fn records(&self, include_revoked: bool) -> Vec<Arc<AgentRow>> {
        self.registry.all(include_revoked)
    }

    /// Adds a newly enrolled agent (already stored) to the registry.
    pub fn enrolled(&self, row: AgentRow) {
        self.registry.insert(row);
    }

    /// The record of `id`, from memory or else from the database (an agent another
    /// replica enrolled since this one loaded its registry), which it is then added to.
    pub async fn get_or_load(&self, id: AgentId) -> Result<Option<Arc<AgentRow>>> {
        if let Some(row) = self.registry.get(id) {
            return Ok(Some(row));
        }
        let Some(row) = self.store.get_agent(id).await? else {
            return Ok(None);
        };
        if row.revoked_at.is_some() {
            self.revocations.revoke_agent(id);
        }
        self.registry.insert(row);
        Ok(self.registry.get(id))
    }

    /// Catches up with what other replicas wrote: agents enrolled there are added, and
    /// revocations made there cut the agents' streams here. Returns how many agents were
    /// added and how many newly revoked.
    pub async fn refresh_from_store(&self) -> Result<(usize, usize)> {
        let mut added = 0;
        for id in self.store.list_agent_ids().await? {
            if self.registry.get(id).is_none() && self.get_or_load(id).await?.is_some() {
                added += 1;
            }
        }
        let (agents, serials) = self.store.load_revocations().await?;
        for serial in serials {
            if !self.revocations.is_serial_revoked(&serial) {
                self.revocations.revoke_serial(&serial);
            }
        }
        let mut revoked = 0;
        for id in agents {
            if !self.revocations.is_agent_revoked(id) {
                self.cut(id, "revoked through another replica");
                revoked += 1;
            }
        }
        Ok((added, revoked))
    }

    /// Notes that `agent`'s inventory changed (its stream is here).
    pub fn inventory_changed(&self, agent: AgentId) {
        self.inventory_changed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(agent);
    }

    /// The agents whose inventory changed since the last call.
    pub fn take_inventory_changes(&self) -> Vec<AgentId> {
        self.inventory_changed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .drain()
            .collect()
    }

    /// Takes the hidden paths other replicas stored for this replica's agents: each one
    /// that changed is recorded here and sent to the agent's stream, if it is here, before
    /// any further read. Returns how many changed.
    pub async fn refresh_hidden_paths(&self) -> Result<usize> {
        let mut changed = 0;
        for (id, paths) in self.store.list_hidden_paths().await? {
            let differs = self
                .registry
                .get(id)
                .is_some_and(|row| row.hidden_paths != paths);
            if !differs {
                continue;
            }
            changed += 1;
            self.registry
                .update(id, |row| row.hidden_paths.clone_from(&paths));
            if let Some(session) = self.sessions.get(id)
                && session.send(sandbox_policy(&paths)).await.is_err()
            {
                tracing::debug!(agent = %id, "stream closed before the hidden paths were sent");
            }
        }
        Ok(changed)
    }

    /// Agent streams other replicas hold.
    pub fn remote(&self) -> &Arc<remote::RemoteStreams> {
        &self.remote
    }

    /// True when this replica or another holds a stream of `id`.
    pub fn is_connected(&self, id: AgentId) -> bool {
        self.sessions.get(id).is_some() || self.remote.contains(id)
    }

    /// Records a stream's hello (the database is written in the next batch).
    pub fn record_hello(&self, id: AgentId, hello: HelloRecord<'_>, now: i64) {
        let known = self.registry.update(id, |row| {
            if !hello.hostname.is_empty() {
                row.hostname = hello.hostname.to_owned();
            }
            row.version = hello.version.to_owned();
            row.read_only = hello.read_only;
            row.last_seen = Some(now);
        });
        if known {
            self.writer.mark(id);
        }
    }

    /// Records an agent's host facts (the database is written in the next batch).
    pub fn record_facts(&self, id: AgentId, facts: serde_json::Value, now: i64) {
        let known = self.registry.update(id, |row| {
            row.facts = Some(facts);
            row.last_seen = Some(now);
        });
        if known {
            self.writer.mark(id);
        }
    }

    /// Records when an agent was last seen (the database is written in the next batch).
    pub fn record_last_seen(&self, id: AgentId, when: i64) {
        let mut changed = false;
        self.registry.update(id, |row| {
            if row.last_seen.is_none_or(|seen| seen < when) {
                row.last_seen = Some(when);
                changed = true;
            }
        });
        if changed {
            self.writer.mark(id);
        }
    }

    /// Stores a renewed certificate, in the database at once and in the registry.
    pub async fn record_renewal(&self, id: AgentId, serial: &str, expires_at: i64) -> Result<()> {
        self.store.record_renewal(id, serial, expires_at).await?;
        self.registry.update(id, |row| {
            row.cert_serial = serial.to_owned();
            row.cert_expires_at = expires_at;
        });
        Ok(())
    }

    /// Writes every agent whose record changed since the last batch.
    pub async fn flush(&self) -> Result<usize> {
        self.writer.flush(&self.registry, &self.store).await
    }

    /// Records the live streams' last-seen times and writes changed records in batches,
    /// every [`writer::FLUSH_INTERVAL`] (sooner when a batch is full), until `shutdown`;
    /// then writes once more.
    pub async fn persist(self, shutdown: CancellationToken) -> Result<()> {
        let mut tick = tokio::time::interval(writer::FLUSH_INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut last_sweep = tokio::time::Instant::now();
        loop {
            tokio::select! {
                () = shutdown.cancelled() => break,
                _ = tick.tick() => {}
                () = self.writer.full() => {}
            }
            if last_sweep.elapsed() >= writer::LAST_SEEN_EVERY {
                last_sweep = tokio::time::Instant::now();
                for session in self.sessions.all() {
                    self.record_last_seen(session.agent(), session.last_seen_ms() / 1000);
                }
            }
            if let Err(error) = self.flush().await {
                tracing::warn!(%error, pending = self.writer.pending(), "could not write agent records; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
        self.flush().await.map(|_| ())
    }

    /// Which agent speaks for each Proxmox node.
    pub fn node_claims(&self) -> &Arc<NodeClaims> {
        &self.node_claims
    }

    /// What the agents report they can see.
    pub fn inventory(&self) -> &Arc<Inventory> {
        &self.inventory
    }

    /// Issues a join token as `actor` (see [`join_tokens::issue`]).
    pub async fn issue_join_token(
        &self,
        request: join_tokens::JoinTokenRequest,
        actor: &str,
    ) -> Result<join_tokens::Issued> {
        join_tokens::issue(&self.store, request, actor).await
    }

    /// True when the registry's database answers (readiness).
    pub async fn database_answers(&self) -> bool {
        self.store.ping().await
    }

    /// The store the registry records into.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The live streams.
    pub fn sessions(&self) -> &Arc<Sessions> {
        &self.sessions
    }

    /// The revoked identities and serials.
    pub fn revocations(&self) -> &Arc<RevocationSet> {
        &self.revocations
    }

    /// Every agent that is not revoked, oldest first.
    pub fn list(&self) -> Vec<AgentView> {
        self.registry
            .all(false)
            .into_iter()
            .map(|row| {
                let live = self.sessions.get(row.id);
                let (read_only, version, last_seen) = match &live {
                    Some(s) => (
                        s.hello().read_only,
                        s.hello().version.clone(),
                        Some(s.last_seen_ms() / 1000),
                    ),
                    None => (row.read_only, row.version.clone(), row.last_seen),
                };
                AgentView {
                    id: row.id.to_string(),
                    hostname: live
                        .as_ref()
                        .map(|s| s.hello().hostname.clone())
                        .filter(|h| !h.is_empty())
                        .unwrap_or_else(|| row.hostname.clone()),
                    connected: live.is_some() || self.remote.contains(row.id),
                    read_only,
                    labels: row.labels.clone(),
                    last_seen: last_seen.map(rfc3339),
                    version,
                    sandbox: row
                        .facts
                        .as_ref()
                        .and_then(|f| f.get("sandbox"))
                        .filter(|s| !s.is_null())
                        .cloned(),
                }
            })
            .collect()
    }

    /// Revokes `id`: records it, refuses it at the handshake from now on, and ends its live
    /// stream with a goodbye that tells it not to retry. Revoking twice is not an error.
    pub async fn revoke(&self, id: AgentId, reason: &str) -> Result<()> {
        if !self.store.revoke_agent(id, reason, unix_now()).await? {
            return Err(Error::NotFound(format!("no agent with id {id}")));
        }
        self.cut(id, reason);
        // The replica holding the agent's stream, if another, cuts it there.
        self.store
            .notify(crate::store::notify::AGENTS, &id.to_string())
            .await;
        Ok(())
    }

    /// Replaces what an admin added to the paths `id`'s reads never see: checked, stored,
    /// and sent to its live stream (reads sent after this returns hide them; an agent
    /// that is not connected gets them before any request when it comes back). The
    /// agent adds them to its own list; nothing here can remove what the agent hides.
    pub async fn set_hidden_paths(&self, id: AgentId, paths: Vec<String>) -> Result<Vec<String>> {
        let paths = check_hidden_paths(paths)?;
        match self.registry.get(id) {
            Some(row) if row.revoked_at.is_none() => {}
            _ => return Err(Error::NotFound(format!("no agent with id {id}"))),
        }
        if !self.store.set_hidden_paths(id, &paths).await? {
            return Err(Error::NotFound(format!("no agent with id {id}")));
        }
        // The replica holding the agent's stream, if another, sends them there.
        self.store
            .notify(crate::store::notify::AGENTS, &id.to_string())
            .await;
        self.registry
            .update(id, |row| row.hidden_paths.clone_from(&paths));
        // An agent that is not connected gets them right after its next hello.
        if let Some(session) = self.sessions.get(id)
            && session.send(sandbox_policy(&paths)).await.is_err()
        {
            tracing::debug!(agent = %id, "stream closed before the hidden paths were sent");
        }
        Ok(paths)
    }

    /// The in-memory half of a revocation already recorded in the database.
    pub fn cut(&self, id: AgentId, reason: &str) {
        self.revocations.revoke_agent(id);
        let now = unix_now();
        self.registry.update(id, |row| {
            row.revoked_at.get_or_insert(now);
        });
        self.inventory.forget_agent(&id.to_string());
        self.node_claims.release(&id.to_string());
        let goodbye = Goodbye {
            reason: format!("agent revoked: {reason}"),
            retry: false,
        };
        let was_live = self.sessions.close(id, goodbye);
        tracing::info!(agent = %id, was_live, %reason, "revoked an agent");
    }
}

/// Most patterns one agent may be given from here (each must also be a valid pattern).
pub const MAX_HIDDEN_PATHS: usize = 256;

/// The message that gives an agent its hidden paths.
pub fn sandbox_policy(paths: &[String]) -> controller_message::Kind {
    controller_message::Kind::SandboxPolicy(SandboxPolicy {
        hide: paths.to_vec(),
    })
}

/// `paths` checked (each an absolute path pattern, [`vigil_shared::hide::check_pattern`])
/// without repeats, in their order.
pub fn check_hidden_paths(paths: Vec<String>) -> Result<Vec<String>> {
    if paths.len() > MAX_HIDDEN_PATHS {
        return Err(Error::InvalidInput(format!(
            "at most {MAX_HIDDEN_PATHS} hidden paths per agent, got {}",
            paths.len()
        )));
    }
    let mut out: Vec<String> = Vec::with_capacity(paths.len());
    for path in paths {
        let path = path.trim().to_owned();
        vigil_shared::hide::check_pattern(&path).map_err(Error::InvalidInput)?;
        if !out.contains(&path) {
            out.push(path);
        }
    }
    Ok(out)
}
