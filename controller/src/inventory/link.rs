//! Guest links: agent A runs inside the Proxmox guest G (an `lxc` or `vm`) when its
//! join-token label names G, or else when A's `host:A` resource shares a MAC with exactly
//! one guest. A link holds only while G is in the graph. It shows in the merged view, which
//! [`Graph::present`] builds on read: G gets a `direct` path through A first, `host:A` and
//! its name become aliases of G, `host:A` gets G as parent, and so do the resources whose
//! parent is `host:A` (A's Docker containers).

use std::collections::BTreeSet;

use tracing::{info, warn};
use vigil_shared::ids::ExecTarget;
use vigil_shared::resource::{ExecPath, Resource, ResourceId, Via};

use super::graph::{Graph, Pending, remove_from};
use super::merge::Merged;
use super::search::{Token, keys};

/// The MAC addresses of a resource, lower case, without empty and all-zero ones.
fn macs(resource: Option<&Resource>) -> BTreeSet<String> {
    resource
        .into_iter()
        .flat_map(|r| r.facts.macs.iter())
        .map(|m| m.trim().to_lowercase())
        .filter(|m| !m.is_empty() && m.chars().any(|c| c != '0' && c != ':' && c != '-'))
        .collect()
}

impl Graph {
    /// Keep the MAC indexes in step with a re-merged `id`, and note which links that may
    /// change and which guests' aliases (a linked host's name) changed.
    pub(super) fn update_macs(
        &mut self,
        id: &ResourceId,
        old: Option<&Resource>,
        new: Option<&Resource>,
        pending: &mut Pending,
    ) {
        let (old_macs, new_macs) = (macs(old), macs(new));
        match id {
            ResourceId::Lxc { .. } | ResourceId::Vm { .. } => {
                if old.is_some() != new.is_some()
                    && let Some(agents) = self.labelled.get(id)
                {
                    pending.relink.extend(agents.iter().cloned());
                }
                for mac in old_macs.difference(&new_macs) {
                    remove_from(&mut self.guest_macs, mac, id);
                }
                for mac in new_macs.difference(&old_macs) {
                    self.guest_macs
                        .entry(mac.clone())
                        .or_default()
                        .insert(id.clone());
                }
                for mac in old_macs.symmetric_difference(&new_macs) {
                    if let Some(agents) = self.host_macs.get(mac) {
                        pending.relink.extend(agents.iter().cloned());
                    }
                }
            }
            ResourceId::Host(agent) => {
                if old_macs != new_macs {
                    for mac in old_macs.difference(&new_macs) {
                        remove_from(&mut self.host_macs, mac, agent.as_str());
                    }
                    for mac in new_macs.difference(&old_macs) {
                        self.host_macs
                            .entry(mac.clone())
                            .or_default()
                            .insert(agent.clone());
                    }
                    pending.relink.insert(agent.clone());
                }
                if old.map(|r| &r.name) != new.map(|r| &r.name)
                    && let Some(guest) = self.links.get(agent)
                {
                    pending.rekey.insert(guest.clone());
                }
            }
            _ => {}
        }
    }

    /// The guest `agent` runs in now: its label's guest if it has a label (even if that
    /// guest is not in the graph: then none), else the one guest sharing a MAC with its host.
    fn resolve(&self, agent: &str) -> Option<ResourceId> {
        if let Some(guest) = self.labels.get(agent) {
            return self.merged.contains_key(guest).then(|| guest.clone());
        }
        let host = self.merged.get(&ResourceId::Host(agent.to_owned()))?;
        let guests: BTreeSet<&ResourceId> = macs(Some(&host.merged.winner))
            .iter()
            .filter_map(|mac| self.guest_macs.get(mac))
            .flatten()
            .collect();
        match guests.len() {
            0 => None,
            1 => guests.into_iter().next().cloned(),
            _ => {
                let guests: Vec<String> = guests.iter().map(ToString::to_string).collect();
                warn!(
                    agent,
                    ?guests,
                    "the agent's host shares MACs with several guests; not linking it to any"
                );
                None
            }
        }
    }

    /// Re-resolve the links of `pending.relink`, then recompute the search tokens of every
    /// guest whose links or linked host names changed.
    pub(super) fn relink(&mut self, mut pending: Pending) {
        for agent in std::mem::take(&mut pending.relink) {
            let new = self.resolve(&agent);
            let old = self.links.get(&agent).cloned();
            if new == old {
                continue;
            }
            if let Some(old) = old {
                remove_from(&mut self.linked, &old, agent.as_str());
                self.links.remove(&agent);
                info!(agent, guest = %old, "agent no longer linked to a guest");
                pending.rekey.insert(old);
            }
            if let Some(new) = new {
                self.linked
                    .entry(new.clone())
                    .or_default()
                    .insert(agent.clone());
                info!(agent, guest = %new, "agent runs inside a guest");
                self.links.insert(agent, new.clone());
                pending.rekey.insert(new);
            }
        }
        for guest in &pending.rekey {
            self.rekey(guest);
        }
    }

    /// The aliases a guest gets from the agents running inside it: `host:<agent>` and the
    /// host's name.
    fn link_aliases(&self, id: &ResourceId) -> Vec<String> {
        let mut aliases = Vec::new();
        for agent in self.linked.get(id).into_iter().flatten() {
            let host = ResourceId::Host(agent.clone());
            if let Some(entry) = self.merged.get(&host)
                && !entry.merged.winner.name.is_empty()
            {
                aliases.push(entry.merged.winner.name.clone());
            }
            aliases.push(host.to_string());
        }
        aliases
    }

    /// The search tokens of `id` with the merged report `merged`.
    pub(super) fn keys_of(&self, id: &ResourceId, merged: &Merged) -> Vec<Token> {
        let extra = self.link_aliases(id);
        let names = std::iter::once(merged.winner.name.as_str())
            .chain(merged.aliases().iter().map(String::as_str))
            .chain(extra.iter().map(String::as_str));
        keys(id, names)
    }

    /// The parent of `id` in the merged view, given the parent its reports name.
    fn presented_parent(&self, id: &ResourceId, parent: Option<&ResourceId>) -> Option<ResourceId> {
        if let ResourceId::Host(agent) = id
            && let Some(guest) = self.links.get(agent)
        {
            return Some(guest.clone());
        }
        if let Some(ResourceId::Host(agent)) = parent
            && let Some(guest) = self.links.get(agent)
        {
            return Some(guest.clone());
        }
        parent.cloned()
    }

    /// One resource as the merged view shows it, guest links applied.
    pub(super) fn present(&self, id: &ResourceId) -> Option<Resource> {
        let entry = self.merged.get(id)?;
        let mut resource = entry.merged.to_resource();
        if let Some(agents) = self.linked.get(id) {
            let direct = agents.iter().map(|agent| ExecPath {
                agent: agent.clone(),
                target: ExecTarget::Host,
                via: Via::Direct,
            });
            resource.paths = direct.chain(resource.paths).collect();
            resource.aliases.extend(self.link_aliases(id));
            resource.aliases.sort();
            resource.aliases.dedup();
        }
        resource.parent = self.presented_parent(id, entry.merged.winner.parent.as_ref());
        Some(resource)
    }

    /// The ids whose merged-view parent is `id`, sorted.
    pub(super) fn children(&self, id: &ResourceId) -> Vec<ResourceId> {
        let mut candidates: BTreeSet<&ResourceId> = BTreeSet::new();
        let mut hosts = Vec::new();
        for agent in self.linked.get(id).into_iter().flatten() {
            hosts.push(ResourceId::Host(agent.clone()));
        }
        for host in &hosts {
            candidates.insert(host);
            candidates.extend(
                self.raw_children
                    .get(host)
                    .into_iter()
                    .flatten()
                    .map(|c| &**c),
            );
        }
        candidates.extend(
            self.raw_children
                .get(id)
                .into_iter()
                .flatten()
                .map(|c| &**c),
        );
        candidates
            .into_iter()
            .filter(|child| {
                self.merged.get(*child).is_some_and(|entry| {
                    self.presented_parent(child, entry.merged.winner.parent.as_ref())
                        .as_ref()
                        == Some(id)
                })
            })
            .cloned()
            .collect()
    }
}
