//! Turning what the Docker engine lists into `docker_container` resources: ids, names,
//! aliases, status, the `docker:<short-id>` path and facts. Everything here is pure and
//! deterministic (sorted vectors, capped labels), so an unchanged container gives an
//! equal resource on every scan and the reporter sends nothing for it.

use bollard::models::{ContainerInspectResponse, ContainerSummary, EndpointSettings, MountPoint};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use tracing::debug;
use vigil_shared::ids::ExecTarget;
use vigil_shared::resource::{ExecPath, Facts, Mount, Resource, ResourceId, ResourceKind, Via};

/// Labels kept per container (the first ones in key order).
pub const MAX_LABELS: usize = 64;
/// Characters kept of a label value.
pub const MAX_LABEL_VALUE_CHARS: usize = 256;
/// Length of a short container id.
pub const SHORT_ID_LEN: usize = 12;

/// The compose service label: its value is an alias.
pub const COMPOSE_SERVICE: &str = "com.docker.compose.service";
/// The compose project label: its value is the `compose_project` detail.
pub const COMPOSE_PROJECT: &str = "com.docker.compose.project";

/// A Docker host name usable as an id part: `:`, white space and control characters
/// become `-`; `None` when nothing usable is left.
pub fn id_part(name: &str) -> Option<String> {
    let cleaned: String = name
        .trim()
        .chars()
        .map(|c| {
            if c == ':' || c.is_whitespace() || c.is_control() {
                '-'
            } else {
                c
            }
        })
        .collect();
    (!cleaned.is_empty() && cleaned.chars().any(|c| c != '-')).then_some(cleaned)
}

/// The first 12 characters of a container id, when they are hex digits.
pub fn short_id(id: &str) -> Option<String> {
    let short = id.get(..SHORT_ID_LEN)?;
    short
        .chars()
        .all(|c| c.is_ascii_hexdigit())
        .then(|| short.to_ascii_lowercase())
}

/// The container's name without the leading `/`: the inspected name when there is one,
/// else the listed name that is not a legacy link alias (`/other/alias`).
fn container_name(
    summary: &ContainerSummary,
    inspect: Option<&ContainerInspectResponse>,
) -> String {
    let from_inspect = inspect.and_then(|i| i.name.as_deref());
    let listed = summary.names.as_deref().unwrap_or_default();
    let best_listed = listed
        .iter()
        .min_by_key(|n| (n.trim_start_matches('/').matches('/').count(), n.len()))
        .map(String::as_str);
    from_inspect
        .or(best_listed)
        .unwrap_or_default()
        .trim_start_matches('/')
        .to_owned()
}

/// `8080->80/tcp` for a published port, `80/tcp` for one that is not; sorted, once each
/// (Docker lists a port once per host address).
pub fn ports(summary: &ContainerSummary) -> Vec<String> {
    summary
        .ports
        .iter()
        .flatten()
        .map(|p| {
            let proto = p
                .typ
                .as_ref()
                .map(ToString::to_string)
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| "tcp".to_owned());
            match p.public_port.filter(|port| *port != 0) {
                Some(public) => format!("{public}->{}/{proto}", p.private_port),
                None => format!("{}/{proto}", p.private_port),
            }
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// Bind mounts and volumes (a volume's host path is its `Source`), sorted by path.
pub fn mounts(list: &[MountPoint]) -> Vec<Mount> {
    let mut mounts: Vec<Mount> = list
        .iter()
        .filter(|m| matches!(m.typ.as_deref(), Some("bind" | "volume")))
        .filter_map(|m| {
            Some(Mount {
                host_path: m.source.clone().filter(|s| !s.is_empty())?,
                path: m.destination.clone().filter(|d| !d.is_empty())?,
                read_only: !m.rw.unwrap_or(true),
            })
        })
        .collect();
    mounts.sort_by(|a, b| (&a.path, &a.host_path).cmp(&(&b.path, &b.host_path)));
    mounts.dedup();
    mounts
}

/// The container's addresses on all its networks, sorted, once each.
pub fn ips(networks: Option<&HashMap<String, EndpointSettings>>) -> Vec<String> {
    networks
        .into_iter()
        .flat_map(HashMap::values)
        .flat_map(|n| [n.ip_address.as_deref(), n.global_ipv6_address.as_deref()])
        .flatten()
        .filter(|ip| !ip.is_empty())
        .map(str::to_owned)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// At most [`MAX_LABELS`] labels (in key order), values cut to
/// [`MAX_LABEL_VALUE_CHARS`] characters.
pub fn labels(all: Option<&HashMap<String, String>>) -> BTreeMap<String, String> {
    let sorted: BTreeMap<&String, &String> = all.into_iter().flatten().collect();
    if sorted.len() > MAX_LABELS {
        debug!(
            labels = sorted.len(),
            kept = MAX_LABELS,
            "container labels capped"
        );
    }
    sorted
        .into_iter()
        .take(MAX_LABELS)
        .map(|(k, v)| (k.clone(), v.chars().take(MAX_LABEL_VALUE_CHARS).collect()))
        .collect()
}

/// The resource for one listed container (with its inspection when that worked).
/// `None` (logged) when the engine gave no usable id.
pub fn container_resource(
    agent_id: &str,
    docker_host: &str,
    summary: &ContainerSummary,
    inspect: Option<&ContainerInspectResponse>,
) -> Option<Resource> {
    let Some(short) = summary.id.as_deref().and_then(short_id) else {
        debug!(id = ?summary.id, "container without a usable id skipped");
        return None;
    };
    let name = container_name(summary, inspect);
    let all_labels = summary
        .labels
        .as_ref()
        .or_else(|| inspect.and_then(|i| i.config.as_ref()?.labels.as_ref()));
    let label = |key: &str| {
        all_labels
            .and_then(|l| l.get(key))
            .filter(|v| !v.trim().is_empty())
            .cloned()
    };
    let mut aliases = vec![short.clone()];
    if let Some(service) = label(COMPOSE_SERVICE)
        && !aliases.contains(&service)
    {
        aliases.push(service);
    }
    let state = inspect.and_then(|i| i.state.as_ref());
    let status = summary
        .state
        .as_ref()
        .map(ToString::to_string)
        .or_else(|| {
            state
                .and_then(|s| s.status.as_ref())
                .map(ToString::to_string)
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_owned());

    let mut details = BTreeMap::new();
    if let Some(health) = state
        .and_then(|s| s.health.as_ref()?.status.as_ref())
        .map(ToString::to_string)
        .filter(|h| !h.is_empty())
    {
        details.insert("health".to_owned(), health);
    }
    if let Some(project) = label(COMPOSE_PROJECT) {
        details.insert("compose_project".to_owned(), project);
    }
    if let Some(created) = summary.created {
        details.insert("created".to_owned(), crate::state::format_time(created));
    }
    if let Some(restarts) = inspect.and_then(|i| i.restart_count) {
        details.insert("restart_count".to_owned(), restarts.to_string());
    }

    let listed_mounts = summary
        .mounts
        .as_deref()
        .or_else(|| inspect.and_then(|i| i.mounts.as_deref()))
        .unwrap_or_default();
    let networks = summary
        .network_settings
        .as_ref()
        .and_then(|n| n.networks.as_ref())
        .or_else(|| inspect.and_then(|i| i.network_settings.as_ref()?.networks.as_ref()));
    Some(Resource {
        id: ResourceId::DockerContainer {
            host: docker_host.to_owned(),
            id: short.clone(),
        },
        kind: ResourceKind::DockerContainer,
        name,
        aliases,
        parent: Some(ResourceId::Host(agent_id.to_owned())),
        status,
        paths: vec![ExecPath {
            agent: agent_id.to_owned(),
            target: ExecTarget::Docker(short),
            via: Via::Docker,
        }],
        facts: Facts {
            image: summary.image.clone().filter(|i| !i.is_empty()),
            ports: ports(summary),
            mounts: mounts(listed_mounts),
            ips: ips(networks),
            labels: labels(all_labels),
            details,
            ..Facts::default()
        },
    })
}

#[cfg(test)]
#[path = "resource_tests.rs"]
mod tests;
