//! Identities and execution targets that both sides name the same way.

use std::fmt;
use std::str::FromStr;
use uuid::Uuid;

/// The URI SAN prefix of agent certificates.
pub const AGENT_URI_PREFIX: &str = "vigil://agent/";

/// An enrolled agent's identity: a UUID carried in its certificate as `vigil://agent/<uuid>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AgentId(pub Uuid);

impl AgentId {
    /// A fresh random identity.
    pub fn new_random() -> Self {
        AgentId(Uuid::new_v4())
    }

    /// The certificate URI SAN for this identity.
    pub fn uri(&self) -> String {
        format!("{AGENT_URI_PREFIX}{}", self.0)
    }

    /// Parse a `vigil://agent/<uuid>` URI.
    pub fn from_uri(uri: &str) -> Option<Self> {
        uri.strip_prefix(AGENT_URI_PREFIX)
            .and_then(|id| Uuid::parse_str(id).ok())
            .map(AgentId)
    }
}

impl fmt::Display for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl FromStr for AgentId {
    type Err = uuid::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Uuid::parse_str(s).map(AgentId)
    }
}

/// Where a command runs, in the canonical form that grants sign.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ExecTarget {
    /// The agent's own host.
    Host,
    /// A Proxmox LXC container (`pct exec`).
    Lxc(u32),
    /// A Proxmox VM (`qm guest exec`).
    Vm(u32),
    /// A Docker container by id or name.
    Docker(String),
    /// A Docker container inside a Proxmox LXC, reached through `pct exec VMID -- docker
    /// exec`: canonical form `lxc:141/docker:homepage`.
    LxcDocker { vmid: u32, container: String },
    /// A container of a Kubernetes pod (empty container = the pod's default).
    Pod {
        namespace: String,
        name: String,
        container: String,
    },
}

impl fmt::Display for ExecTarget {
    /// `host`, `lxc:141`, `vm:203`, `docker:homepage`, `pod:media/jellyfin-0/server`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExecTarget::Host => f.write_str("host"),
            ExecTarget::Lxc(id) => write!(f, "lxc:{id}"),
            ExecTarget::Vm(id) => write!(f, "vm:{id}"),
            ExecTarget::Docker(c) => write!(f, "docker:{c}"),
            ExecTarget::LxcDocker { vmid, container } => write!(f, "lxc:{vmid}/docker:{container}"),
            ExecTarget::Pod {
                namespace,
                name,
                container,
            } => write!(f, "pod:{namespace}/{name}/{container}"),
        }
    }
}

impl FromStr for ExecTarget {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || {
            format!(
                "invalid target {s:?} (expected host, lxc:ID, vm:ID, docker:NAME, lxc:ID/docker:NAME or pod:NS/NAME[/CONTAINER])"
            )
        };
        if s == "host" {
            return Ok(ExecTarget::Host);
        }
        let (kind, rest) = s.split_once(':').ok_or_else(bad)?;
        if let ("lxc", Some((vmid, container))) = (kind, rest.split_once("/docker:")) {
            let vmid = vmid.parse().map_err(|_| bad())?;
            if container.is_empty() || container.contains('/') {
                return Err(bad());
            }
            return Ok(ExecTarget::LxcDocker {
                vmid,
                container: container.to_owned(),
            });
        }
        match kind {
            "lxc" => rest.parse().map(ExecTarget::Lxc).map_err(|_| bad()),
            "vm" => rest.parse().map(ExecTarget::Vm).map_err(|_| bad()),
            "docker" if !rest.is_empty() => Ok(ExecTarget::Docker(rest.to_owned())),
            "pod" => {
                let mut parts = rest.splitn(3, '/');
                let namespace = parts.next().filter(|p| !p.is_empty()).ok_or_else(bad)?;
                let name = parts.next().filter(|p| !p.is_empty()).ok_or_else(bad)?;
                let container = parts.next().unwrap_or("");
                Ok(ExecTarget::Pod {
                    namespace: namespace.into(),
                    name: name.into(),
                    container: container.into(),
                })
            }
            _ => Err(bad()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_uri_round_trips() {
        let id = AgentId::new_random();
        assert_eq!(AgentId::from_uri(&id.uri()), Some(id));
        assert_eq!(AgentId::from_uri("vigil://agent/not-a-uuid"), None);
        assert_eq!(AgentId::from_uri("spiffe://agent/x"), None);
    }

    #[test]
    fn targets_round_trip() {
        for t in [
            "host",
            "lxc:141",
            "vm:203",
            "docker:homepage",
            "lxc:141/docker:homepage",
            "pod:media/jellyfin-0/server",
            "pod:media/jellyfin-0/",
        ] {
            assert_eq!(t.parse::<ExecTarget>().expect(t).to_string(), t);
        }
        for bad in [
            "",
            "lxc:x",
            "pod:a",
            "docker:",
            "ssh:host",
            "lxc:141/docker:",
            "lxc:x/docker:a",
            "lxc:1/docker:a/b",
        ] {
            assert!(bad.parse::<ExecTarget>().is_err(), "{bad}");
        }
    }
}
