//! Conversions between the domain types of `vigil-shared` and the protobuf wire types.

use vigil_proto::agent::v1::{
    DockerTarget, HostTarget, LxcTarget, PodTarget, Target, VmTarget, target,
};
use vigil_shared::ids::ExecTarget;

/// The wire form of an execution target.
pub fn target_to_proto(value: &ExecTarget) -> Target {
    let kind = match value {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_convert() {
        assert_eq!(
            target_to_proto(&ExecTarget::Lxc(141)).kind,
            Some(target::Kind::Lxc(LxcTarget { vmid: 141 }))
        );
        let pod: ExecTarget = "pod:media/jellyfin-0/server".parse().unwrap();
        let Some(target::Kind::Pod(p)) = target_to_proto(&pod).kind else {
            panic!("not a pod");
        };
        assert_eq!(
            (p.namespace.as_str(), p.container.as_str()),
            ("media", "server")
        );
    }
}
