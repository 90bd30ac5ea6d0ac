//! What one agent may report (an agent is never trusted about other hosts), and how the
//! reports of one resource from several agents become one resource: the scalar fields of
//! the report whose best path ranks highest, the union of aliases, and every path ordered
//! by rank (the routing chain). A merged resource shares the winning report rather than
//! copying it.

use std::cmp::Reverse;
use std::sync::Arc;

use tracing::warn;
use vigil_shared::resource::{ExecPath, Resource, ResourceId, Via};

/// Rank of a path kind, best first: an agent inside the resource, then the engine on its
/// own host, then the Proxmox node's `pct exec`, then `qm guest exec`.
pub(super) fn rank(via: Via) -> u8 {
    match via {
        Via::Direct => 0,
        Via::Docker | Via::Kubernetes => 1,
        Via::PctExec => 2,
        Via::QmGuestExec => 3,
    }
}

/// The rank of a resource's best path; a resource without paths ranks after all others.
pub(super) fn best_rank(resource: &Resource) -> u8 {
    resource
        .paths
        .iter()
        .map(|p| rank(p.via))
        .min()
        .unwrap_or(u8::MAX)
}

/// `resource` as `agent` may report it, or None when it may not report it at all: a
/// `host:X` resource only from agent X; a `direct` path only on `host:<agent>` and on
/// `node:*`; every path is the sender's own.
pub(super) fn admit(agent: &str, mut resource: Resource) -> Option<Resource> {
    if let ResourceId::Host(owner) = &resource.id
        && owner != agent
    {
        warn!(agent, id = %resource.id, "dropping a host resource reported by another agent");
        return None;
    }
    resource.kind = resource.id.kind();
    let direct_allowed = matches!(&resource.id, ResourceId::Host(_) | ResourceId::Node(_));
    let before = resource.paths.len();
    resource
        .paths
        .retain(|p| direct_allowed || p.via != Via::Direct);
    if resource.paths.len() != before {
        warn!(agent, id = %resource.id, "dropping a direct path the agent may not report");
    }
    for path in &mut resource.paths {
        if path.agent != agent {
            path.agent = agent.to_owned();
        }
    }
    Some(resource)
}

/// One agent's report of a resource, with when it last changed (a graph-wide counter).
/// The resource is shared with the merged entry when it wins.
#[derive(Debug, Clone)]
pub(super) struct Report {
    pub agent: Arc<str>,
    pub resource: Arc<Resource>,
    pub stamp: u64,
}

/// A merged resource: the winning report, and the union of the aliases and paths of all
/// reports where it differs from the winner's own (not with a single, ordered report).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Merged {
    pub winner: Arc<Resource>,
    combined: Option<Box<Combined>>,
}

/// The aliases and paths of a resource merged from several reports.
#[derive(Debug, Clone, PartialEq)]
struct Combined {
    aliases: Vec<String>,
    paths: Vec<ExecPath>,
}

impl Merged {
    /// The merged aliases, sorted.
    pub(super) fn aliases(&self) -> &[String] {
        match &self.combined {
            Some(c) => &c.aliases,
            None => &self.winner.aliases,
        }
    }

    /// The merged resource as the API shows it (before guest links).
    pub(super) fn to_resource(&self) -> Resource {
        let w = &*self.winner;
        let (aliases, paths) = match &self.combined {
            Some(c) => (c.aliases.clone(), c.paths.clone()),
            None => (w.aliases.clone(), w.paths.clone()),
        };
        Resource {
            id: w.id.clone(),
            kind: w.id.kind(),
            name: w.name.clone(),
            aliases,
            parent: w.parent.clone(),
            status: w.status.clone(),
            paths,
            facts: w.facts.clone(),
        }
    }
}

/// The merged resource, or None without reports. The scalar fields (name, status, parent,
/// facts) are the winner's: best path rank, then the newest report, then the agent id.
/// Aliases are the sorted union; paths are ordered by rank, then agent id, duplicates
/// dropped.
pub(super) fn merge(reports: &[Report]) -> Option<Merged> {
    let winner = reports
        .iter()
        .min_by_key(|r| (best_rank(&r.resource), Reverse(r.stamp), &*r.agent))?;
    let mut aliases: Vec<&String> = reports
        .iter()
        .flat_map(|r| r.resource.aliases.iter())
        .collect();
    aliases.sort();
    aliases.dedup();
    let mut ranked: Vec<(u8, &str, &ExecPath)> = reports
        .iter()
        .flat_map(|r| {
            r.resource
                .paths
                .iter()
                .map(move |p| (rank(p.via), &*r.agent, p))
        })
        .collect();
    ranked.sort_by_key(|(rank, agent, _)| (*rank, *agent));
    let mut paths: Vec<&ExecPath> = Vec::with_capacity(ranked.len());
    for (_, _, path) in ranked {
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    let w = &winner.resource;
    let same =
        aliases.iter().copied().eq(w.aliases.iter()) && paths.iter().copied().eq(w.paths.iter());
    let combined = (!same).then(|| {
        Box::new(Combined {
            aliases: aliases.into_iter().cloned().collect(),
            paths: paths.into_iter().cloned().collect(),
        })
    });
    Some(Merged {
        winner: Arc::clone(w),
        combined,
    })
}
