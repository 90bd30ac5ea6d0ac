//! Inventory ingest: an agent's `InventoryUpdate` turned into domain resources (invalid
//! ones are dropped with a warning, never the whole update) and applied to the graph.

use tracing::{debug, warn};
use vigil_proto::agent::v1::InventoryUpdate;
use vigil_proto::convert::resource_from_proto;
use vigil_shared::ids::AgentId;
use vigil_shared::resource::ResourceId;

use crate::agents::Agents;
use crate::inventory::AgentUpdate;

/// Most resources one agent may report; more are dropped (and logged).
pub const MAX_RESOURCES_PER_UPDATE: usize = 100_000;
/// The join-token label naming the guest an agent runs in (a resource id).
pub const GUEST_LABEL: &str = "vigil.guest";

/// The domain form of an update from `agent`.
pub fn to_update(agent: &str, wire: &InventoryUpdate) -> AgentUpdate {
    let mut upserts = Vec::with_capacity(wire.upserts.len().min(MAX_RESOURCES_PER_UPDATE));
    for resource in wire.upserts.iter().take(MAX_RESOURCES_PER_UPDATE) {
        match resource_from_proto(resource, agent) {
            Ok(r) => upserts.push(r),
            Err(error) => warn!(%error, id = %resource.id, "dropping an invalid resource"),
        }
    }
    if wire.upserts.len() > MAX_RESOURCES_PER_UPDATE {
        warn!(
            reported = wire.upserts.len(),
            kept = MAX_RESOURCES_PER_UPDATE,
            "inventory update over the per-update limit"
        );
    }
    let removed = wire
        .removed
        .iter()
        .filter_map(|id| id.parse::<ResourceId>().ok())
        .collect();
    let short = |list: &[String]| -> Vec<String> {
        list.iter()
            .take(64)
            .map(|s| s.chars().take(512).collect())
            .collect()
    };
    AgentUpdate {
        seq: wire.seq,
        full: wire.full,
        upserts,
        removed,
        sources: short(&wire.sources),
        capped: short(&wire.capped),
        errors: short(&wire.errors),
    }
}

/// Apply an update from `agent`; on a full update, refresh the agent's guest label first.
pub async fn ingest(agents: &Agents, agent: AgentId, wire: &InventoryUpdate) {
    let id = agent.to_string();
    if wire.full {
        let guest = agents
            .get(agent)
            .and_then(|row| row.labels.get(GUEST_LABEL).cloned())
            .and_then(|text| match text.parse::<ResourceId>() {
                Ok(guest) => Some(guest),
                Err(error) => {
                    warn!(%error, "ignoring the agent's {GUEST_LABEL} label");
                    None
                }
            });
        agents.inventory().set_guest_label(&id, guest);
    }
    let mut update = to_update(&id, wire);
    let sessions = agents.sessions();
    update.upserts = agents.node_claims().filter(&id, update.upserts, |owner| {
        owner
            .parse::<AgentId>()
            .is_ok_and(|owner| sessions.get(owner).is_some())
    });
    debug!(
        seq = update.seq,
        full = update.full,
        upserts = update.upserts.len(),
        removed = update.removed.len(),
        "inventory update"
    );
    agents.inventory().apply(&id, update);
    agents.inventory_changed(agent);
}
