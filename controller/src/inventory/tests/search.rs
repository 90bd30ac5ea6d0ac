//! Search: ranking of id, name, alias, prefix and part matches, kind filter, limit, and
//! the index following renames and removals.

use vigil_shared::resource::{ResourceKind, Via};

use super::{diff, full, ids, r};
use crate::inventory::Inventory;

fn search_fixture() -> Inventory {
    let inv = Inventory::new();
    inv.apply(
        "n1",
        full(
            1,
            vec![
                r("node:pve", "pve")
                    .alias("JellyFin")
                    .path("n1", "host", Via::Direct),
                r("lxc:pve:100", "jellyfin").parent("node:pve"),
                r("docker_container:h:bbb", "jellyfinx"),
                r("docker_container:h:aaa", "media-jellyfin-1"),
                r("docker_container:h:ccc", "my.jellyfins_box"),
                r("docker_container:h:ddd", "other thing"),
                r("cluster:pve", "node:pve"),
            ],
        ),
    );
    inv
}

#[test]
fn search_ranks_id_name_prefix_part_and_part_prefix() {
    let inv = search_fixture();
    let find = |q: &str| ids(&inv.search(q, None, 100));
    assert_eq!(
        find("jellyfin"),
        [
            "node:pve",
            "lxc:pve:100",
            "docker_container:h:bbb",
            "docker_container:h:aaa",
            "docker_container:h:ccc"
        ]
    );
    assert_eq!(
        find("JELLY"),
        [
            "node:pve",
            "lxc:pve:100",
            "docker_container:h:bbb",
            "docker_container:h:aaa",
            "docker_container:h:ccc"
        ]
    );
    assert_eq!(
        find("node:pve"),
        ["node:pve", "cluster:pve"],
        "exact id, then exact name"
    );
    assert_eq!(find("docker_container:h:ddd"), ["docker_container:h:ddd"]);
    assert_eq!(
        find("docker_container:h:"),
        [
            "docker_container:h:aaa",
            "docker_container:h:bbb",
            "docker_container:h:ccc",
            "docker_container:h:ddd"
        ]
    );
    assert_eq!(find("thing"), ["docker_container:h:ddd"]);
    assert_eq!(find("  Other Thing "), ["docker_container:h:ddd"]);
    assert_eq!(find("box"), ["docker_container:h:ccc"]);
    assert_eq!(find("1"), ["docker_container:h:aaa"]);
    assert!(find("nothing-like-it").is_empty());

    let kind = |q: &str, k: ResourceKind, n: usize| ids(&inv.search(q, Some(k), n));
    assert_eq!(
        kind("jellyfin", ResourceKind::DockerContainer, 10),
        [
            "docker_container:h:bbb",
            "docker_container:h:aaa",
            "docker_container:h:ccc"
        ]
    );
    assert_eq!(kind("", ResourceKind::Lxc, 10), ["lxc:pve:100"]);
    assert_eq!(
        ids(&inv.search("jellyfin", None, 2)),
        ["node:pve", "lxc:pve:100"]
    );
    assert_eq!(
        ids(&inv.search("", None, 3)),
        ["node:pve", "lxc:pve:100", "docker_container:h:aaa"],
        "everything by id (kind first)"
    );
    assert!(inv.search("jellyfin", None, 0).is_empty());
}

#[test]
fn search_follows_renames_and_removals() {
    let inv = search_fixture();
    inv.apply(
        "n1",
        diff(
            2,
            vec![r("docker_container:h:aaa", "media-plex-1")],
            &["lxc:pve:100"],
        ),
    );
    assert_eq!(
        ids(&inv.search("jellyfin", None, 100)),
        [
            "node:pve",
            "docker_container:h:bbb",
            "docker_container:h:ccc"
        ]
    );
    assert_eq!(
        ids(&inv.search("plex", None, 100)),
        ["docker_container:h:aaa"]
    );
    inv.forget_agent("n1");
    assert!(inv.search("", None, 100).is_empty());
    assert!(inv.is_empty());
}
