//! The revoked agent identities and certificate serials in memory: the database holds the
//! same set; this copy answers the gateway's handshake at once.

use std::collections::HashSet;
use std::sync::{PoisonError, RwLock};

use vigil_shared::ids::AgentId;

/// Revoked agent ids and certificate serials, shared by the verifier, the gateway and the
/// HTTP API. The database holds the same set; this copy answers the handshake.
#[derive(Debug, Default)]
pub struct RevocationSet {
    agents: RwLock<HashSet<AgentId>>,
    serials: RwLock<HashSet<String>>,
}

impl RevocationSet {
    /// A set holding `agents` and `serials` (hex).
    pub fn new(
        agents: impl IntoIterator<Item = AgentId>,
        serials: impl IntoIterator<Item = String>,
    ) -> Self {
        RevocationSet {
            agents: RwLock::new(agents.into_iter().collect()),
            serials: RwLock::new(
                serials
                    .into_iter()
                    .map(|s| s.to_ascii_lowercase())
                    .collect(),
            ),
        }
    }

    /// Adds an agent identity.
    pub fn revoke_agent(&self, id: AgentId) {
        self.agents
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id);
    }

    /// Adds a certificate serial (hex).
    pub fn revoke_serial(&self, serial: &str) {
        self.serials
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(serial.to_ascii_lowercase());
    }

    /// True when the agent identity is revoked.
    pub fn is_agent_revoked(&self, id: AgentId) -> bool {
        self.agents
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(&id)
    }

    /// True when the certificate serial (hex) is revoked.
    pub fn is_serial_revoked(&self, serial: &str) -> bool {
        self.serials
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(&serial.to_ascii_lowercase())
    }
}
