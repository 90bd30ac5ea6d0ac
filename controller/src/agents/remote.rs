//! The agents whose stream another live replica holds (`crate::cluster` refreshes this at
//! every lease renewal): an agent is connected when this replica or another holds it. And
//! the agents whose stream went away moments ago, here or elsewhere: they are probably
//! moving to another replica (one that is stopping sends them away), so a command for one
//! waits a little for it to come back instead of failing at once.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use vigil_shared::ids::AgentId;

use crate::store::replicas::AgentOwner;

/// How long after losing its stream an agent counts as moving.
pub const MOVING_FOR: Duration = Duration::from_secs(15);

/// Agent streams held by other replicas.
#[derive(Debug, Default)]
pub struct RemoteStreams {
    map: RwLock<HashMap<AgentId, AgentOwner>>,
    lost: Mutex<HashMap<AgentId, Instant>>,
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

    /// Replaces the whole set with `owners` (those of replica `me` left out); the agents
    /// that dropped out of it count as moving.
    pub fn replace(&self, me: &str, owners: Vec<AgentOwner>) {
        let map: HashMap<AgentId, AgentOwner> = owners
            .into_iter()
            .filter(|owner| owner.replica_id != me)
            .map(|owner| (owner.agent, owner))
            .collect();
        let old = std::mem::replace(
            &mut *self.map.write().unwrap_or_else(PoisonError::into_inner),
            map,
        );
        let current = self.map.read().unwrap_or_else(PoisonError::into_inner);
        for agent in old.keys().filter(|agent| !current.contains_key(agent)) {
            self.lost(*agent);
        }
    }

    /// Notes that `agent`'s stream (here or elsewhere) just went away.
    pub fn lost(&self, agent: AgentId) {
        let now = Instant::now();
        let mut lost = self.lost.lock().unwrap_or_else(PoisonError::into_inner);
        lost.retain(|_, when| now.duration_since(*when) < MOVING_FOR);
        lost.insert(agent, now);
    }

    /// True when `agent`'s stream went away less than [`MOVING_FOR`] ago.
    pub fn moving(&self, agent: AgentId) -> bool {
        self.lost
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&agent)
            .is_some_and(|when| when.elapsed() < MOVING_FOR)
    }

    /// Forgets `agent` (this replica now holds it).
    pub fn remove(&self, agent: AgentId) {
        self.map
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&agent);
    }
}
