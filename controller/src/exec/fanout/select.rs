//! Which targets a fan-out reaches. The rule (docs/state-and-api.md, "Fan-out"):
//!
//! - `all: true` names every enrolled, non-revoked agent (its host);
//! - `targets` names agents by id (their host) or resources by id (routed along the
//!   resource's chain as `POST /api/exec` routes them); `all` and `targets` add up;
//! - `labels` keeps the targets whose agent carries every given pair; alone it starts from
//!   every enrolled agent. A named target that cannot be resolved (an unknown id, a
//!   resource with no connected agent) is kept and reported, never silently dropped;
//! - a target reached twice (the same agent and execution target) runs once.
//!
//! [`enrolled`] is the one place that reads the agent list, so it can move to an in-memory
//! registry without touching the rule.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

use vigil_shared::ids::{AgentId, ExecTarget};
use vigil_shared::resource::ResourceId;

use crate::agents::Agents;
use crate::exec::Route;
use crate::{Error, Result};

/// How many named targets the audit row lists before it says how many more there were.
const DESCRIBED_TARGETS: usize = 5;

/// What the caller asked to reach.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Every enrolled, non-revoked agent.
    pub all: bool,
    /// Agent ids and resource ids.
    pub targets: Vec<String>,
    /// Pairs every selected target's agent must carry.
    pub labels: BTreeMap<String, String>,
}

impl Selection {
    /// Refuses a selection that names nothing.
    pub fn check(&self) -> Result<()> {
        if !self.all && self.targets.is_empty() && self.labels.is_empty() {
            return Err(Error::InvalidInput(
                "select targets: give all: true, targets (agent or resource ids) or labels \
                 ({key: value})"
                    .into(),
            ));
        }
        if let Some(bad) = self.targets.iter().find(|t| t.trim().is_empty()) {
            return Err(Error::InvalidInput(format!(
                "targets holds an empty id ({bad:?})"
            )));
        }
        Ok(())
    }

    /// The selection as the audit row records it: `all`, `labels k=v,…`, `targets a, b
    /// (+N more)`, joined with ` + `.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.all {
            parts.push("all".to_owned());
        }
        if !self.targets.is_empty() {
            let mut text = String::from("targets ");
            let shown = self.targets.iter().take(DESCRIBED_TARGETS);
            text.push_str(&shown.map(String::as_str).collect::<Vec<_>>().join(", "));
            if self.targets.len() > DESCRIBED_TARGETS {
                let _ = write!(text, " (+{} more)", self.targets.len() - DESCRIBED_TARGETS);
            }
            parts.push(text);
        }
        if !self.labels.is_empty() {
            let pairs: Vec<String> = self
                .labels
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            parts.push(format!("labels {}", pairs.join(",")));
        }
        parts.join(" + ")
    }
}

/// An enrolled, non-revoked agent as selection sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnrolledAgent {
    /// Its identity.
    pub id: AgentId,
    /// Its host name.
    pub hostname: String,
    /// Its join token's labels.
    pub labels: BTreeMap<String, String>,
}

impl EnrolledAgent {
    fn carries(&self, labels: &BTreeMap<String, String>) -> bool {
        labels.iter().all(|(k, v)| self.labels.get(k) == Some(v))
    }
}

/// Every enrolled, non-revoked agent, oldest first, from the in-memory registry.
pub fn enrolled(agents: &Agents) -> Vec<EnrolledAgent> {
    agents
        .records(false)
        .into_iter()
        .map(|row| EnrolledAgent {
            id: row.id,
            hostname: row.hostname.clone(),
            labels: row.labels.clone(),
        })
        .collect()
}

/// One target of a fan-out.
#[derive(Debug)]
pub struct Target {
    /// Its place in the selection (results in JSON come in this order).
    pub index: usize,
    /// The target as named: an agent id or a resource id.
    pub name: String,
    /// The host name of the agent that runs it (empty when unresolved).
    pub host: String,
    /// Where it goes, or why it cannot go anywhere.
    pub plan: Plan,
}

/// Where a target's command goes.
#[derive(Debug)]
pub enum Plan {
    /// To this route's agent (whether it is connected is checked at dispatch).
    Run(Route),
    /// Nowhere: the id is unknown, or no agent on the resource's chain is connected.
    Unresolved(Error),
}

/// The targets of `selection` among `enrolled`; `route` routes a resource id (see the
/// module documentation for the rule). Fails only on a target that is neither an agent id
/// nor a resource id.
pub fn select(
    selection: &Selection,
    enrolled: &[EnrolledAgent],
    route: impl Fn(&ResourceId) -> Result<Route>,
) -> Result<Vec<Target>> {
    let by_id: HashMap<AgentId, &EnrolledAgent> = if selection.targets.is_empty() {
        HashMap::new()
    } else {
        enrolled.iter().map(|a| (a.id, a)).collect()
    };
    let labels = &selection.labels;
    let mut picked = Picked::default();
    if selection.all || selection.targets.is_empty() {
        for agent in enrolled.iter().filter(|a| a.carries(labels)) {
            picked.push_host(agent.id, agent.id.to_string(), &agent.hostname);
        }
    }
    for name in &selection.targets {
        let name = name.trim();
        if let Ok(id) = name.parse::<AgentId>() {
            match by_id.get(&id) {
                Some(agent) if agent.carries(labels) => {
                    picked.push_host(id, name.to_owned(), &agent.hostname)
                }
                Some(_) => {}
                None => picked.push_unresolved(
                    name,
                    Error::NotFound(format!("no enrolled agent {id} (unknown or revoked)")),
                ),
            }
            continue;
        }
        let resource: ResourceId = name.parse().map_err(|e| {
            Error::InvalidInput(format!(
                "target {name:?} is neither an agent id nor a resource id: {e}"
            ))
        })?;
        match route(&resource) {
            Ok(route) => match by_id.get(&route.agent) {
                Some(agent) if agent.carries(labels) => {
                    let host = agent.hostname.clone();
                    picked.push_route(name.to_owned(), host, route);
                }
                Some(_) => {}
                None if labels.is_empty() => {
                    picked.push_route(name.to_owned(), String::new(), route)
                }
                None => {}
            },
            Err(error) => picked.push_unresolved(name, error),
        }
    }
    Ok(picked.targets)
}

/// The targets picked so far, without repeats.
#[derive(Debug, Default)]
struct Picked {
    targets: Vec<Target>,
    hosts: HashSet<AgentId>,
    routes: HashSet<(AgentId, ExecTarget)>,
    unresolved: HashSet<String>,
}

impl Picked {
    fn push(&mut self, name: String, host: String, plan: Plan) {
        let index = self.targets.len();
        self.targets.push(Target {
            index,
            name,
            host,
            plan,
        });
    }

    fn push_host(&mut self, agent: AgentId, name: String, host: &str) {
        if self.hosts.insert(agent) {
            let route = Route {
                agent,
                target: ExecTarget::Host,
                resource: None,
            };
            self.push(name, host.to_owned(), Plan::Run(route));
        }
    }

    fn push_route(&mut self, name: String, host: String, route: Route) {
        if route.target == ExecTarget::Host {
            if self.hosts.insert(route.agent) {
                self.push(name, host, Plan::Run(route));
            }
        } else if self.routes.insert((route.agent, route.target.clone())) {
            self.push(name, host, Plan::Run(route));
        }
    }

    fn push_unresolved(&mut self, name: &str, error: Error) {
        if self.unresolved.insert(name.to_owned()) {
            self.push(name.to_owned(), String::new(), Plan::Unresolved(error));
        }
    }
}

#[cfg(test)]
mod tests;
