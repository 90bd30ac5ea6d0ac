//! The resource model the inventory is built from: canonical resource ids that parse and
//! print the same way (`node:delly`, `lxc:delly:141`, `docker_container:web01:3f2a…`), and
//! resources with their parent, the execution paths that reach them and a few facts.

use crate::ids::ExecTarget;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// What kind of thing a resource is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResourceKind {
    Node,
    Host,
    Lxc,
    Vm,
    DockerContainer,
    Pod,
    /// A Kubernetes cluster.
    Cluster,
    /// A Kubernetes namespace.
    Namespace,
    /// A Kubernetes node.
    KubeNode,
    /// A Kubernetes deployment.
    Deployment,
}

impl ResourceKind {
    /// Every kind, in id order.
    pub const ALL: [ResourceKind; 10] = [
        ResourceKind::Node,
        ResourceKind::Host,
        ResourceKind::Lxc,
        ResourceKind::Vm,
        ResourceKind::DockerContainer,
        ResourceKind::Pod,
        ResourceKind::Cluster,
        ResourceKind::Namespace,
        ResourceKind::KubeNode,
        ResourceKind::Deployment,
    ];

    /// The id prefix and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ResourceKind::Node => "node",
            ResourceKind::Host => "host",
            ResourceKind::Lxc => "lxc",
            ResourceKind::Vm => "vm",
            ResourceKind::DockerContainer => "docker_container",
            ResourceKind::Pod => "pod",
            ResourceKind::Cluster => "cluster",
            ResourceKind::Namespace => "namespace",
            ResourceKind::KubeNode => "kube_node",
            ResourceKind::Deployment => "deployment",
        }
    }
}

impl FromStr for ResourceKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ResourceKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| format!("unknown resource kind {s:?}"))
    }
}

/// A canonical resource id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ResourceId {
    /// A Proxmox node: `node:<name>`.
    Node(String),
    /// An agent's own host: `host:<agent>`.
    Host(String),
    /// An LXC container: `lxc:<node>:<vmid>`.
    Lxc { node: String, vmid: u32 },
    /// A virtual machine: `vm:<node>:<vmid>`.
    Vm { node: String, vmid: u32 },
    /// A Docker container: `docker_container:<host>:<id>`.
    DockerContainer { host: String, id: String },
    /// A Kubernetes pod: `pod:<cluster>:<namespace>:<name>`.
    Pod {
        cluster: String,
        namespace: String,
        name: String,
    },
    /// A Kubernetes cluster: `cluster:<name>`.
    Cluster(String),
    /// A Kubernetes namespace: `namespace:<cluster>:<namespace>`.
    Namespace { cluster: String, namespace: String },
    /// A Kubernetes node: `kube_node:<cluster>:<name>`.
    KubeNode { cluster: String, name: String },
    /// A Kubernetes deployment: `deployment:<cluster>:<namespace>:<name>`.
    Deployment {
        cluster: String,
        namespace: String,
        name: String,
    },
}

/// Why a string is not a resource id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid resource id {input:?}: {why}")]
pub struct ResourceIdError {
    pub input: String,
    pub why: &'static str,
}

impl ResourceId {
    /// The kind of resource this id names.
    pub fn kind(&self) -> ResourceKind {
        match self {
            ResourceId::Node(_) => ResourceKind::Node,
            ResourceId::Host(_) => ResourceKind::Host,
            ResourceId::Lxc { .. } => ResourceKind::Lxc,
            ResourceId::Vm { .. } => ResourceKind::Vm,
            ResourceId::DockerContainer { .. } => ResourceKind::DockerContainer,
            ResourceId::Pod { .. } => ResourceKind::Pod,
            ResourceId::Cluster(_) => ResourceKind::Cluster,
            ResourceId::Namespace { .. } => ResourceKind::Namespace,
            ResourceId::KubeNode { .. } => ResourceKind::KubeNode,
            ResourceId::Deployment { .. } => ResourceKind::Deployment,
        }
    }
}

impl fmt::Display for ResourceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = self.kind().as_str();
        match self {
            ResourceId::Node(n) | ResourceId::Host(n) | ResourceId::Cluster(n) => {
                write!(f, "{kind}:{n}")
            }
            ResourceId::Lxc { node, vmid } | ResourceId::Vm { node, vmid } => {
                write!(f, "{kind}:{node}:{vmid}")
            }
            ResourceId::DockerContainer { host, id } => write!(f, "{kind}:{host}:{id}"),
            ResourceId::Namespace { cluster, namespace } => {
                write!(f, "{kind}:{cluster}:{namespace}")
            }
            ResourceId::KubeNode { cluster, name } => write!(f, "{kind}:{cluster}:{name}"),
            ResourceId::Pod {
                cluster,
                namespace,
                name,
            }
            | ResourceId::Deployment {
                cluster,
                namespace,
                name,
            } => write!(f, "{kind}:{cluster}:{namespace}:{name}"),
        }
    }
}

/// A component of an id: non-empty, no `:`, no whitespace or control characters.
fn component<'a>(input: &str, part: Option<&'a str>) -> Result<&'a str, ResourceIdError> {
    let err = |why| ResourceIdError {
        input: input.to_owned(),
        why,
    };
    let part = part.ok_or_else(|| err("missing a part"))?;
    if part.is_empty() {
        return Err(err("empty part"));
    }
    if part
        .chars()
        .any(|c| c == ':' || c.is_whitespace() || c.is_control())
    {
        return Err(err(
            "a part contains ':', white space or a control character",
        ));
    }
    Ok(part)
}

impl FromStr for ResourceId {
    type Err = ResourceIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |why| ResourceIdError {
            input: s.to_owned(),
            why,
        };
        let (kind, rest) = s.split_once(':').ok_or_else(|| err("no kind prefix"))?;
        let parts: Vec<&str> = rest.split(':').collect();
        let expect = |n: usize| {
            if parts.len() == n {
                Ok(())
            } else {
                Err(err("wrong number of parts"))
            }
        };
        let vmid = |p: &str| {
            let canonical =
                p.bytes().all(|b| b.is_ascii_digit()) && (p == "0" || !p.starts_with('0'));
            p.parse::<u32>()
                .ok()
                .filter(|_| canonical)
                .ok_or_else(|| err("vmid is not a number in canonical form"))
        };
        let part = |i: usize| component(s, parts.get(i).copied()).map(str::to_owned);
        Ok(match kind {
            "node" => {
                expect(1)?;
                ResourceId::Node(part(0)?)
            }
            "host" => {
                expect(1)?;
                ResourceId::Host(part(0)?)
            }
            "lxc" | "vm" => {
                expect(2)?;
                let node = part(0)?;
                let vmid = vmid(&part(1)?)?;
                if kind == "lxc" {
                    ResourceId::Lxc { node, vmid }
                } else {
                    ResourceId::Vm { node, vmid }
                }
            }
            "docker_container" => {
                expect(2)?;
                ResourceId::DockerContainer {
                    host: part(0)?,
                    id: part(1)?,
                }
            }
            "pod" => {
                expect(3)?;
                ResourceId::Pod {
                    cluster: part(0)?,
                    namespace: part(1)?,
                    name: part(2)?,
                }
            }
            "cluster" => {
                expect(1)?;
                ResourceId::Cluster(part(0)?)
            }
            "namespace" => {
                expect(2)?;
                ResourceId::Namespace {
                    cluster: part(0)?,
                    namespace: part(1)?,
                }
            }
            "kube_node" => {
                expect(2)?;
                ResourceId::KubeNode {
                    cluster: part(0)?,
                    name: part(1)?,
                }
            }
            "deployment" => {
                expect(3)?;
                ResourceId::Deployment {
                    cluster: part(0)?,
                    namespace: part(1)?,
                    name: part(2)?,
                }
            }
            _ => return Err(err("unknown kind")),
        })
    }
}

impl Serialize for ResourceId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ResourceId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// How an execution path reaches a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    /// An agent running inside the resource itself.
    Direct,
    /// The Proxmox node's agent with `pct exec`.
    PctExec,
    /// The Proxmox node's agent with `qm guest exec`.
    QmGuestExec,
    /// The Docker host's agent through the Docker engine.
    Docker,
    /// An agent with Kubernetes access through the API's exec.
    Kubernetes,
}

impl Via {
    /// Every kind of path.
    pub const ALL: [Via; 5] = [
        Via::Direct,
        Via::PctExec,
        Via::QmGuestExec,
        Via::Docker,
        Via::Kubernetes,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Direct => "direct",
            Via::PctExec => "pct_exec",
            Via::QmGuestExec => "qm_guest_exec",
            Via::Docker => "docker",
            Via::Kubernetes => "kubernetes",
        }
    }
}

impl FromStr for Via {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Via::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| format!("unknown path kind {s:?}"))
    }
}

/// One way to run a command in a resource: which agent, with which target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecPath {
    /// The agent that runs the command.
    pub agent: String,
    /// The target in that agent's `ExecRequest`.
    #[serde(with = "target_text")]
    pub target: ExecTarget,
    /// How the agent reaches the resource.
    pub via: Via,
}

mod target_text {
    use crate::ids::ExecTarget;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(t: &ExecTarget, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(t)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ExecTarget, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// A bind mount: where it is on the host and where it appears inside.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mount {
    pub host_path: String,
    pub path: String,
    pub read_only: bool,
}

/// Facts the assistant uses to resolve and route.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Facts {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mounts: Vec<Mount>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config_paths: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ips: Vec<String>,
    /// MAC addresses of its network interfaces (lower case): how the controller matches
    /// an agent's host to the Proxmox guest it runs in.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub macs: Vec<String>,
    /// Labels (Docker labels, Kubernetes labels).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Everything else a source knows, as short text: `cpus`, `memory_bytes`, `health`,
    /// `restarts`, `compose_project`, `warning_events`, …
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub details: BTreeMap<String, String>,
}

/// A resource in the inventory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resource {
    pub id: ResourceId,
    pub kind: ResourceKind,
    pub name: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    pub parent: Option<ResourceId>,
    pub status: String,
    /// Ways to run a command in it, the preferred one first.
    #[serde(default)]
    pub paths: Vec<ExecPath>,
    #[serde(default)]
    pub facts: Facts,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip() {
        for text in [
            "node:delly",
            "host:8c1f0d2e-web01",
            "lxc:delly:141",
            "vm:delly:203",
            "docker_container:web01:3f2a9c",
            "pod:homelab:media:jellyfin-0",
            "cluster:homelab",
            "namespace:homelab:media",
            "kube_node:homelab:k3s-1",
            "deployment:homelab:media:jellyfin",
        ] {
            let id: ResourceId = text.parse().unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(id.to_string(), text);
            assert_eq!(
                id.kind().as_str(),
                text.split(':').next().unwrap_or_default()
            );
            let json = serde_json::to_string(&id).expect("json");
            assert_eq!(serde_json::from_str::<ResourceId>(&json).expect("back"), id);
        }
    }

    #[test]
    fn kinds_and_paths_round_trip_through_their_names() {
        for kind in ResourceKind::ALL {
            assert_eq!(kind.as_str().parse::<ResourceKind>(), Ok(kind));
        }
        for via in Via::ALL {
            assert_eq!(via.as_str().parse::<Via>(), Ok(via));
        }
        assert!("ship".parse::<ResourceKind>().is_err());
        assert!("ssh".parse::<Via>().is_err());
    }

    #[test]
    fn bad_ids_are_refused_with_a_reason() {
        for bad in [
            "",
            "delly",
            "node:",
            "node:a:b",
            "lxc:delly",
            "lxc:delly:x",
            "vm::1",
            "pod:a:b",
            "docker_container:h",
            "node:a b",
            "ship:x",
            "lxc:delly:141:1",
            "lxc:delly:+141",
            "vm:delly:0141",
            "namespace:homelab",
            "deployment:a:b",
            "cluster:a:b",
        ] {
            let e = bad.parse::<ResourceId>().expect_err(bad);
            assert!(!e.why.is_empty());
        }
    }

    #[test]
    fn resources_serialize_with_paths_and_facts() {
        let r = Resource {
            id: "docker_container:lxc141:homepage".parse().expect("id"),
            kind: ResourceKind::DockerContainer,
            name: "homepage".into(),
            aliases: vec!["dashboard".into()],
            parent: Some("lxc:delly:141".parse().expect("id")),
            status: "running".into(),
            paths: vec![ExecPath {
                agent: "a1".into(),
                target: ExecTarget::Docker("homepage".into()),
                via: Via::Docker,
            }],
            facts: Facts {
                ports: vec!["3000/tcp".into()],
                ..Facts::default()
            },
        };
        let json = serde_json::to_value(&r).expect("json");
        assert_eq!(json["parent"], "lxc:delly:141");
        assert_eq!(json["paths"][0]["target"], "docker:homepage");
        assert_eq!(json["paths"][0]["via"], "docker");
        assert_eq!(serde_json::from_value::<Resource>(json).expect("back"), r);
    }
}
