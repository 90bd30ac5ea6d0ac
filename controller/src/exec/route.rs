//! Where a command goes: an explicit agent and target, or the first connected path of a
//! resource's routing chain (docs/inventory.md). Also the read gate every read path shares.

use vigil_shared::ids::{AgentId, ExecTarget};
use vigil_shared::policy::Classification;
use vigil_shared::resource::{Resource, ResourceId};

use crate::{Error, Result};

/// Longest command timeout a caller may ask for, in seconds.
pub const MAX_TIMEOUT_S: u32 = 300;

/// Where a command goes: the agent, its target, and the resource it was routed for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub agent: AgentId,
    pub target: ExecTarget,
    pub resource: Option<ResourceId>,
}

impl Route {
    /// The target as the audit log records it: `RESOURCE via TARGET` when routed.
    pub fn audit_target(&self) -> String {
        match &self.resource {
            Some(resource) => format!("{resource} via {}", self.target),
            None => self.target.to_string(),
        }
    }
}

/// Parses an optional target (`host` when absent).
pub fn parse_target(target: Option<&str>) -> Result<ExecTarget> {
    match target.map(str::trim) {
        None | Some("") => Ok(ExecTarget::Host),
        Some(text) => text.parse().map_err(Error::InvalidInput),
    }
}

/// Refuses what may not run as a READ: not provably read-only (403), or read-only but
/// unbounded (422, with the rewrite when the classifier has one).
pub fn require_read(classification: &Classification) -> Result<()> {
    if !classification.intent.is_read_only() {
        return Err(Error::PolicyBlocked {
            reasons: classification.reasons.clone(),
        });
    }
    if !classification.boundedness.is_bounded() {
        return Err(Error::UnboundedCommand {
            reasons: classification.reasons.clone(),
            rewrite: classification.rewrite().map(str::to_owned),
            category: classification.category().map(|c| c.as_str()),
        });
    }
    Ok(())
}

/// The first path of `resource`'s chain whose agent is connected.
pub fn route_along(
    resource: Option<Resource>,
    id: &ResourceId,
    connected: impl Fn(AgentId) -> bool,
) -> Result<Route> {
    let resource = resource.ok_or_else(|| Error::NotFound(format!("no resource {id}")))?;
    if resource.paths.is_empty() {
        return Err(Error::NotFound(format!(
            "no agent can run commands in {id}: it has no execution path (no agent inside it, \
             and its parent's agent cannot reach it)"
        )));
    }
    let mut agents = Vec::new();
    for path in &resource.paths {
        let Ok(agent) = path.agent.parse::<AgentId>() else {
            continue;
        };
        if connected(agent) {
            return Ok(Route {
                agent,
                target: path.target.clone(),
                resource: Some(id.clone()),
            });
        }
        agents.push(path.agent.clone());
    }
    Err(Error::ResourceOffline {
        resource: id.to_string(),
        agents,
    })
}
#[cfg(test)]
mod tests {
    use super::*;
    use vigil_shared::policy::classify;

    #[test]
    fn reads_pass_and_refusals_carry_reasons_and_rewrites() {
        assert!(require_read(&classify("uptime")).is_ok());
        let Err(Error::PolicyBlocked { reasons }) = require_read(&classify("rm -rf /tmp/x")) else {
            panic!("rm is not a read");
        };
        assert!(!reasons.is_empty());
        let Err(Error::UnboundedCommand { rewrite, .. }) = require_read(&classify("journalctl -f"))
        else {
            panic!("journalctl -f is unbounded");
        };
        assert!(rewrite.unwrap_or_default().contains("journalctl -n 200"));
    }

    #[test]
    fn targets_default_to_the_host() {
        assert_eq!(parse_target(None).unwrap(), ExecTarget::Host);
        assert_eq!(parse_target(Some("lxc:141")).unwrap(), ExecTarget::Lxc(141));
        assert!(parse_target(Some("ssh:x")).is_err());
    }

    #[test]
    fn routing_takes_the_first_connected_path_of_the_chain() {
        use vigil_shared::resource::{ExecPath, Facts, ResourceKind, Via};
        let inside = AgentId::new_random();
        let node = AgentId::new_random();
        let id: ResourceId = "lxc:delly:141".parse().unwrap();
        let resource = Resource {
            id: id.clone(),
            kind: ResourceKind::Lxc,
            name: "media".into(),
            aliases: Vec::new(),
            parent: None,
            status: "running".into(),
            paths: vec![
                ExecPath {
                    agent: inside.to_string(),
                    target: ExecTarget::Host,
                    via: Via::Direct,
                },
                ExecPath {
                    agent: node.to_string(),
                    target: ExecTarget::Lxc(141),
                    via: Via::PctExec,
                },
            ],
            facts: Facts::default(),
        };
        let both = route_along(Some(resource.clone()), &id, |_| true).unwrap();
        assert_eq!((both.agent, both.target), (inside, ExecTarget::Host));
        let node_only = route_along(Some(resource.clone()), &id, |a| a == node).unwrap();
        assert_eq!(
            (node_only.agent, node_only.target.clone()),
            (node, ExecTarget::Lxc(141))
        );
        assert_eq!(node_only.audit_target(), "lxc:delly:141 via lxc:141");
        let Err(Error::ResourceOffline { agents, .. }) =
            route_along(Some(resource.clone()), &id, |_| false)
        else {
            panic!("no agent connected");
        };
        assert_eq!(agents, [inside.to_string(), node.to_string()]);
        let no_paths = Resource {
            paths: Vec::new(),
            ..resource
        };
        assert!(matches!(
            route_along(Some(no_paths), &id, |_| true),
            Err(Error::NotFound(_))
        ));
        assert!(matches!(
            route_along(None, &id, |_| true),
            Err(Error::NotFound(_))
        ));
    }
}
