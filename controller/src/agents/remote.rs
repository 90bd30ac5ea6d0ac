//! The agents whose stream another live replica holds (`crate::cluster` refreshes this at
//! every lease renewal): an agent is connected when this replica or another holds it.

use std::collections::HashMap;
use std::sync::{PoisonError, RwLock};

use vigil_shared::ids::AgentId;

use crate::store::replicas::AgentOwner;

/// Agent streams held by other replicas.
#[derive(Debug, Default)]
pub struct RemoteStreams {
    map: RwLock<HashMap<AgentId, AgentOwner>>,
}

impl RemoteStreams {
    /// The replica holding `agent`, if another one does.
    pub fn get(&self, agent: AgentId) -> Option<AgentOwner> {
        self.map
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&agent)
            .cloned()
    }

    /// True when another replica holds `agent`.
    pub fn contains(&self, agent: AgentId) -> bool {
        self.map
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(&agent)
    }

    /// Replaces the whole set with `owners` (those of replica `me` left out).
    pub fn replace(&self, me: &str, owners: Vec<AgentOwner>) {
        let map = owners
            .into_iter()
            .filter(|owner| owner.replica_id != me)
            .map(|owner| (owner.agent, owner))
            .collect();
        *self.map.write().unwrap_or_else(PoisonError::into_inner) = map;
    }

    /// Forgets `agent` (this replica now holds it).
    pub fn remove(&self, agent: AgentId) {
        self.map
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&agent);
    }

    /// How many agents other replicas hold.
    pub fn len(&self) -> usize {
        self.map
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// True when other replicas hold none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
