//! The inventory's state: every agent's newest report, who reports which id, and the
//! merged entry of each id with its search tokens. An update re-merges only the ids whose
//! reports changed, then re-resolves the guest links those changes may affect
//! ([`super::link`]), so its cost grows with the size of the change, not of the graph.

use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::Hash;

use tracing::{debug, warn};
use vigil_shared::resource::{Resource, ResourceId, ResourceKind};

use super::merge::{Reported, admit, merge};
use super::search::{Key, SearchIndex};
use super::{AgentReport, AgentUpdate};

/// One resource as one agent last reported it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Stored {
    pub resource: Resource,
    /// The graph's clock when the agent last changed it: newer wins ties in the merge.
    pub stamp: u64,
}

/// One agent's newest report.
#[derive(Debug, Default)]
pub(super) struct AgentState {
    pub report: AgentReport,
    pub resources: BTreeMap<ResourceId, Stored>,
}

/// A merged resource (without guest-link effects, which [`Graph::present`] adds) and the
/// search tokens it is indexed under.
#[derive(Debug)]
pub(super) struct Entry {
    pub base: Resource,
    pub keys: Vec<Key>,
}

/// Everything the inventory knows.
#[derive(Debug, Default)]
pub(super) struct Graph {
    pub(super) agents: BTreeMap<String, AgentState>,
    /// The agents reporting each id, sorted (usually one or two).
    contributors: HashMap<ResourceId, Vec<String>>,
    pub(super) merged: BTreeMap<ResourceId, Entry>,
    /// Ids by the parent their merged report names (before guest links re-parent them).
    pub(super) raw_children: HashMap<ResourceId, BTreeSet<ResourceId>>,
    pub(super) index: SearchIndex,
    /// Guest links: the join-token labels, the MACs of guests and agents' hosts, and the
    /// links in force (see [`super::link`]).
    pub(super) labels: BTreeMap<String, ResourceId>,
    pub(super) labelled: HashMap<ResourceId, BTreeSet<String>>,
    pub(super) guest_macs: HashMap<String, BTreeSet<ResourceId>>,
    pub(super) host_macs: HashMap<String, BTreeSet<String>>,
    pub(super) links: BTreeMap<String, ResourceId>,
    pub(super) linked: HashMap<ResourceId, BTreeSet<String>>,
    clock: u64,
}

/// What a batch of re-merges leaves to do: agents whose guest link may have changed, and
/// guests whose search tokens must be recomputed.
#[derive(Debug, Default)]
pub(super) struct Pending {
    pub relink: BTreeSet<String>,
    pub rekey: BTreeSet<ResourceId>,
}

impl Graph {
    /// Apply one update from `agent` (see [`super::Inventory::apply`]).
    pub(super) fn apply(&mut self, agent: &str, update: AgentUpdate) {
        let state = self.agents.entry(agent.to_owned()).or_default();
        if !update.full && update.seq < state.report.seq {
            warn!(
                agent,
                seq = update.seq,
                last = state.report.seq,
                "ignoring an inventory update older than the last one"
            );
            return;
        }
        self.clock += 1;
        let stamp = self.clock;
        state.report.seq = update.seq;
        // The notes come with a full update and with any update where they changed;
        // they always name at least one source.
        if update.full || !update.sources.is_empty() {
            state.report.sources = update.sources;
            state.report.capped = update.capped;
            state.report.errors = update.errors;
        }
        let upserts: Vec<Resource> = update
            .upserts
            .into_iter()
            .filter_map(|r| admit(agent, r))
            .collect();
        let mut touched = BTreeSet::new();
        if update.full {
            let keep: HashSet<&ResourceId> = upserts.iter().map(|r| &r.id).collect();
            let gone: Vec<ResourceId> = state
                .resources
                .keys()
                .filter(|id| !keep.contains(id))
                .cloned()
                .collect();
            for id in gone {
                state.resources.remove(&id);
                touched.insert(id);
            }
        }
        for resource in upserts {
            if state
                .resources
                .get(&resource.id)
                .is_some_and(|s| s.resource == resource)
            {
                continue;
            }
            touched.insert(resource.id.clone());
            state
                .resources
                .insert(resource.id.clone(), Stored { resource, stamp });
        }
        if !update.full {
            for id in update.removed {
                if state.resources.remove(&id).is_some() {
                    touched.insert(id);
                }
            }
        }
        state.report.resources = state.resources.len();
        debug!(
            agent,
            changed = touched.len(),
            "applying an inventory update"
        );
        let reporting: Vec<bool> = touched
            .iter()
            .map(|id| state.resources.contains_key(id))
            .collect();
        for (id, reports) in touched.iter().zip(reporting) {
            self.set_contributor(id, agent, reports);
        }
        self.refresh(touched, Pending::default());
    }

    /// Drop `agent`'s report and guest label.
    pub(super) fn forget_agent(&mut self, agent: &str) {
        self.set_label(agent, None);
        let mut touched = BTreeSet::new();
        if let Some(state) = self.agents.remove(agent) {
            for id in state.resources.into_keys() {
                self.set_contributor(&id, agent, false);
                touched.insert(id);
            }
        }
        let mut pending = Pending::default();
        pending.relink.insert(agent.to_owned());
        self.refresh(touched, pending);
    }

    /// Set or clear the guest `agent` runs in by its label.
    pub(super) fn set_guest_label(&mut self, agent: &str, guest: Option<ResourceId>) {
        let guest = guest.filter(|g| {
            let ok = matches!(g.kind(), ResourceKind::Lxc | ResourceKind::Vm);
            if !ok {
                warn!(agent, guest = %g, "a guest label must name an lxc or vm; ignoring it");
            }
            ok
        });
        if self.labels.get(agent) == guest.as_ref() {
            return;
        }
        self.set_label(agent, guest);
        let mut pending = Pending::default();
        pending.relink.insert(agent.to_owned());
        self.refresh(BTreeSet::new(), pending);
    }

    fn set_label(&mut self, agent: &str, guest: Option<ResourceId>) {
        if let Some(old) = self.labels.remove(agent) {
            remove_from(&mut self.labelled, &old, agent);
        }
        if let Some(guest) = guest {
            self.labelled
                .entry(guest.clone())
                .or_default()
                .insert(agent.to_owned());
            self.labels.insert(agent.to_owned(), guest);
        }
    }

    fn set_contributor(&mut self, id: &ResourceId, agent: &str, reports: bool) {
        if reports {
            let agents = self.contributors.entry(id.clone()).or_default();
            if let Err(at) = agents.binary_search_by(|a| a.as_str().cmp(agent)) {
                agents.insert(at, agent.to_owned());
            }
        } else if let Some(agents) = self.contributors.get_mut(id) {
            agents.retain(|a| a != agent);
            if agents.is_empty() {
                self.contributors.remove(id);
            }
        }
    }

    /// Re-merge `ids`, then settle the guest links and search tokens that depend on them.
    fn refresh(&mut self, ids: BTreeSet<ResourceId>, mut pending: Pending) {
        for id in &ids {
            self.remerge(id, &mut pending);
        }
        self.relink(pending);
    }

    /// Recompute the merged entry of `id` from its reports and update what hangs off it:
    /// the parent index, the MAC indexes and the search index.
    fn remerge(&mut self, id: &ResourceId, pending: &mut Pending) {
        let new = self.contributors.get(id).and_then(|agents| {
            let reports: Vec<Reported<'_>> = agents
                .iter()
                .filter_map(|agent| {
                    let stored = self.agents.get(agent)?.resources.get(id)?;
                    Some(Reported {
                        agent,
                        resource: &stored.resource,
                        stamp: stored.stamp,
                    })
                })
                .collect();
            merge(&reports)
        });
        let old = self.merged.remove(id);
        let old_base = old.as_ref().map(|e| &e.base);
        if let Some(parent) = old_base.and_then(|r| r.parent.as_ref()) {
            remove_from(&mut self.raw_children, parent, id);
        }
        if let Some(parent) = new.as_ref().and_then(|r| r.parent.as_ref()) {
            self.raw_children
                .entry(parent.clone())
                .or_default()
                .insert(id.clone());
        }
        self.update_macs(id, old_base, new.as_ref(), pending);
        let old_keys = old.map(|e| e.keys).unwrap_or_default();
        match new {
            Some(base) => {
                let keys = self.keys_of(id, &base);
                self.index.update(id, &old_keys, &keys);
                self.merged.insert(id.clone(), Entry { base, keys });
            }
            None => self.index.update(id, &old_keys, &[]),
        }
    }

    /// Recompute the search tokens of `id` (its aliases from guest links changed).
    pub(super) fn rekey(&mut self, id: &ResourceId) {
        let Some(entry) = self.merged.get(id) else {
            return;
        };
        let keys = self.keys_of(id, &entry.base);
        if keys == entry.keys {
            return;
        }
        self.index.update(id, &entry.keys, &keys);
        if let Some(entry) = self.merged.get_mut(id) {
            entry.keys = keys;
        }
    }

    /// What `agent` last reported.
    pub(super) fn report(&self, agent: &str) -> Option<AgentReport> {
        self.agents.get(agent).map(|s| s.report.clone())
    }

    /// How many merged resources there are.
    pub(super) fn len(&self) -> usize {
        self.merged.len()
    }
}

/// Remove `value` from the set at `key`, and the set when it is left empty.
pub(super) fn remove_from<K, V, Q>(map: &mut HashMap<K, BTreeSet<V>>, key: &K, value: &Q)
where
    K: Hash + Eq,
    V: Ord + Borrow<Q>,
    Q: Ord + ?Sized,
{
    if let Some(set) = map.get_mut(key) {
        set.remove(value);
        if set.is_empty() {
            map.remove(key);
        }
    }
}
