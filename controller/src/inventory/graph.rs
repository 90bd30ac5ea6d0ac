//! The inventory's state: every agent's newest report, the reports of each id, and the
//! merged entry of each id with its search tokens. An update re-merges only the ids whose
//! reports changed, then re-resolves the guest links those changes may affect
//! ([`super::link`]), so its cost grows with the size of the change, not of the graph.
//!
//! Memory: a reported resource is held once, as the agent sent it, and the merged entry
//! shares it when it wins ([`Merged`]); ids are interned ([`super::intern`]) and agent ids
//! are shared with the agents map.

use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::Hash;
use std::sync::Arc;

use tracing::{debug, warn};
use vigil_shared::resource::{Resource, ResourceId, ResourceKind};

use super::intern::{Id, Ids};
use super::merge::{Merged, Report, admit, merge};
use super::search::{Key, SearchIndex};
use super::{AgentReport, AgentUpdate};

/// One agent's newest report: its notes and the ids it reports (the resources are in
/// [`Graph::reports`]).
#[derive(Debug, Default)]
pub(super) struct AgentState {
    pub report: AgentReport,
    pub ids: HashSet<Id>,
}

/// A merged resource (without guest-link effects, which [`Graph::present`] adds) and the
/// search tokens it is indexed under.
#[derive(Debug)]
pub(super) struct Entry {
    pub merged: Merged,
    pub keys: Box<[Key]>,
}

/// Everything the inventory knows.
#[derive(Debug, Default)]
pub(super) struct Graph {
    /// By agent id; the key is the one copy of the id that the reports share.
    pub(super) agents: BTreeMap<Arc<str>, AgentState>,
    /// The reports of each id, sorted by agent (usually one or two).
    reports: HashMap<Id, Vec<Report>>,
    pub(super) merged: BTreeMap<Id, Entry>,
    /// Ids by the parent their merged report names (before guest links re-parent them).
    pub(super) raw_children: HashMap<Id, BTreeSet<Id>>,
    pub(super) index: SearchIndex,
    ids: Ids,
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
        let name = match self.agents.get_key_value(agent) {
            Some((name, _)) => Arc::clone(name),
            None => Arc::from(agent),
        };
        let state = self.agents.entry(Arc::clone(&name)).or_default();
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
        let mut touched: BTreeSet<Id> = BTreeSet::new();
        if update.full {
            let keep: HashSet<&ResourceId> = upserts.iter().map(|r| &r.id).collect();
            let gone: Vec<Id> = state
                .ids
                .iter()
                .filter(|id| !keep.contains(&***id))
                .cloned()
                .collect();
            for id in gone {
                state.ids.remove(&id);
                touched.insert(id);
            }
        }
        for resource in upserts {
            let unchanged = self
                .reports
                .get(&resource.id)
                .and_then(|reports| reports.iter().find(|r| &*r.agent == agent))
                .is_some_and(|r| *r.resource == resource);
            if unchanged {
                continue;
            }
            let id = self.ids.intern(&resource.id);
            state.ids.insert(Arc::clone(&id));
            let report = Report {
                agent: Arc::clone(&name),
                resource: Arc::new(resource),
                stamp,
            };
            set_report(&mut self.reports, &id, report);
            touched.insert(id);
        }
        if !update.full {
            for id in update.removed {
                if let Some(id) = state.ids.take(&id) {
                    touched.insert(id);
                }
            }
        }
        state.report.resources = state.ids.len();
        debug!(
            agent,
            changed = touched.len(),
            "applying an inventory update"
        );
        for id in &touched {
            if !state.ids.contains(id) {
                drop_report(&mut self.reports, id, agent);
            }
        }
        self.refresh(touched, Pending::default());
    }

    /// Drop `agent`'s report and guest label.
    pub(super) fn forget_agent(&mut self, agent: &str) {
        self.set_label(agent, None);
        let mut touched = BTreeSet::new();
        if let Some(state) = self.agents.remove(agent) {
            for id in state.ids {
                drop_report(&mut self.reports, &id, agent);
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

    /// Re-merge `ids`, then settle the guest links and search tokens that depend on them,
    /// and drop the ids nothing names any more from the id table.
    fn refresh(&mut self, ids: BTreeSet<Id>, mut pending: Pending) {
        let mut released = Vec::new();
        for id in &ids {
            self.remerge(id, &mut pending, &mut released);
        }
        self.relink(pending);
        let mut candidates = ids;
        candidates.extend(released);
        self.ids.sweep(candidates);
    }

    /// Recompute the merged entry of `id` from its reports and update what hangs off it:
    /// the parent index, the MAC indexes and the search index. The parent it no longer
    /// names goes to `released`.
    fn remerge(&mut self, id: &Id, pending: &mut Pending, released: &mut Vec<Id>) {
        let new = self.reports.get(&**id).and_then(|reports| merge(reports));
        let old = self.merged.remove(&**id);
        let old_base = old.as_ref().map(|e| &*e.merged.winner);
        let new_base = new.as_ref().map(|m| &*m.winner);
        let old_parent = old_base.and_then(|r| r.parent.as_ref());
        let new_parent = new_base.and_then(|r| r.parent.as_ref());
        if old_parent != new_parent {
            if let Some(parent) = old_parent {
                remove_from(&mut self.raw_children, parent, &**id);
                released.extend(self.ids.get(parent));
            }
            if let Some(parent) = new_parent {
                let parent = self.ids.intern(parent);
                self.raw_children
                    .entry(parent)
                    .or_default()
                    .insert(Arc::clone(id));
            }
        }
        self.update_macs(id, old_base, new_base, pending);
        let old_keys = old.map(|e| e.keys).unwrap_or_default();
        match new {
            Some(merged) => {
                let tokens = self.keys_of(id, &merged);
                let keys = self.index.update(id, &old_keys, &tokens);
                self.merged.insert(Arc::clone(id), Entry { merged, keys });
            }
            None => {
                self.index.update(id, &old_keys, &[]);
            }
        }
    }

    /// Recompute the search tokens of `id` (its aliases from guest links changed).
    pub(super) fn rekey(&mut self, id: &ResourceId) {
        let Some((id, entry)) = self.merged.get_key_value(id) else {
            return;
        };
        let tokens = self.keys_of(id, &entry.merged);
        let same = tokens.len() == entry.keys.len()
            && tokens
                .iter()
                .zip(entry.keys.iter())
                .all(|((f, t), (g, u))| f == g && t.as_str() == &**u);
        if same {
            return;
        }
        let keys = self.index.update(id, &entry.keys, &tokens);
        let id = Arc::clone(id);
        if let Some(entry) = self.merged.get_mut(&id) {
            entry.keys = keys;
        }
    }

    /// Everything `agent` reports now, as one full update.
    pub(super) fn snapshot(&self, agent: &str) -> Option<AgentUpdate> {
        let state = self.agents.get(agent)?;
        let mut upserts: Vec<Resource> = state
            .ids
            .iter()
            .filter_map(|id| {
                self.reports
                    .get(&**id)?
                    .iter()
                    .find(|r| &*r.agent == agent)
                    .map(|r| (*r.resource).clone())
            })
            .collect();
        upserts.sort_by(|a, b| a.id.cmp(&b.id));
        Some(AgentUpdate {
            seq: state.report.seq,
            full: true,
            upserts,
            removed: Vec::new(),
            sources: state.report.sources.clone(),
            capped: state.report.capped.clone(),
            errors: state.report.errors.clone(),
        })
    }

    /// What `agent` last reported.
    pub(super) fn report(&self, agent: &str) -> Option<AgentReport> {
        self.agents.get(agent).map(|s| s.report.clone())
    }

    /// How many merged resources there are.
    pub(super) fn len(&self) -> usize {
        self.merged.len()
    }

    /// How many ids are interned (tests: the table does not outgrow the graph).
    #[cfg(test)]
    pub(super) fn interned(&self) -> usize {
        self.ids.len()
    }
}

/// Set `agent`'s report of `id`, in agent order.
fn set_report(reports: &mut HashMap<Id, Vec<Report>>, id: &Id, report: Report) {
    let list = reports.entry(Arc::clone(id)).or_default();
    match list.binary_search_by(|r| r.agent.cmp(&report.agent)) {
        Ok(at) => list[at] = report,
        Err(at) => list.insert(at, report),
    }
}

/// Drop `agent`'s report of `id`, and the list when it is left empty.
fn drop_report(reports: &mut HashMap<Id, Vec<Report>>, id: &ResourceId, agent: &str) {
    if let Some(list) = reports.get_mut(id) {
        list.retain(|r| &*r.agent != agent);
        if list.is_empty() {
            reports.remove(id);
        }
    }
}

/// Remove `value` from the set at `key`, and the set when it is left empty.
pub(super) fn remove_from<K, V, P, Q>(map: &mut HashMap<K, BTreeSet<V>>, key: &P, value: &Q)
where
    K: Hash + Eq + Borrow<P>,
    P: Hash + Eq + ?Sized,
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
