use super::*;
use vigil_shared::resource::{Facts, ResourceKind};

fn lxc(vmid: u32, status: &str) -> Resource {
    Resource {
        id: ResourceId::Lxc {
            node: "delly".into(),
            vmid,
        },
        kind: ResourceKind::Lxc,
        name: format!("ct{vmid}"),
        aliases: Vec::new(),
        parent: Some(ResourceId::Node("delly".into())),
        status: status.into(),
        paths: Vec::new(),
        facts: Facts::default(),
    }
}

fn ok(resources: Vec<Resource>) -> Result<Scan, String> {
    Ok(Scan {
        resources,
        capped: Vec::new(),
    })
}

#[test]
fn first_round_is_full_then_only_changes_are_sent() {
    let mut state = State::default();
    let first = state.apply(
        vec![(
            "proxmox",
            ok(vec![lxc(141, "running"), lxc(142, "stopped")]),
        )],
        true,
    );
    assert_eq!(first.upserts.len(), 2);
    assert!(first.notes.is_some());

    let same = state.apply(
        vec![(
            "proxmox",
            ok(vec![lxc(141, "running"), lxc(142, "stopped")]),
        )],
        false,
    );
    assert!(same.is_empty(), "{same:?}");

    let changed = state.apply(vec![("proxmox", ok(vec![lxc(141, "stopped")]))], false);
    assert_eq!(changed.upserts, vec![lxc(141, "stopped")]);
    assert_eq!(changed.removed, vec![lxc(142, "x").id]);
    assert!(changed.notes.is_none());
}

#[test]
fn a_failing_source_keeps_its_resources_and_reports_the_error() {
    let mut state = State::default();
    state.apply(vec![("proxmox", ok(vec![lxc(141, "running")]))], true);
    let failed = state.apply(vec![("proxmox", Err("pvesh timed out".into()))], false);
    assert!(failed.upserts.is_empty() && failed.removed.is_empty());
    let notes = failed.notes.expect("errors changed");
    assert_eq!(notes.errors, ["proxmox: pvesh timed out"]);
    let recovered = state.apply(vec![("proxmox", ok(vec![lxc(141, "running")]))], false);
    assert!(recovered.upserts.is_empty());
    assert_eq!(
        recovered.notes.expect("errors cleared").errors,
        Vec::<String>::new()
    );
}

#[test]
fn large_updates_are_split_and_only_the_first_is_full() {
    let mut big = Vec::new();
    for vmid in 0..3000 {
        let mut r = lxc(vmid, "running");
        r.facts.details.insert("blob".into(), "x".repeat(1500));
        big.push(r);
    }
    let mut state = State::default();
    let diff = state.apply(vec![("proxmox", ok(big))], true);
    let mut seq = 0;
    let messages = diff.into_messages("agent", true, &mut seq);
    assert!(messages.len() >= 2, "{}", messages.len());
    assert!(messages[0].full && messages[1..].iter().all(|m| !m.full));
    assert!(messages.iter().all(|m| m.encoded_len() <= MAX_UPDATE_BYTES));
    assert_eq!(
        messages.iter().map(|m| m.upserts.len()).sum::<usize>(),
        3000
    );
    assert_eq!(
        messages.iter().map(|m| m.seq).collect::<Vec<_>>(),
        (1..=messages.len() as u64).collect::<Vec<_>>()
    );
    assert_eq!(messages[0].sources, ["proxmox"]);
}
