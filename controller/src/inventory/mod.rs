//! The controller's inventory (docs/inventory.md): the newest report of every agent,
//! merged into one resource graph (node → LXC/VM → Docker container; cluster → namespace →
//! pod), with routing chains (the ordered execution paths of each resource) and search.
//!
//! [`Inventory`] is the thread-safe handle the gateway feeds and the API reads. Inside:
//! - `merge`: the trust rules for what one agent may report, and how the reports of one
//!   resource from several agents become one resource (the best-ranked path wins).
//! - `graph`: the per-agent reports and the merged entries, updated incrementally: an
//!   update re-merges only the ids it changed.
//! - `link`: agents running inside a Proxmox guest (by join-token label or shared MAC) and
//!   how that shows in the merged view (a `direct` path, an alias, re-parented children).
//! - `search`: the token index behind [`Inventory::search`].
//! - `intern`: the shared copies of resource ids that all of the above hold.
//! - [`names`]: how a name a person types finds a resource ([`Inventory::resolve`]).

mod graph;
mod intern;
mod link;
mod merge;
pub mod names;
mod search;

use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use vigil_shared::resource::{Resource, ResourceId, ResourceKind};

use graph::Graph;

/// One inventory update from an agent, in domain types (stored as JSON for the other
/// replicas, `crate::store::inventory`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AgentUpdate {
    pub seq: u64,
    /// True: `upserts` is everything the agent sees; forget the rest of its report.
    pub full: bool,
    pub upserts: Vec<Resource>,
    pub removed: Vec<ResourceId>,
    pub sources: Vec<String>,
    pub capped: Vec<String>,
    pub errors: Vec<String>,
}

/// What one agent's report holds, for `GET /api/agents/{id}` and diagnostics.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct AgentReport {
    pub seq: u64,
    pub resources: usize,
    pub sources: Vec<String>,
    pub capped: Vec<String>,
    pub errors: Vec<String>,
}

/// A merged resource with its children; `resource.paths` is the routing chain, best first.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ResourceView {
    pub resource: Resource,
    pub children: Vec<ResourceId>,
}

/// The inventory of every agent.
#[derive(Debug, Default)]
pub struct Inventory {
    graph: RwLock<Graph>,
}

impl Inventory {
    /// An empty inventory.
    pub fn new() -> Self {
        Inventory::default()
    }

    /// Apply one update from `agent`: a `full` update replaces its report, any other adds,
    /// replaces (by id) and removes. A non-full update older than the last one is ignored.
    /// Resources and paths the agent may not report (docs/inventory.md) are dropped.
    pub fn apply(&self, agent: &str, update: AgentUpdate) {
        self.write().apply(agent, update);
    }

    /// The guest an agent runs in by its join-token label `vigil.guest` (None: by MAC only).
    /// Only an `lxc` or `vm` id can name a guest; anything else is ignored.
    pub fn set_guest_label(&self, agent: &str, guest: Option<ResourceId>) {
        self.write().set_guest_label(agent, guest);
    }

    /// Drop everything `agent` reported (it was revoked), and its guest label.
    pub fn forget_agent(&self, agent: &str) {
        self.write().forget_agent(agent);
    }

    /// Resources matching `query` (empty: all, by id), best match first, at most `limit`.
    /// Matches rank: exact id, exact name or alias, prefix of a name, alias or id, a whole
    /// `-`/`_`/`.`/space separated part of a name or alias, a prefix of such a part; ties
    /// go by kind, then id. Case does not matter.
    pub fn search(&self, query: &str, kind: Option<ResourceKind>, limit: usize) -> Vec<Resource> {
        self.read().search(query, kind, limit)
    }

    /// The one resource `name` names (an id, a name or an alias; a prefix or a part of a
    /// name, as a chat mention: [`names`]); `Err` with the candidates when several match
    /// (none when nothing does).
    pub fn resolve(&self, name: &str) -> Result<Resource, Vec<Resource>> {
        let name = name.trim().trim_start_matches('@');
        let found = names::match_token(name, &self.search(name, None, 50), true);
        match <[Resource; 1]>::try_from(found) {
            Ok([one]) => Ok(one),
            Err(candidates) => Err(candidates),
        }
    }

    /// One merged resource with its children and routing chain.
    pub fn get(&self, id: &ResourceId) -> Option<ResourceView> {
        let graph = self.read();
        Some(ResourceView {
            resource: graph.present(id)?,
            children: graph.children(id),
        })
    }

    /// Everything `agent` reports now, as one full update (what the other replicas are
    /// given).
    pub fn snapshot(&self, agent: &str) -> Option<AgentUpdate> {
        self.read().snapshot(agent)
    }

    /// What `agent` last reported.
    pub fn report(&self, agent: &str) -> Option<AgentReport> {
        self.read().report(agent)
    }

    /// How many merged resources there are.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// True when no agent reported anything.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn read(&self) -> RwLockReadGuard<'_, Graph> {
        self.graph.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Graph> {
        self.graph.write().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests;
