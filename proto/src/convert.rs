//! Conversions between the wire types of the agent link and the domain types of
//! `vigil-shared` (targets and grants). The controller and the agent both convert at their
//! edges, so the conversions live here, once.

use crate::agent::v1::{
    DockerTarget, Grant, HostTarget, LxcTarget, PodTarget, Target, VmTarget, target,
};
use vigil_shared::grant::GrantBody;
use vigil_shared::ids::{AgentId, ExecTarget};

/// The domain target of a wire target; `Err` says why it is not a valid target.
pub fn target_from_proto(target: Option<&Target>) -> Result<ExecTarget, String> {
    let kind = target
        .and_then(|t| t.kind.as_ref())
        .ok_or("the request names no target")?;
    Ok(match kind {
        target::Kind::Host(HostTarget {}) => ExecTarget::Host,
        target::Kind::Lxc(LxcTarget { vmid }) => ExecTarget::Lxc(*vmid),
        target::Kind::Vm(VmTarget { vmid }) => ExecTarget::Vm(*vmid),
        target::Kind::Docker(DockerTarget { container }) if !container.is_empty() => {
            ExecTarget::Docker(container.clone())
        }
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
}
