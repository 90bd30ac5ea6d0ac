//! Unit tests of the inventory: reports, trust, merge, guest links, forgetting. [`search`]
//! covers search ranking; [`intern`] the id table; [`model`] checks the incremental graph
//! against a naive re-merge on random update sequences.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod intern;
mod model;
mod search;

use vigil_shared::ids::ExecTarget;
use vigil_shared::resource::{ExecPath, Facts, Resource, ResourceId, ResourceKind, Via};

use super::{AgentUpdate, Inventory};

pub(super) fn id(text: &str) -> ResourceId {
    text.parse().unwrap()
}

/// A resource under construction.
pub(super) struct R(pub Resource);

pub(super) fn r(text: &str, name: &str) -> R {
    let id = id(text);
    R(Resource {
        kind: id.kind(),
        id,
        name: name.into(),
        aliases: Vec::new(),
        parent: None,
        status: "running".into(),
        paths: Vec::new(),
        facts: Facts::default(),
    })
}

impl R {
    pub(super) fn parent(mut self, parent: &str) -> R {
        self.0.parent = Some(id(parent));
        self
    }
    pub(super) fn path(mut self, agent: &str, target: &str, via: Via) -> R {
        self.0.paths.push(ExecPath {
            agent: agent.into(),
            target: target.parse().unwrap(),
            via,
        });
        self
    }
    pub(super) fn macs(mut self, macs: &[&str]) -> R {
        self.0.facts.macs = macs.iter().map(|m| (*m).to_owned()).collect();
        self
    }
    pub(super) fn alias(mut self, alias: &str) -> R {
        self.0.aliases.push(alias.into());
        self
    }
    pub(super) fn status(mut self, status: &str) -> R {
        self.0.status = status.into();
        self
    }
}

pub(super) fn full(seq: u64, resources: Vec<R>) -> AgentUpdate {
    AgentUpdate {
        seq,
        full: true,
        upserts: resources.into_iter().map(|r| r.0).collect(),
        sources: vec!["host".into()],
        ..AgentUpdate::default()
    }
}

pub(super) fn diff(seq: u64, upserts: Vec<R>, removed: &[&str]) -> AgentUpdate {
    AgentUpdate {
        seq,
        upserts: upserts.into_iter().map(|r| r.0).collect(),
        removed: removed.iter().map(|t| id(t)).collect(),
        ..AgentUpdate::default()
    }
}

fn chain(inv: &Inventory, text: &str) -> Vec<(String, String, Via)> {
    inv.get(&id(text))
        .unwrap_or_else(|| panic!("{text} is missing"))
        .resource
        .paths
        .into_iter()
        .map(|p| (p.agent, p.target.to_string(), p.via))
        .collect()
}

pub(super) fn ids(resources: &[Resource]) -> Vec<String> {
    resources.iter().map(|r| r.id.to_string()).collect()
}

fn children(inv: &Inventory, text: &str) -> Vec<String> {
    let view = inv.get(&id(text)).unwrap();
    view.children.iter().map(ToString::to_string).collect()
}

fn parent(inv: &Inventory, text: &str) -> Option<String> {
    inv.get(&id(text))?.resource.parent.map(|p| p.to_string())
}

#[test]
fn full_updates_replace_diffs_upsert_and_remove() {
    let inv = Inventory::new();
    let lxc = |vmid: u32, name: &str| {
        r(&format!("lxc:pve:{vmid}"), name).parent("node:pve").path(
            "n1",
            &format!("lxc:{vmid}"),
            Via::PctExec,
        )
    };
    inv.apply(
        "n1",
        full(
            1,
            vec![
                r("node:pve", "pve").path("n1", "host", Via::Direct),
                lxc(141, "media"),
                lxc(142, "dns"),
            ],
        ),
    );
    assert_eq!(inv.len(), 3);
    assert_eq!(children(&inv, "node:pve"), ["lxc:pve:141", "lxc:pve:142"]);

    inv.apply("n1", diff(2, vec![lxc(141, "media2")], &["lxc:pve:142"]));
    assert_eq!(inv.get(&id("lxc:pve:141")).unwrap().resource.name, "media2");
    assert!(inv.get(&id("lxc:pve:142")).is_none());
    let report = inv.report("n1").unwrap();
    assert_eq!((report.seq, report.resources), (2, 2));
    assert_eq!(report.sources, ["host"], "a diff without notes keeps them");

    // An older diff is ignored; a reconnect's full update with seq 1 is not.
    inv.apply("n1", diff(1, vec![lxc(143, "late")], &["lxc:pve:141"]));
    assert!(inv.get(&id("lxc:pve:141")).is_some());
    assert!(inv.get(&id("lxc:pve:143")).is_none());
    inv.apply("n1", full(1, vec![lxc(144, "new")]));
    assert_eq!(ids(&inv.search("", None, 10)), ["lxc:pve:144"]);
    assert!(inv.get(&id("node:pve")).is_none());
    assert_eq!(inv.report("n1").unwrap().resources, 1);
    assert!(inv.report("nobody").is_none());
}

#[test]
fn an_agent_is_not_trusted_about_other_hosts() {
    let inv = Inventory::new();
    inv.apply(
        "a",
        full(
            1,
            vec![
                r("host:a", "a-host").path("a", "host", Via::Direct),
                r("host:b", "impostor").path("a", "host", Via::Direct),
                r("node:pve", "pve").path("a", "host", Via::Direct),
                r("lxc:pve:141", "media")
                    .path("a", "host", Via::Direct)
                    .path("a", "lxc:141", Via::PctExec),
                r("docker_container:web:abc", "web").path(
                    "someone-else",
                    "docker:abc",
                    Via::Docker,
                ),
            ],
        ),
    );
    assert!(inv.get(&id("host:b")).is_none());
    assert_eq!(
        chain(&inv, "host:a"),
        [("a".into(), "host".into(), Via::Direct)]
    );
    assert_eq!(
        chain(&inv, "node:pve"),
        [("a".into(), "host".into(), Via::Direct)]
    );
    assert_eq!(
        chain(&inv, "lxc:pve:141"),
        [("a".into(), "lxc:141".into(), Via::PctExec)]
    );
    assert_eq!(
        chain(&inv, "docker_container:web:abc"),
        [("a".into(), "docker:abc".into(), Via::Docker)]
    );
    assert_eq!(inv.report("a").unwrap().resources, 4);
}

/// The Proxmox node's agent `n1` sees LXC 141 and a container inside it; `g1` runs inside
/// LXC 141 (same MAC) and sees the same container through its own Docker engine.
fn node_and_guest(inv: &Inventory) {
    inv.apply(
        "n1",
        full(
            1,
            vec![
                r("node:pve", "pve").path("n1", "host", Via::Direct),
                r("lxc:pve:141", "media")
                    .parent("node:pve")
                    .path("n1", "lxc:141", Via::PctExec)
                    .macs(&["BC:24:11:00:00:01"]),
                r("lxc:pve:142", "dns")
                    .parent("node:pve")
                    .path("n1", "lxc:142", Via::PctExec)
                    .macs(&["bc:24:11:00:00:02"]),
                r("docker_container:media:3f2a9c0b1d2e", "jellyfin")
                    .parent("lxc:pve:141")
                    .path("n1", "lxc:141/docker:3f2a9c0b1d2e", Via::PctExec)
                    .status("running")
                    .alias("3f2a9c0b1d2e"),
            ],
        ),
    );
    inv.apply(
        "g1",
        full(
            1,
            vec![
                r("host:g1", "media-box")
                    .path("g1", "host", Via::Direct)
                    .macs(&["bc:24:11:00:00:01", "02:42:ac:11:00:01"]),
                r("docker_container:media:3f2a9c0b1d2e", "jellyfin")
                    .parent("host:g1")
                    .path("g1", "docker:3f2a9c0b1d2e", Via::Docker)
                    .status("running (healthy)")
                    .alias("jellyfin-svc"),
                r("docker_container:media:0123456789ab", "sonarr")
                    .parent("host:g1")
                    .path("g1", "docker:0123456789ab", Via::Docker),
            ],
        ),
    );
}

#[test]
fn one_container_from_two_agents_is_one_resource_with_the_chain_in_rank_order() {
    let inv = Inventory::new();
    node_and_guest(&inv);
    let view = inv.get(&id("docker_container:media:3f2a9c0b1d2e")).unwrap();
    assert_eq!(
        chain(&inv, "docker_container:media:3f2a9c0b1d2e"),
        [
            ("g1".into(), "docker:3f2a9c0b1d2e".into(), Via::Docker),
            (
                "n1".into(),
                "lxc:141/docker:3f2a9c0b1d2e".into(),
                Via::PctExec
            ),
        ]
    );
    assert_eq!(
        view.resource.status, "running (healthy)",
        "the docker path's report wins"
    );
    assert_eq!(view.resource.aliases, ["3f2a9c0b1d2e", "jellyfin-svc"]);
    assert_eq!(view.resource.parent, Some(id("lxc:pve:141")));

    // Rank beats agent id and recency: a later pct_exec report does not win.
    inv.apply(
        "a0",
        full(
            1,
            vec![r("docker_container:media:3f2a9c0b1d2e", "other").path(
                "a0",
                "lxc:141/docker:3f2a9c0b1d2e",
                Via::PctExec,
            )],
        ),
    );
    let view = inv.get(&id("docker_container:media:3f2a9c0b1d2e")).unwrap();
    assert_eq!(view.resource.name, "jellyfin");
    let agents: Vec<&str> = view
        .resource
        .paths
        .iter()
        .map(|p| p.agent.as_str())
        .collect();
    assert_eq!(agents, ["g1", "a0", "n1"]);
}

#[test]
fn an_agent_inside_a_guest_is_linked_by_mac() {
    let inv = Inventory::new();
    node_and_guest(&inv);
    assert_eq!(
        chain(&inv, "lxc:pve:141"),
        [
            ("g1".into(), "host".into(), Via::Direct),
            ("n1".into(), "lxc:141".into(), Via::PctExec),
        ]
    );
    let guest = inv.get(&id("lxc:pve:141")).unwrap().resource;
    assert_eq!(guest.aliases, ["host:g1", "media-box"]);
    assert_eq!(guest.name, "media");
    assert_eq!(parent(&inv, "host:g1").as_deref(), Some("lxc:pve:141"));
    assert_eq!(
        parent(&inv, "docker_container:media:0123456789ab").as_deref(),
        Some("lxc:pve:141")
    );
    assert_eq!(
        children(&inv, "lxc:pve:141"),
        [
            "host:g1",
            "docker_container:media:0123456789ab",
            "docker_container:media:3f2a9c0b1d2e"
        ]
    );
    assert!(children(&inv, "host:g1").is_empty());
    // The host's name finds the guest too; the host's own record stays a host.
    assert_eq!(
        ids(&inv.search("media-box", None, 10)),
        ["host:g1", "lxc:pve:141"]
    );
    assert_eq!(
        inv.get(&id("host:g1")).unwrap().resource.kind,
        ResourceKind::Host
    );
    assert!(
        chain(&inv, "lxc:pve:142")
            .iter()
            .all(|p| p.2 != Via::Direct)
    );

    // The guest's MAC changes: the link goes, and with it the alias and the re-parenting.
    inv.apply(
        "n1",
        diff(
            2,
            vec![
                r("lxc:pve:141", "media")
                    .parent("node:pve")
                    .path("n1", "lxc:141", Via::PctExec)
                    .macs(&["bc:24:11:00:00:99"]),
            ],
            &[],
        ),
    );
    assert_eq!(chain(&inv, "lxc:pve:141").len(), 1);
    assert!(
        inv.get(&id("lxc:pve:141"))
            .unwrap()
            .resource
            .aliases
            .is_empty()
    );
    assert_eq!(parent(&inv, "host:g1"), None);
    assert_eq!(
        parent(&inv, "docker_container:media:0123456789ab").as_deref(),
        Some("host:g1")
    );
    assert_eq!(ids(&inv.search("media-box", None, 10)), ["host:g1"]);
}

#[test]
fn a_guest_label_wins_over_the_mac() {
    let inv = Inventory::new();
    node_and_guest(&inv);
    inv.set_guest_label("g1", Some(id("lxc:pve:142")));
    assert_eq!(chain(&inv, "lxc:pve:141").len(), 1);
    assert_eq!(
        chain(&inv, "lxc:pve:142")[0],
        ("g1".into(), "host".into(), Via::Direct)
    );
    assert_eq!(parent(&inv, "host:g1").as_deref(), Some("lxc:pve:142"));
    assert_eq!(
        parent(&inv, "docker_container:media:0123456789ab").as_deref(),
        Some("lxc:pve:142")
    );
    // A label naming a guest nobody reports links nothing, not even by MAC.
    inv.set_guest_label("g1", Some(id("vm:pve:300")));
    assert_eq!(parent(&inv, "host:g1"), None);
    assert!(
        inv.get(&id("lxc:pve:141"))
            .unwrap()
            .resource
            .aliases
            .is_empty()
    );
    // ... until the guest appears.
    inv.apply(
        "n1",
        diff(
            2,
            vec![r("vm:pve:300", "vm").path("n1", "vm:300", Via::QmGuestExec)],
            &[],
        ),
    );
    assert_eq!(parent(&inv, "host:g1").as_deref(), Some("vm:pve:300"));
    assert_eq!(
        chain(&inv, "vm:pve:300"),
        [
            ("g1".into(), "host".into(), Via::Direct),
            ("n1".into(), "vm:300".into(), Via::QmGuestExec),
        ]
    );
    // Only guests can be named; clearing the label falls back to the MAC.
    inv.set_guest_label("g1", Some(id("node:pve")));
    assert_eq!(parent(&inv, "host:g1").as_deref(), Some("lxc:pve:141"));
    inv.set_guest_label("g1", None);
    assert_eq!(parent(&inv, "host:g1").as_deref(), Some("lxc:pve:141"));
}

#[test]
fn a_mac_shared_with_several_guests_links_nothing() {
    let inv = Inventory::new();
    node_and_guest(&inv);
    inv.apply(
        "n1",
        diff(
            2,
            vec![
                r("lxc:pve:142", "dns")
                    .parent("node:pve")
                    .path("n1", "lxc:142", Via::PctExec)
                    .macs(&["02:42:ac:11:00:01"]),
            ],
            &[],
        ),
    );
    assert_eq!(parent(&inv, "host:g1"), None);
    assert_eq!(chain(&inv, "lxc:pve:141").len(), 1);
    assert_eq!(chain(&inv, "lxc:pve:142").len(), 1);
    assert_eq!(children(&inv, "host:g1").len(), 2);
}

#[test]
fn forgetting_an_agent_removes_its_paths_and_what_only_it_reported() {
    let inv = Inventory::new();
    node_and_guest(&inv);
    inv.set_guest_label("g1", Some(id("lxc:pve:141")));
    inv.forget_agent("g1");
    assert!(inv.get(&id("host:g1")).is_none());
    assert!(
        inv.get(&id("docker_container:media:0123456789ab"))
            .is_none()
    );
    let shared = inv.get(&id("docker_container:media:3f2a9c0b1d2e")).unwrap();
    assert_eq!(
        chain(&inv, "docker_container:media:3f2a9c0b1d2e"),
        [(
            "n1".into(),
            "lxc:141/docker:3f2a9c0b1d2e".into(),
            Via::PctExec
        )]
    );
    assert_eq!(shared.resource.status, "running");
    assert_eq!(shared.resource.aliases, ["3f2a9c0b1d2e"]);
    assert_eq!(chain(&inv, "lxc:pve:141").len(), 1);
    assert_eq!(
        children(&inv, "lxc:pve:141"),
        ["docker_container:media:3f2a9c0b1d2e"]
    );
    assert!(inv.report("g1").is_none());
    assert!(inv.search("media-box", None, 10).is_empty());
    // Coming back without a label, it is linked by MAC again.
    node_and_guest(&inv);
    assert_eq!(parent(&inv, "host:g1").as_deref(), Some("lxc:pve:141"));
}

#[test]
fn paths_of_the_same_rank_go_by_agent_id_and_fields_by_recency() {
    let inv = Inventory::new();
    let pod = |agent: &str, status: &str| {
        r("pod:k:media:jf-0", "jf-0").status(status).path(
            agent,
            "pod:media/jf-0/server",
            Via::Kubernetes,
        )
    };
    inv.apply("k2", full(1, vec![pod("k2", "Pending")]));
    inv.apply("k1", full(1, vec![pod("k1", "Running")]));
    let view = inv.get(&id("pod:k:media:jf-0")).unwrap().resource;
    assert_eq!(view.status, "Running", "the newest report wins a tie");
    assert_eq!(view.paths[0].agent, "k1");
    assert_eq!(view.paths[1].agent, "k2");
    assert_eq!(
        view.paths[0].target,
        ExecTarget::Pod {
            namespace: "media".into(),
            name: "jf-0".into(),
            container: "server".into()
        }
    );
    inv.apply("k2", diff(2, vec![pod("k2", "Failed")], &[]));
    assert_eq!(
        inv.get(&id("pod:k:media:jf-0")).unwrap().resource.status,
        "Failed"
    );
}
