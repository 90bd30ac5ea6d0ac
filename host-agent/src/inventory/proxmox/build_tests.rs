//! Resources from parsed Proxmox output: ids, parents, paths, and hostile names.

use super::*;
use crate::exec::proxmox::parse;

fn ctx() -> SourceCtx {
    SourceCtx {
        agent_id: "agent-1".into(),
        hostname: "delly".into(),
    }
}

fn node(name: &str) -> NodeEntry {
    NodeEntry {
        name: name.into(),
        status: "online".into(),
        ..NodeEntry::default()
    }
}

#[test]
fn the_node_is_this_host_else_the_only_one() {
    let nodes = [node("pve1"), node("delly"), node("bad node")];
    assert_eq!(pick_node(&nodes, "delly").unwrap().name, "delly");
    assert_eq!(pick_node(&nodes, "Delly.home.arpa").unwrap().name, "delly");
    let err = pick_node(&nodes, "elsewhere").unwrap_err();
    assert!(
        matches!(&err, ScanError::Unusable(text)
            if text.contains("pve1, delly") && text.contains("elsewhere")),
        "{err:?}"
    );
    assert_eq!(
        pick_node(&[node("pve1")], "elsewhere").unwrap().name,
        "pve1"
    );
    // An only node whose name cannot be an id part is skipped: nothing is left.
    assert!(pick_node(&[node("a:b")], "a:b").is_err());
    assert_eq!(
        pick_node(&[node("a:b"), node("pve1")], "x").unwrap().name,
        "pve1"
    );
    assert!(pick_node(&[], "x").is_err());
}

#[test]
fn guests_get_ids_aliases_paths_and_facts() {
    let guest = GuestEntry {
        vmid: 141,
        name: Some("media".into()),
        status: "running".into(),
        cpus: Some("2".into()),
        maxmem: Some(4096),
        tags: vec!["docker".into(), "media".into()],
        ..GuestEntry::default()
    };
    let config = parse::config("hostname: media-ct\nnet0: name=eth0,hwaddr=BC:24:11:5E:7D:2A\n");
    let r = guest_resource(
        &ctx(),
        "delly",
        GuestKind::Lxc,
        &guest,
        Some(&config),
        Some(5),
    );
    assert_eq!(r.id.to_string(), "lxc:delly:141");
    assert_eq!(r.parent.as_ref().unwrap().to_string(), "node:delly");
    assert_eq!(r.name, "media");
    assert_eq!(r.aliases, ["141", "CT141", "media-ct"]);
    assert_eq!(r.paths.len(), 1);
    assert_eq!(r.paths[0].target, ExecTarget::Lxc(141));
    assert_eq!(r.paths[0].via, Via::PctExec);
    assert_eq!(r.paths[0].agent, "agent-1");
    assert_eq!(r.facts.macs, ["bc:24:11:5e:7d:2a"]);
    assert_eq!(r.facts.config_paths, ["/etc/pve/lxc/141.conf"]);
    assert_eq!(r.facts.details["tags"], "docker;media");
    assert_eq!(r.facts.details["boot_time"], "5");
    assert_eq!(r.facts.details["memory_bytes"], "4096");

    // A VM without its config: no agent known, so no path; named after its vmid.
    let vm = GuestEntry {
        vmid: 204,
        status: "running".into(),
        ..GuestEntry::default()
    };
    let r = guest_resource(&ctx(), "delly", GuestKind::Vm, &vm, None, None);
    assert_eq!(r.id.to_string(), "vm:delly:204");
    assert_eq!(r.name, "VM204");
    assert_eq!(r.aliases, ["204"]);
    assert!(r.paths.is_empty());
    assert_eq!(r.facts.config_paths, ["/etc/pve/qemu-server/204.conf"]);
    let with_agent = parse::config("agent: enabled=1\n");
    let r = guest_resource(&ctx(), "delly", GuestKind::Vm, &vm, Some(&with_agent), None);
    assert_eq!(r.paths[0].target, ExecTarget::Vm(204));
    assert_eq!(r.paths[0].via, Via::QmGuestExec);
}

#[test]
fn docker_containers_in_an_lxc_are_named_after_its_hostname() {
    let guest = GuestEntry {
        vmid: 141,
        name: Some("media box".into()),
        ..GuestEntry::default()
    };
    assert_eq!(docker_host(&guest, None), "media-box");
    let config = parse::config("hostname: odd:host\tname\n");
    assert_eq!(docker_host(&guest, Some(&config)), "odd-host-name");
    let nameless = GuestEntry {
        vmid: 7,
        ..GuestEntry::default()
    };
    assert_eq!(docker_host(&nameless, None), "CT7");

    let entry = &parse::docker_ps(concat!(
        r#"{"ID":"689b21f1c3ca3433f9d32626018cdeb1da3c85372510be2805d3f8d198fb4e49","#,
        r#""Names":"media-jellyfin-1","Image":"jellyfin/jellyfin:10.9.6","State":"running","#,
        r#""Status":"Up 3 days (healthy)","Ports":"0.0.0.0:8096->8096/tcp","#,
        r#""Labels":"com.docker.compose.project=media,com.docker.compose.service=jellyfin"}"#
    ))[0];
    let r = docker_resource(&ctx(), "delly", 141, "media", entry);
    assert_eq!(r.id.to_string(), "docker_container:media:689b21f1c3ca");
    assert_eq!(r.parent.as_ref().unwrap().to_string(), "lxc:delly:141");
    assert_eq!(r.name, "media-jellyfin-1");
    assert_eq!(r.aliases, ["689b21f1c3ca", "jellyfin"]);
    assert_eq!(r.status, "running");
    assert_eq!(r.facts.image.as_deref(), Some("jellyfin/jellyfin:10.9.6"));
    assert_eq!(r.facts.ports, ["0.0.0.0:8096->8096/tcp"]);
    assert_eq!(r.facts.details["health"], "healthy");
    assert_eq!(r.facts.details["compose_project"], "media");
    assert_eq!(
        r.paths[0].target,
        ExecTarget::LxcDocker {
            vmid: 141,
            container: "689b21f1c3ca".into()
        }
    );
    assert_eq!(r.paths[0].target.to_string(), "lxc:141/docker:689b21f1c3ca");
    assert_eq!(r.paths[0].via, Via::PctExec);
}

#[test]
fn the_node_is_reached_directly() {
    let n = NodeEntry {
        maxcpu: Some(8),
        maxmem: Some(1 << 35),
        ..node("delly")
    };
    let r = node_resource(&ctx(), &n, Some(1_700_000_000));
    assert_eq!(r.id.to_string(), "node:delly");
    assert_eq!(r.status, "online");
    assert_eq!(r.paths[0].target, ExecTarget::Host);
    assert_eq!(r.paths[0].via, Via::Direct);
    assert_eq!(r.facts.details["cpus"], "8");
    assert_eq!(r.facts.details["boot_time"], "1700000000");
    assert!(valid_part("delly") && !valid_part("a b") && !valid_part("") && !valid_part("a/b"));
}
