//! What a simulated agent reports about itself: host facts and a one-resource inventory
//! (its `host:<agent-id>`), the smallest report a real agent sends.

use std::collections::BTreeMap;

use vigil_proto::agent::v1::{HostFacts, InventoryUpdate};
use vigil_proto::convert::resource_to_proto;
use vigil_shared::ids::ExecTarget;
use vigil_shared::resource::{ExecPath, Facts, Resource, ResourceId, ResourceKind, Via};

/// The facts of a simulated host.
pub fn host_facts(hostname: &str, uptime_s: u64) -> HostFacts {
    HostFacts {
        hostname: hostname.to_owned(),
        os_release: "Vigil fleet simulator".to_owned(),
        kernel: "simulated".to_owned(),
        cpus: 1,
        memory_bytes: 1 << 30,
        uptime_s,
        load1: 0.0,
        sandbox: None,
    }
}

/// The first (full) inventory update of a stream: the agent's host.
pub fn full_update(agent_id: &str, hostname: &str) -> InventoryUpdate {
    let details = BTreeMap::from([
        ("cpus".to_owned(), "1".to_owned()),
        ("os".to_owned(), "Vigil fleet simulator".to_owned()),
    ]);
    let host = Resource {
        id: ResourceId::Host(agent_id.to_owned()),
        kind: ResourceKind::Host,
        name: hostname.to_owned(),
        aliases: vec![hostname.to_owned()],
        parent: None,
        status: "running".to_owned(),
        paths: vec![ExecPath {
            agent: agent_id.to_owned(),
            target: ExecTarget::Host,
            via: Via::Direct,
        }],
        facts: Facts {
            details,
            ..Facts::default()
        },
    };
    InventoryUpdate {
        seq: 1,
        full: true,
        upserts: vec![resource_to_proto(&host, agent_id)],
        removed: Vec::new(),
        sources: vec!["host".to_owned()],
        capped: Vec::new(),
        errors: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_proto::convert::resource_from_proto;

    #[test]
    fn the_host_resource_is_what_the_controller_accepts() {
        let agent = "0b7f1c52-8a1e-4a4e-9a53-d3f1e2a4b5c6";
        let update = full_update(agent, "fleet-00007");
        assert!(update.full);
        let host = resource_from_proto(&update.upserts[0], agent).unwrap();
        assert_eq!(host.id.to_string(), format!("host:{agent}"));
        assert_eq!(host.name, "fleet-00007");
        assert_eq!(host.paths[0].target, ExecTarget::Host);
    }
}
