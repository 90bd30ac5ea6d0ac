//! Which agent speaks for a Proxmox node. An agent is not trusted about other machines, so
//! a node name (`node:N`, and the `lxc:N:*` / `vm:N:*` guests and the Docker containers
//! inside them that only N's agent can reach) belongs to the connected agent that reported
//! `node:N` first. Another agent's reports about that node are dropped while the owner is
//! connected; when the owner is gone (disconnected or revoked), the next agent to report
//! the node takes it over.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use tracing::warn;
use vigil_shared::resource::{Resource, ResourceId, Via};

/// Node name → the agent that owns it.
#[derive(Debug, Default)]
pub struct NodeClaims {
    owners: Mutex<HashMap<String, String>>,
}

/// The Proxmox node a resource belongs to, if it is node-scoped: the node itself, its
/// guests, and what the node's agent reaches inside a guest with `pct exec`.
fn node_of(resource: &Resource) -> Option<&str> {
    match &resource.id {
        ResourceId::Node(node) => Some(node),
        ResourceId::Lxc { node, .. } | ResourceId::Vm { node, .. } => Some(node),
        _ => match &resource.parent {
            Some(ResourceId::Lxc { node, .. } | ResourceId::Vm { node, .. })
                if resource
                    .paths
                    .iter()
                    .any(|p| matches!(p.via, Via::PctExec | Via::QmGuestExec)) =>
            {
                Some(node)
            }
            _ => None,
        },
    }
}

impl NodeClaims {
    /// Keep only what `agent` may report: it claims every node it reports as `node:N` that
    /// has no connected owner (`connected` says whether an agent is), and node-scoped
    /// resources of nodes another connected agent owns are dropped with a warning.
    pub fn filter(
        &self,
        agent: &str,
        upserts: Vec<Resource>,
        connected: impl Fn(&str) -> bool,
    ) -> Vec<Resource> {
        let mut owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
        for resource in &upserts {
            if let ResourceId::Node(node) = &resource.id {
                let owner = owners.get(node);
                if owner.is_none_or(|o| o != agent && !connected(o)) {
                    owners.insert(node.clone(), agent.to_owned());
                }
            }
        }
        upserts
            .into_iter()
            .filter(|resource| match node_of(resource) {
                None => true,
                Some(node) => {
                    let ok = owners.get(node).is_some_and(|o| o == agent);
                    if !ok {
                        warn!(
                            agent,
                            id = %resource.id,
                            owner = owners.get(node).map(String::as_str).unwrap_or("none"),
                            "dropping a report about a Proxmox node another agent speaks for"
                        );
                    }
                    ok
                }
            })
            .collect()
    }

    /// Release every node `agent` owns (it was revoked).
    pub fn release(&self, agent: &str) {
        self.owners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|_, owner| owner != agent);
    }

    /// The agent that owns `node`.
    pub fn owner(&self, node: &str) -> Option<String> {
        self.owners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(node)
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_shared::ids::ExecTarget;
    use vigil_shared::resource::{ExecPath, Facts};

    fn r(id: &str, parent: Option<&str>, via: Option<Via>) -> Resource {
        let id: ResourceId = id.parse().unwrap();
        Resource {
            kind: id.kind(),
            id,
            name: "x".into(),
            aliases: Vec::new(),
            parent: parent.map(|p| p.parse().unwrap()),
            status: "running".into(),
            paths: via
                .map(|via| ExecPath {
                    agent: "any".into(),
                    target: ExecTarget::Host,
                    via,
                })
                .into_iter()
                .collect(),
            facts: Facts::default(),
        }
    }

    fn ids(list: &[Resource]) -> Vec<String> {
        list.iter().map(|r| r.id.to_string()).collect()
    }

    fn report() -> Vec<Resource> {
        vec![
            r("node:delly", None, Some(Via::Direct)),
            r("lxc:delly:141", Some("node:delly"), Some(Via::PctExec)),
            r("vm:delly:203", Some("node:delly"), None),
            r(
                "docker_container:media:689b21f1c3ca",
                Some("lxc:delly:141"),
                Some(Via::PctExec),
            ),
            r("host:b", None, Some(Via::Direct)),
        ]
    }

    #[test]
    fn the_first_connected_reporter_owns_a_node_and_others_are_dropped() {
        let claims = NodeClaims::default();
        let all = ids(&report());
        assert_eq!(ids(&claims.filter("a", report(), |_| true)), all);
        assert_eq!(claims.owner("delly").as_deref(), Some("a"));
        // b claims the same node while a is connected: only b's own host survives.
        assert_eq!(ids(&claims.filter("b", report(), |_| true)), ["host:b"]);
        // A guest of delly without the node, or a container reached through delly's
        // pct exec: dropped too.
        let sneaky = vec![
            r("lxc:delly:141", Some("node:delly"), Some(Via::PctExec)),
            r(
                "docker_container:media:689b21f1c3ca",
                Some("lxc:delly:141"),
                Some(Via::PctExec),
            ),
        ];
        assert!(claims.filter("b", sneaky, |_| true).is_empty());
        // The same container through b's own Docker engine is b's business.
        let own = vec![r(
            "docker_container:media:689b21f1c3ca",
            Some("host:b"),
            Some(Via::Docker),
        )];
        assert_eq!(claims.filter("b", own, |_| true).len(), 1);
        assert_eq!(claims.owner("delly").as_deref(), Some("a"));
    }

    #[test]
    fn a_node_passes_to_the_next_reporter_when_its_owner_is_gone() {
        let claims = NodeClaims::default();
        claims.filter("a", report(), |_| true);
        let taken = claims.filter("b", report(), |agent| agent != "a");
        assert_eq!(taken.len(), report().len());
        assert_eq!(claims.owner("delly").as_deref(), Some("b"));
        claims.release("b");
        assert_eq!(claims.owner("delly"), None);
    }
}
