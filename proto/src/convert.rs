//! Conversions between the wire types of the agent link and the domain types of
//! `vigil-shared` (targets, grants and inventory resources). The controller and the agent both convert at their
//! edges, so the conversions live here, once.

use crate::agent::v1 as proto;
use crate::agent::v1::{
    DockerTarget, Grant, HostTarget, LxcTarget, PodTarget, Target, VmTarget, target,
};
use vigil_shared::grant::GrantBody;
use vigil_shared::ids::{AgentId, ExecTarget};
use vigil_shared::resource::{ExecPath, Facts, Mount, Resource, ResourceId, ResourceKind};

/// The domain target of a wire target; `Err` says why it is not a valid target.
pub fn target_from_proto(target: Option<&Target>) -> Result<ExecTarget, String> {
    let kind = target
        .and_then(|t| t.kind.as_ref())
        .ok_or("the request names no target")?;
    Ok(match kind {
        target::Kind::Host(HostTarget {}) => ExecTarget::Host,
        target::Kind::Lxc(LxcTarget { vmid }) => ExecTarget::Lxc(*vmid),
        target::Kind::Vm(VmTarget { vmid }) => ExecTarget::Vm(*vmid),
        target::Kind::Docker(DockerTarget {
            container,
            lxc_vmid,
        }) if !container.is_empty() => match lxc_vmid {
            0 => ExecTarget::Docker(container.clone()),
            vmid => ExecTarget::LxcDocker {
                vmid: *vmid,
                container: container.clone(),
            },
        },
        target::Kind::Docker(_) => return Err("docker target without a container".into()),
        target::Kind::Pod(PodTarget {
            namespace,
            name,
            container,
        }) if !namespace.is_empty() && !name.is_empty() => ExecTarget::Pod {
            namespace: namespace.clone(),
            name: name.clone(),
            container: container.clone(),
        },
        target::Kind::Pod(_) => return Err("pod target without namespace or name".into()),
    })
}

/// The wire target of a domain target.
pub fn target_to_proto(target: &ExecTarget) -> Target {
    let kind = match target {
        ExecTarget::Host => target::Kind::Host(HostTarget {}),
        ExecTarget::Lxc(vmid) => target::Kind::Lxc(LxcTarget { vmid: *vmid }),
        ExecTarget::Vm(vmid) => target::Kind::Vm(VmTarget { vmid: *vmid }),
        ExecTarget::Docker(container) => target::Kind::Docker(DockerTarget {
            container: container.clone(),
            lxc_vmid: 0,
        }),
        ExecTarget::LxcDocker { vmid, container } => target::Kind::Docker(DockerTarget {
            container: container.clone(),
            lxc_vmid: *vmid,
        }),
        ExecTarget::Pod {
            namespace,
            name,
            container,
        } => target::Kind::Pod(PodTarget {
            namespace: namespace.clone(),
            name: name.clone(),
            container: container.clone(),
        }),
    };
    Target { kind: Some(kind) }
}

/// The signed body of a wire grant, and its signature.
pub fn grant_from_proto(grant: &Grant) -> Result<(GrantBody, &[u8]), String> {
    let agent_id: AgentId = grant
        .agent_id
        .parse()
        .map_err(|_| format!("grant names an invalid agent id {:?}", grant.agent_id))?;
    let target = target_from_proto(grant.target.as_ref()).map_err(|e| format!("grant: {e}"))?;
    let body = GrantBody {
        approval_id: grant.approval_id.clone(),
        agent_id,
        target,
        command: grant.command.clone(),
        issued_at: grant.issued_at_unix,
        expires_at: grant.expires_at_unix,
        nonce: grant.nonce.clone(),
    };
    Ok((body, &grant.signature))
}

/// The wire grant for a signed body (the controller's direction; used by tests).
pub fn grant_to_proto(body: &GrantBody, signature: &[u8]) -> Grant {
    Grant {
        approval_id: body.approval_id.clone(),
        agent_id: body.agent_id.to_string(),
        target: Some(target_to_proto(&body.target)),
        command: body.command.clone(),
        issued_at_unix: body.issued_at,
        expires_at_unix: body.expires_at,
        nonce: body.nonce.clone(),
        signature: signature.to_vec(),
    }
}

/// The wire form of a resource an agent reports; only the paths of `agent` are kept (the
/// agent reports its own paths, the sender is implied).
pub fn resource_to_proto(r: &Resource, agent: &str) -> proto::Resource {
    proto::Resource {
        id: r.id.to_string(),
        kind: r.kind.as_str().to_owned(),
        name: r.name.clone(),
        aliases: r.aliases.clone(),
        parent: r
            .parent
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default(),
        status: r.status.clone(),
        paths: r
            .paths
            .iter()
            .filter(|p| p.agent == agent)
            .map(|p| proto::ResourcePath {
                target: Some(target_to_proto(&p.target)),
                via: p.via.as_str().to_owned(),
            })
            .collect(),
        facts: Some(proto::ResourceFacts {
            ports: r.facts.ports.clone(),
            mounts: r
                .facts
                .mounts
                .iter()
                .map(|m| proto::Mount {
                    host_path: m.host_path.clone(),
                    path: m.path.clone(),
                    read_only: m.read_only,
                })
                .collect(),
            config_paths: r.facts.config_paths.clone(),
            image: r.facts.image.clone().unwrap_or_default(),
            ips: r.facts.ips.clone(),
            macs: r.facts.macs.clone(),
            labels: r.facts.labels.clone().into_iter().collect(),
            details: r.facts.details.clone().into_iter().collect(),
        }),
    }
}

/// The domain resource of a wire resource reported by `agent`; `Err` says what is wrong.
pub fn resource_from_proto(r: &proto::Resource, agent: &str) -> Result<Resource, String> {
    let id: ResourceId = r.id.parse().map_err(|e| format!("{e}"))?;
    let kind: ResourceKind = r.kind.parse()?;
    if kind != id.kind() {
        return Err(format!("resource {} says it is a {}", r.id, r.kind));
    }
    let parent = match r.parent.as_str() {
        "" => None,
        p => Some(
            p.parse::<ResourceId>()
                .map_err(|e| format!("parent: {e}"))?,
        ),
    };
    let paths = r
        .paths
        .iter()
        .map(|p| {
            Ok(ExecPath {
                agent: agent.to_owned(),
                target: target_from_proto(p.target.as_ref())?,
                via: p.via.parse()?,
            })
        })
        .collect::<Result<Vec<_>, String>>()
        .map_err(|e| format!("resource {}: {e}", r.id))?;
    let facts = r.facts.clone().unwrap_or_default();
    Ok(Resource {
        id,
        kind,
        name: r.name.clone(),
        aliases: r.aliases.clone(),
        parent,
        status: r.status.clone(),
        paths,
        facts: Facts {
            ports: facts.ports,
            mounts: facts
                .mounts
                .into_iter()
                .map(|m| Mount {
                    host_path: m.host_path,
                    path: m.path,
                    read_only: m.read_only,
                })
                .collect(),
            config_paths: facts.config_paths,
            image: Some(facts.image).filter(|i| !i.is_empty()),
            ips: facts.ips,
            macs: facts.macs,
            labels: facts.labels.into_iter().collect(),
            details: facts.details.into_iter().collect(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_round_trip_through_the_wire() {
        for text in [
            "host",
            "lxc:141",
            "vm:203",
            "docker:web",
            "lxc:141/docker:web",
            "pod:ns/web-0/app",
        ] {
            let t: ExecTarget = text.parse().unwrap();
            assert_eq!(target_from_proto(Some(&target_to_proto(&t))), Ok(t));
        }
    }

    #[test]
    fn incomplete_targets_are_refused() {
        assert!(target_from_proto(None).is_err());
        assert!(target_from_proto(Some(&Target { kind: None })).is_err());
        let docker = Target {
            kind: Some(target::Kind::Docker(DockerTarget::default())),
        };
        assert!(target_from_proto(Some(&docker)).is_err());
        let pod = Target {
            kind: Some(target::Kind::Pod(PodTarget::default())),
        };
        assert!(target_from_proto(Some(&pod)).is_err());
    }

    #[test]
    fn resources_round_trip_through_the_wire() {
        let r = Resource {
            id: "docker_container:media:3f2a9c0b1d2e".parse().unwrap(),
            kind: ResourceKind::DockerContainer,
            name: "homepage".into(),
            aliases: vec!["3f2a9c0b1d2e".into()],
            parent: Some("lxc:delly:141".parse().unwrap()),
            status: "running".into(),
            paths: vec![ExecPath {
                agent: "a1".into(),
                target: "lxc:141/docker:3f2a9c0b1d2e".parse().unwrap(),
                via: vigil_shared::resource::Via::PctExec,
            }],
            facts: Facts {
                ports: vec!["3000/tcp".into()],
                mounts: vec![Mount {
                    host_path: "/srv/homepage".into(),
                    path: "/app/config".into(),
                    read_only: true,
                }],
                image: Some("ghcr.io/gethomepage/homepage:latest".into()),
                labels: [("com.docker.compose.project".to_owned(), "home".to_owned())].into(),
                ..Facts::default()
            },
        };
        let wire = resource_to_proto(&r, "a1");
        assert_eq!(resource_from_proto(&wire, "a1"), Ok(r.clone()));
        assert!(resource_to_proto(&r, "other").paths.is_empty());
        let mut bad = wire.clone();
        bad.kind = "vm".into();
        assert!(resource_from_proto(&bad, "a1").is_err());
        bad = wire;
        bad.parent = "nonsense".into();
        assert!(resource_from_proto(&bad, "a1").is_err());
    }
}
