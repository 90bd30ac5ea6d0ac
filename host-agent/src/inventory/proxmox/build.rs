//! Pure construction of the resources a Proxmox scan reports (docs/inventory.md), from
//! what [`super::parse`] read: the node, its LXCs and VMs, and Docker containers inside
//! LXCs. Nothing here starts a process.

use super::parse::{DockerEntry, GuestConfig, GuestEntry, NodeEntry};
use crate::inventory::{ScanError, SourceCtx};
use std::collections::{BTreeMap, BTreeSet};
use tracing::warn;
use vigil_shared::ids::ExecTarget;
use vigil_shared::resource::{ExecPath, Facts, Resource, ResourceId, ResourceKind, Via};

/// Whether a name can be a part of a resource id (no `:`, white space or control
/// characters; no `/` either, as node names also go into `pvesh` paths).
pub fn valid_part(name: &str) -> bool {
    !name.is_empty()
        && !name
            .chars()
            .any(|c| c == ':' || c == '/' || c.is_whitespace() || c.is_control())
}

/// A name made fit to be an id part: every unfit character becomes `-`.
pub fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c == ':' || c == '/' || c.is_whitespace() || c.is_control() {
                '-'
            } else {
                c
            }
        })
        .collect()
}

/// The node this agent runs on: the one named like the host (or its short name), else the
/// only one. Nodes whose names cannot be id parts are skipped with a warning.
pub fn pick_node<'a>(nodes: &'a [NodeEntry], hostname: &str) -> Result<&'a NodeEntry, ScanError> {
    let usable: Vec<&NodeEntry> = nodes
        .iter()
        .filter(|n| {
            let ok = valid_part(&n.name);
            if !ok {
                warn!(node = %n.name, "skipping a Proxmox node whose name cannot be part of an id");
            }
            ok
        })
        .collect();
    let short = hostname.split('.').next().unwrap_or(hostname);
    let matches = |n: &&&NodeEntry| {
        n.name.eq_ignore_ascii_case(hostname) || n.name.eq_ignore_ascii_case(short)
    };
    if let Some(node) = usable.iter().find(matches) {
        return Ok(node);
    }
    match usable.as_slice() {
        [only] => Ok(only),
        [] => Err(ScanError::Unusable("pvesh lists no usable node".to_owned())),
        many => Err(ScanError::Unusable(format!(
            "none of the Proxmox nodes ({}) is this machine ({hostname})",
            many.iter()
                .map(|n| n.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Keep each alias once, in order, without the name itself.
fn distinct(aliases: &mut Vec<String>, name: &str) {
    let mut seen = BTreeSet::new();
    aliases.retain(|a| a != name && seen.insert(a.clone()));
}

fn put(details: &mut BTreeMap<String, String>, key: &str, value: Option<String>) {
    if let Some(value) = value.filter(|v| !v.is_empty()) {
        details.insert(key.to_owned(), value);
    }
}

/// `node:<name>`, reached directly by this agent. `boot_time` is in Unix seconds.
pub fn node_resource(ctx: &SourceCtx, node: &NodeEntry, boot_time: Option<u64>) -> Resource {
    let mut details = BTreeMap::new();
    put(&mut details, "cpus", node.maxcpu.map(|n| n.to_string()));
    put(
        &mut details,
        "memory_bytes",
        node.maxmem.map(|n| n.to_string()),
    );
    put(&mut details, "boot_time", boot_time.map(|n| n.to_string()));
    Resource {
        id: ResourceId::Node(node.name.clone()),
        kind: ResourceKind::Node,
        name: node.name.clone(),
        aliases: Vec::new(),
        parent: None,
        status: node.status.clone(),
        paths: vec![ExecPath {
            agent: ctx.agent_id.clone(),
            target: ExecTarget::Host,
            via: Via::Direct,
        }],
        facts: Facts {
            details,
            ..Facts::default()
        },
    }
}

/// An LXC or a VM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuestKind {
    Lxc,
    Vm,
}

/// `lxc:<node>:<vmid>` or `vm:<node>:<vmid>` under `node:<node>`. Without its config
/// (`pct config` failed) the guest is still reported, with what the list says.
pub fn guest_resource(
    ctx: &SourceCtx,
    node: &str,
    kind: GuestKind,
    guest: &GuestEntry,
    config: Option<&GuestConfig>,
    boot_time: Option<u64>,
) -> Resource {
    let vmid = guest.vmid;
    let config = config.cloned().unwrap_or_default();
    let (id, resource_kind, prefix, conf_dir) = match kind {
        GuestKind::Lxc => (
            ResourceId::Lxc {
                node: node.to_owned(),
                vmid,
            },
            ResourceKind::Lxc,
            "CT",
            "lxc",
        ),
        GuestKind::Vm => (
            ResourceId::Vm {
                node: node.to_owned(),
                vmid,
            },
            ResourceKind::Vm,
            "VM",
            "qemu-server",
        ),
    };
    let name = guest
        .name
        .clone()
        .or_else(|| config.name.clone())
        .or_else(|| config.hostname.clone())
        .unwrap_or_else(|| format!("{prefix}{vmid}"));
    let mut aliases = vec![vmid.to_string(), format!("{prefix}{vmid}")];
    aliases.extend(config.hostname.clone());
    distinct(&mut aliases, &name);
    let path = match kind {
        GuestKind::Lxc => Some((ExecTarget::Lxc(vmid), Via::PctExec)),
        GuestKind::Vm if config.agent => Some((ExecTarget::Vm(vmid), Via::QmGuestExec)),
        GuestKind::Vm => None,
    };
    let mut details = BTreeMap::new();
    put(&mut details, "cpus", guest.cpus.clone());
    put(
        &mut details,
        "memory_bytes",
        guest.maxmem.map(|n| n.to_string()),
    );
    put(
        &mut details,
        "disk_bytes",
        guest.maxdisk.map(|n| n.to_string()),
    );
    put(&mut details, "tags", Some(guest.tags.join(";")));
    put(&mut details, "boot_time", boot_time.map(|n| n.to_string()));
    put(&mut details, "ostype", config.ostype.clone());
    put(&mut details, "features", config.features.clone());
    put(
        &mut details,
        "template",
        guest.template.then(|| "1".to_owned()),
    );
    if kind == GuestKind::Vm {
        put(
            &mut details,
            "guest_agent",
            Some(u8::from(config.agent).to_string()),
        );
    }
    Resource {
        id,
        kind: resource_kind,
        name,
        aliases,
        parent: Some(ResourceId::Node(node.to_owned())),
        status: guest.status.clone(),
        paths: path
            .map(|(target, via)| ExecPath {
                agent: ctx.agent_id.clone(),
                target,
                via,
            })
            .into_iter()
            .collect(),
        facts: Facts {
            mounts: config.mounts,
            config_paths: vec![format!("/etc/pve/{conf_dir}/{vmid}.conf")],
            ips: config.ips,
            macs: config.macs,
            details,
            ..Facts::default()
        },
    }
}

/// The Docker host part of ids of containers inside an LXC: its `hostname` from `pct
/// config`, else its name, made fit to be an id part.
pub fn docker_host(guest: &GuestEntry, config: Option<&GuestConfig>) -> String {
    let name = config
        .and_then(|c| c.hostname.clone())
        .or_else(|| guest.name.clone())
        .unwrap_or_else(|| format!("CT{}", guest.vmid));
    sanitize(&name)
}

/// `docker_container:<docker-host>:<short-id>` under `lxc:<node>:<vmid>`, reached with
/// `pct exec <vmid> -- docker exec <short-id>`.
pub fn docker_resource(
    ctx: &SourceCtx,
    node: &str,
    vmid: u32,
    docker_host: &str,
    container: &DockerEntry,
) -> Resource {
    let short: String = container.id.chars().take(12).collect();
    let name = if container.name.is_empty() {
        short.clone()
    } else {
        container.name.clone()
    };
    let service = container.labels.get("com.docker.compose.service");
    let mut aliases = vec![short.clone()];
    aliases.extend(service.cloned());
    distinct(&mut aliases, &name);
    let status = container.status.to_ascii_lowercase();
    let health = ["unhealthy", "healthy", "health: starting"]
        .into_iter()
        .find(|h| status.contains(&format!("({h})")))
        .map(|h| h.trim_start_matches("health: ").to_owned());
    let mut details = BTreeMap::new();
    put(&mut details, "health", health);
    put(&mut details, "created", Some(container.created.clone()));
    put(&mut details, "networks", Some(container.networks.clone()));
    put(
        &mut details,
        "compose_project",
        container.labels.get("com.docker.compose.project").cloned(),
    );
    put(&mut details, "compose_service", service.cloned());
    Resource {
        id: ResourceId::DockerContainer {
            host: docker_host.to_owned(),
            id: short.clone(),
        },
        kind: ResourceKind::DockerContainer,
        name,
        aliases,
        parent: Some(ResourceId::Lxc {
            node: node.to_owned(),
            vmid,
        }),
        status: container.state.clone(),
        paths: vec![ExecPath {
            agent: ctx.agent_id.clone(),
            target: ExecTarget::LxcDocker {
                vmid,
                container: short,
            },
            via: Via::PctExec,
        }],
        facts: Facts {
            ports: container.ports.clone(),
            image: Some(container.image.clone()).filter(|i| !i.is_empty()),
            labels: container.labels.clone(),
            details,
            ..Facts::default()
        },
    }
}

#[cfg(test)]
#[path = "build_tests.rs"]
mod tests;
