use super::*;
use std::time::Duration;
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

fn ok(resources: Vec<Resource>) -> Result<Scan, ScanError> {
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
    let failed = state.apply(
        vec![(
            "proxmox",
            Err(ScanError::Unreachable("pvesh timed out".into())),
        )],
        false,
    );
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

/// A source whose resources the test sets, counting its scans.
#[derive(Debug, Default)]
struct Fake {
    resources: std::sync::Mutex<Vec<Resource>>,
}

impl Source for Fake {
    fn name(&self) -> &'static str {
        "proxmox"
    }

    fn scan<'a>(
        &'a self,
        _ctx: &'a SourceCtx,
    ) -> super::super::BoxFuture<'a, Result<Scan, ScanError>> {
        let resources = self.resources.lock().map(|r| r.clone()).unwrap_or_default();
        Box::pin(async move { ok(resources) })
    }
}

async fn next_inventory(rx: &mut mpsc::Receiver<AgentMessage>) -> InventoryUpdate {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(30), rx.recv())
            .await
            .expect("an update (hang guard)")
            .expect("the reporter is running");
        if let Some(agent_message::Kind::Inventory(update)) = message.kind {
            return update;
        }
    }
}

#[tokio::test]
async fn a_burst_of_changes_is_one_update_and_rescans_without_change_send_nothing() {
    // Runs on the current-thread runtime: the reporter only runs while the test awaits.
    let fake = Arc::new(Fake::default());
    *fake.resources.lock().unwrap() = vec![lxc(141, "running")];
    let discovery = Arc::new(Discovery::start(
        vec![fake.clone()],
        SourceCtx {
            agent_id: "a1".into(),
            hostname: "delly".into(),
        },
        Duration::from_secs(3600),
        Duration::from_secs(2),
    ));
    let (tx, mut rx) = mpsc::channel(64);
    let reporter = tokio::spawn({
        let discovery = Arc::clone(&discovery);
        async move { discovery.report(tx).await }
    });
    let first = next_inventory(&mut rx).await;
    assert!(first.full && first.upserts.len() == 1 && first.seq == 1);

    // Ten changes, each with its event, a few milliseconds apart: the reporter waits out
    // the debounce after the first and sends one update with the last state.
    for step in 0..10 {
        *fake.resources.lock().unwrap() = vec![lxc(141, &format!("state-{step}"))];
        discovery.changed.notify_one();
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let burst = next_inventory(&mut rx).await;
    assert!(!burst.full);
    assert_eq!(burst.upserts.len(), 1);
    assert_eq!(burst.upserts[0].status, "state-9");

    // The next change is the very next update: the burst's extra rescans sent nothing.
    *fake.resources.lock().unwrap() = vec![lxc(141, "state-9"), lxc(142, "running")];
    discovery.changed.notify_one();
    let next = next_inventory(&mut rx).await;
    assert_eq!(next.seq, burst.seq + 1);
    assert_eq!(next.upserts.len(), 1);
    assert_eq!(next.upserts[0].id.to_string(), "lxc:delly:142");
    reporter.abort();
}
