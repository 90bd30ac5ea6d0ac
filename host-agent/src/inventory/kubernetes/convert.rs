//! Kubernetes objects as inventory resources (docs/inventory.md): one pure function per
//! kind, so the mapping is tested without a cluster. An object whose name cannot be an id
//! part (`:`, white space, a control character, or `/`, which would break the pod's exec
//! target) is skipped with a warning.

use crate::kube_api::types::{Deployment, Namespace, Node, ObjectMeta, Pod};
use std::collections::{BTreeMap, BTreeSet};
use tracing::warn;
use vigil_shared::ids::ExecTarget;
use vigil_shared::resource::{ExecPath, Facts, Resource, ResourceId, ResourceKind, Via};

/// Whether `name` can be a part of a resource id and of a pod exec target.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name
            .chars()
            .any(|c| c == ':' || c == '/' || c.is_whitespace() || c.is_control())
}

/// The object's name, or `None` (logged) when it is missing or cannot be an id part.
fn name_of<'a>(kind: &str, meta: &'a ObjectMeta) -> Option<&'a str> {
    let name = meta.name.as_deref().unwrap_or_default();
    if valid_name(name) {
        Some(name)
    } else {
        warn!(
            kind,
            name, "skipping a Kubernetes object whose name cannot be an id part"
        );
        None
    }
}

/// The object's namespace, or `None` (logged) like [`name_of`].
fn namespace_of<'a>(kind: &str, meta: &'a ObjectMeta) -> Option<&'a str> {
    let ns = meta.namespace.as_deref().unwrap_or_default();
    if valid_name(ns) {
        Some(ns)
    } else {
        warn!(kind, namespace = ns, name = ?meta.name, "skipping a Kubernetes object in a namespace that cannot be an id part");
        None
    }
}

fn resource(id: ResourceId, name: &str, parent: ResourceId, status: String) -> Resource {
    Resource {
        kind: id.kind(),
        id,
        name: name.to_owned(),
        aliases: Vec::new(),
        parent: Some(parent),
        status,
        paths: Vec::new(),
        facts: Facts::default(),
    }
}

/// `cluster:<cluster>`.
pub fn cluster_resource(cluster: &str, nodes: usize, version: Option<String>) -> Resource {
    let mut details = BTreeMap::from([("nodes".to_owned(), nodes.to_string())]);
    if let Some(version) = version {
        details.insert("version".to_owned(), version);
    }
    Resource {
        id: ResourceId::Cluster(cluster.to_owned()),
        kind: ResourceKind::Cluster,
        name: cluster.to_owned(),
        aliases: Vec::new(),
        parent: None,
        status: "reachable".to_owned(),
        paths: Vec::new(),
        facts: Facts {
            details,
            ..Facts::default()
        },
    }
}

/// `kube_node:<cluster>:<name>`: Ready/NotReady, kubelet version, capacity, addresses.
pub fn node_resource(cluster: &str, node: &Node) -> Option<Resource> {
    let name = name_of("node", &node.metadata)?;
    let status = node.status.as_ref();
    let ready = status
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|c| c.type_ == "Ready" && c.status == "True");
    let mut r = resource(
        ResourceId::KubeNode {
            cluster: cluster.to_owned(),
            name: name.to_owned(),
        },
        name,
        ResourceId::Cluster(cluster.to_owned()),
        if ready { "Ready" } else { "NotReady" }.to_owned(),
    );
    let details = &mut r.facts.details;
    if let Some(info) = status.and_then(|s| s.node_info.as_ref()) {
        details.insert("kubelet_version".to_owned(), info.kubelet_version.clone());
    }
    if let Some(capacity) = status.and_then(|s| s.capacity.as_ref()) {
        for (key, detail) in [("cpu", "cpu"), ("memory", "memory")] {
            if let Some(q) = capacity.get(key) {
                details.insert(detail.to_owned(), q.0.clone());
            }
        }
    }
    if node.spec.as_ref().and_then(|s| s.unschedulable) == Some(true) {
        details.insert("unschedulable".to_owned(), "true".to_owned());
    }
    let addresses = status
        .and_then(|s| s.addresses.as_ref())
        .into_iter()
        .flatten();
    let mut ips = BTreeSet::new();
    for a in addresses {
        match a.type_.as_str() {
            "InternalIP" | "ExternalIP" => {
                ips.insert(a.address.clone());
            }
            "Hostname" if a.address != name && valid_name(&a.address) => {
                r.aliases.push(a.address.clone());
            }
            _ => {}
        }
    }
    r.facts.ips = ips.into_iter().collect();
    Some(r)
}

/// `namespace:<cluster>:<ns>` with its phase as status.
pub fn namespace_resource(cluster: &str, namespace: &Namespace) -> Option<Resource> {
    let name = name_of("namespace", &namespace.metadata)?;
    let phase = namespace.status.as_ref().and_then(|s| s.phase.clone());
    Some(resource(
        ResourceId::Namespace {
            cluster: cluster.to_owned(),
            namespace: name.to_owned(),
        },
        name,
        ResourceId::Cluster(cluster.to_owned()),
        phase.unwrap_or_else(|| "Unknown".to_owned()),
    ))
}

fn namespace_id(cluster: &str, ns: &str) -> ResourceId {
    ResourceId::Namespace {
        cluster: cluster.to_owned(),
        namespace: ns.to_owned(),
    }
}

/// `deployment:<cluster>:<ns>:<name>` with `ready/desired` as status.
pub fn deployment_resource(cluster: &str, deployment: &Deployment) -> Option<Resource> {
    let name = name_of("deployment", &deployment.metadata)?;
    let ns = namespace_of("deployment", &deployment.metadata)?;
    let spec = deployment.spec.as_ref();
    let desired = spec.and_then(|s| s.replicas).unwrap_or(1);
    let ready = deployment
        .status
        .as_ref()
        .and_then(|s| s.ready_replicas)
        .unwrap_or(0);
    let mut r = resource(
        ResourceId::Deployment {
            cluster: cluster.to_owned(),
            namespace: ns.to_owned(),
            name: name.to_owned(),
        },
        name,
        namespace_id(cluster, ns),
        format!("{ready}/{desired}"),
    );
    let images: Vec<String> = spec
        .and_then(|s| s.template.spec.as_ref())
        .map(|p| {
            p.containers
                .iter()
                .filter_map(|c| c.image.clone())
                .collect()
        })
        .unwrap_or_default();
    r.facts.image = images.first().cloned();
    if !images.is_empty() {
        r.facts
            .details
            .insert("images".to_owned(), images.join(", "));
    }
    r.facts.labels = deployment.metadata.labels.clone().unwrap_or_default();
    Some(r)
}

/// The name of what runs the pod, when it is not the pod's own name: the deployment of a
/// ReplicaSet's pod (`web-5d9f7c-x2x9k` → `web`), the owner of a DaemonSet's or Job's pod.
/// A StatefulSet's pod keeps its name and has no such alias.
pub fn owner_alias(pod: &Pod) -> Option<String> {
    let name = pod.metadata.name.as_deref()?;
    let owner = pod
        .metadata
        .owner_references
        .as_ref()?
        .iter()
        .find(|o| o.controller == Some(true))
        .or_else(|| pod.metadata.owner_references.as_ref()?.first())?;
    let alias = match owner.kind.as_str() {
        "ReplicaSet" => {
            let mut parts: Vec<&str> = name.split('-').collect();
            if parts.len() < 3 {
                return None;
            }
            parts.truncate(parts.len() - 2);
            parts.join("-")
        }
        "DaemonSet" | "Job" => owner.name.clone(),
        _ => return None,
    };
    (alias != name && valid_name(&alias)).then_some(alias)
}

/// `pod:<cluster>:<ns>:<name>`: phase, restarts, containers, node, readiness, ports, and
/// the `kubernetes` path to its first container.
pub fn pod_resource(cluster: &str, agent: &str, pod: &Pod) -> Option<Resource> {
    let name = name_of("pod", &pod.metadata)?;
    let ns = namespace_of("pod", &pod.metadata)?;
    let spec = pod.spec.as_ref();
    let status = pod.status.as_ref();
    let containers = spec.map(|s| s.containers.as_slice()).unwrap_or_default();
    let statuses = status
        .and_then(|s| s.container_statuses.as_deref())
        .unwrap_or_default();
    let phase = status.and_then(|s| s.phase.clone());
    let mut r = resource(
        ResourceId::Pod {
            cluster: cluster.to_owned(),
            namespace: ns.to_owned(),
            name: name.to_owned(),
        },
        name,
        namespace_id(cluster, ns),
        phase.unwrap_or_else(|| "Unknown".to_owned()),
    );
    let restarts: i64 = statuses.iter().map(|s| i64::from(s.restart_count)).sum();
    let ready = statuses.iter().filter(|s| s.ready).count();
    let details = &mut r.facts.details;
    details.insert("restarts".to_owned(), restarts.to_string());
    details.insert("ready".to_owned(), format!("{ready}/{}", containers.len()));
    let names: Vec<&str> = containers.iter().map(|c| c.name.as_str()).collect();
    details.insert("containers".to_owned(), names.join(","));
    if let Some(node) = spec.and_then(|s| s.node_name.as_ref()) {
        details.insert("node".to_owned(), node.clone());
    }
    let waiting: Vec<String> = statuses
        .iter()
        .filter_map(|s| {
            let reason = s.state.as_ref()?.waiting.as_ref()?.reason.as_ref()?;
            Some(format!("{}: {reason}", s.name))
        })
        .collect();
    if !waiting.is_empty() {
        details.insert("waiting".to_owned(), waiting.join(", "));
    }
    if pod.metadata.deletion_timestamp.is_some() {
        details.insert("terminating".to_owned(), "true".to_owned());
    }
    let mut ips: BTreeSet<String> = status
        .and_then(|s| s.pod_ips.as_ref())
        .into_iter()
        .flatten()
        .map(|ip| ip.ip.clone())
        .collect();
    ips.extend(status.and_then(|s| s.pod_ip.clone()));
    r.facts.ips = ips.into_iter().collect();
    r.facts.ports = containers
        .iter()
        .flat_map(|c| c.ports.iter().flatten())
        .map(|p| {
            let proto = p.protocol.as_deref().unwrap_or("TCP").to_ascii_lowercase();
            format!("{}/{proto}", p.container_port)
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    r.facts.labels = pod.metadata.labels.clone().unwrap_or_default();
    if let Some(first) = containers.first() {
        r.facts.image = first.image.clone();
        if valid_name(&first.name) {
            r.paths.push(ExecPath {
                agent: agent.to_owned(),
                target: ExecTarget::Pod {
                    namespace: ns.to_owned(),
                    name: name.to_owned(),
                    container: first.name.clone(),
                },
                via: Via::Kubernetes,
            });
        }
    }
    r.aliases.extend(owner_alias(pod));
    Some(r)
}
