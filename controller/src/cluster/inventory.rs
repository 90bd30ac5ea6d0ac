//! Agents' inventories across replicas: the replica holding an agent's stream writes the
//! agent's full report to the database when it changed, and every replica applies the
//! reports the others wrote, so `GET /api/resources`, chat's names and routing see every
//! agent's resources on every replica within a renewal or two.

use std::collections::HashMap;

use tracing::warn;
use vigil_shared::ids::AgentId;

use super::Cluster;
use crate::Result;
use crate::inventory::AgentUpdate;

/// Rows are read again this far back (ms), since writes from several replicas may commit
/// out of their clock's order.
const OVERLAP_MS: i64 = 10_000;

/// What this replica has applied of the others' reports.
#[derive(Debug, Default)]
pub struct SharedInventory {
    since: i64,
    applied: HashMap<AgentId, i64>,
}

impl Cluster {
    /// Writes the reports of this replica's agents that changed, then applies the
    /// reports the other replicas wrote since the last time.
    pub async fn share_inventories(&self, shared: &mut SharedInventory) -> Result<()> {
        let agents = self.agents();
        for agent in agents.take_inventory_changes() {
            if agents.sessions().get(agent).is_none() {
                continue;
            }
            let Some(snapshot) = agents.inventory().snapshot(&agent.to_string()) else {
                continue;
            };
            let body = serde_json::to_string(&snapshot)?;
            if let Err(error) = self
                .store()
                .save_agent_inventory(agent, self.id(), &body)
                .await
            {
                agents.inventory_changed(agent);
                return Err(error);
            }
        }
        let rows = self
            .store()
            .agent_inventories_since(shared.since - OVERLAP_MS, self.id())
            .await?;
        for row in rows {
            shared.since = shared.since.max(row.version);
            if shared
                .applied
                .get(&row.agent)
                .is_some_and(|v| *v >= row.version)
                || agents.sessions().get(row.agent).is_some()
            {
                continue;
            }
            shared.applied.insert(row.agent, row.version);
            match serde_json::from_str::<AgentUpdate>(&row.body) {
                Ok(update) => agents.inventory().apply(&row.agent.to_string(), update),
                Err(error) => {
                    warn!(agent = %row.agent, %error, "ignoring an unreadable stored inventory")
                }
            }
        }
        Ok(())
    }
}
