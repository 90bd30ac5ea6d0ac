//! The agents the controller knows: listing them (stored rows joined with live streams) and
//! revoking them (database, the handshake's revocation set, and the live stream).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use vigil_proto::agent::v1::Goodbye;
use vigil_shared::ids::AgentId;

use crate::clock::{rfc3339, unix_now};
use crate::gateway::claims::NodeClaims;
use crate::gateway::{RevocationSet, Sessions};
use crate::inventory::Inventory;
use crate::store::Store;
use crate::{Error, Result};

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

/// The registry of agents.
#[derive(Debug, Clone)]
pub struct Agents {
    store: Store,
    sessions: Arc<Sessions>,
    revocations: Arc<RevocationSet>,
    inventory: Arc<Inventory>,
    node_claims: Arc<NodeClaims>,
}

impl Agents {
    /// The registry over `store`, the live `sessions` and the handshake's `revocations`.
    pub fn new(store: Store, sessions: Arc<Sessions>, revocations: Arc<RevocationSet>) -> Self {
        Agents {
            store,
            sessions,
            revocations,
            inventory: Arc::new(Inventory::new()),
            node_claims: Arc::new(NodeClaims::default()),
        }
    }

    /// Which agent speaks for each Proxmox node.
    pub fn node_claims(&self) -> &Arc<NodeClaims> {
        &self.node_claims
    }

    /// What the agents report they can see.
    pub fn inventory(&self) -> &Arc<Inventory> {
        &self.inventory
    }

    /// The database.
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
    pub async fn list(&self) -> Result<Vec<AgentView>> {
        let rows = self.store.list_agents(false).await?;
        Ok(rows
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
                        .unwrap_or(row.hostname),
                    connected: live.is_some(),
                    read_only,
                    labels: row.labels,
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
            .collect())
    }

    /// Revokes `id`: records it, refuses it at the handshake from now on, and ends its live
    /// stream with a goodbye that tells it not to retry. Revoking twice is not an error.
    pub async fn revoke(&self, id: AgentId, reason: &str) -> Result<()> {
        if !self.store.revoke_agent(id, reason, unix_now()).await? {
            return Err(Error::NotFound(format!("no agent with id {id}")));
        }
        self.cut(id, reason);
        Ok(())
    }

    /// The in-memory half of a revocation already recorded in the database.
    pub fn cut(&self, id: AgentId, reason: &str) {
        self.revocations.revoke_agent(id);
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
