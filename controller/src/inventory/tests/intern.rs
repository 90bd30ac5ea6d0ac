//! The id table (`super::super::intern`) against the graph: it holds exactly the ids the
//! graph names (merged resources and the parents they name), so it does not grow as agents
//! come and go, re-parent their resources or are forgotten.

use vigil_shared::resource::Via;

use super::{diff, full, r};
use crate::inventory::Inventory;

fn interned(inv: &Inventory) -> usize {
    inv.read().interned()
}

/// Agent `agent`'s host, two containers on it, and a container whose parent is an LXC
/// nobody reports.
fn report(agent: &str, seq: u64) -> super::AgentUpdate {
    let host = format!("host:{agent}");
    full(
        seq,
        vec![
            r(&host, agent).path(agent, "host", Via::Direct),
            r(&format!("docker_container:{agent}:a1"), "web")
                .parent(&host)
                .path(agent, "docker:a1", Via::Docker),
            r(&format!("docker_container:{agent}:b2"), "db")
                .parent(&host)
                .path(agent, "docker:b2", Via::Docker),
            r(&format!("docker_container:{agent}:c3"), "cache")
                .parent("lxc:pve:100")
                .path(agent, "docker:c3", Via::Docker),
        ],
    )
}

#[test]
fn the_id_table_holds_only_what_the_graph_names() {
    let inv = Inventory::new();
    inv.apply("a", report("a", 1));
    // Four resources and the one parent nobody reports.
    assert_eq!(inv.len(), 4);
    assert_eq!(interned(&inv), 5);
    inv.apply("b", report("b", 1));
    assert_eq!(interned(&inv), 9, "lxc:pve:100 is shared");

    // A diff that re-parents the container drops the parent it no longer names.
    inv.apply(
        "a",
        diff(
            2,
            vec![r("docker_container:a:c3", "cache").parent("host:a").path(
                "a",
                "docker:c3",
                Via::Docker,
            )],
            &[],
        ),
    );
    assert_eq!(interned(&inv), 9, "b still names lxc:pve:100");
    inv.apply(
        "b",
        diff(
            3,
            Vec::new(),
            &["docker_container:b:c3", "docker_container:b:a1"],
        ),
    );
    assert_eq!(inv.len(), 6);
    assert_eq!(interned(&inv), 6);

    // A full update with less in it.
    inv.apply(
        "a",
        full(3, vec![r("host:a", "a").path("a", "host", Via::Direct)]),
    );
    assert_eq!(inv.len(), 3);
    assert_eq!(interned(&inv), 3);
}

#[test]
fn the_id_table_does_not_grow_as_agents_come_and_go() {
    let inv = Inventory::new();
    inv.apply("stays", report("stays", 1));
    let settled = interned(&inv);
    for round in 0..50 {
        let agent = format!("visitor-{round}");
        inv.apply(&agent, report(&agent, 1));
        inv.apply(&agent, report(&agent, 2));
        assert_eq!(interned(&inv), settled + 4);
        if round % 2 == 0 {
            inv.forget_agent(&agent);
        } else {
            inv.apply(&agent, full(3, Vec::new()));
            inv.forget_agent(&agent);
        }
        assert_eq!(interned(&inv), settled, "round {round}");
    }
    inv.forget_agent("stays");
    assert!(inv.is_empty());
    assert_eq!(interned(&inv), 0);
    assert!(inv.read().agents.is_empty());
}
