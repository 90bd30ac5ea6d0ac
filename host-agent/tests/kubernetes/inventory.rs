//! Discovery: what a scan reports, the per-kind caps, and the watch.

use super::server::{self, Seen};
use super::{JELLYFIN, guarded};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use vigil_agent::inventory::kubernetes::KubeSource;
use vigil_agent::inventory::{Scan, Source, SourceCtx};
use vigil_shared::resource::{Resource, Via};

fn ctx() -> SourceCtx {
    SourceCtx {
        agent_id: "agent-1".into(),
        hostname: "k3s-1".into(),
    }
}

async fn scan_with_cap(cap: usize) -> (Scan, Vec<Seen>) {
    let api = server::start().await;
    let source = KubeSource::new(api.client(), "home lab".into(), cap);
    let scan = guarded(source.scan(&ctx()))
        .await
        .unwrap_or_else(|e| panic!("scan failed: {e}"));
    (scan, api.seen())
}

fn find<'a>(scan: &'a Scan, id: &str) -> &'a Resource {
    scan.resources
        .iter()
        .find(|r| r.id.to_string() == id)
        .unwrap_or_else(|| panic!("no {id} in {:#?}", ids(scan)))
}

fn ids(scan: &Scan) -> Vec<String> {
    scan.resources.iter().map(|r| r.id.to_string()).collect()
}

#[tokio::test]
async fn a_scan_reports_the_cluster_nodes_namespaces_deployments_and_pods() {
    let (scan, seen) = scan_with_cap(2000).await;
    assert_eq!(
        ids(&scan),
        [
            "cluster:home-lab",
            "deployment:home-lab:kube-system:coredns",
            "deployment:home-lab:media:jellyfin",
            "kube_node:home-lab:k3s-1",
            "kube_node:home-lab:k3s-2",
            "namespace:home-lab:default",
            "namespace:home-lab:kube-system",
            "namespace:home-lab:media",
            "pod:home-lab:default:backup-29123456-q7wzp",
            "pod:home-lab:default:crashy",
            "pod:home-lab:kube-system:coredns-697968c856-7xk2p",
            "pod:home-lab:media:jellyfin-7c9d8f6b5-x2x9k",
            "pod:home-lab:media:postgres-0",
        ],
        "sorted, with the pod named evil:pod skipped"
    );
    assert!(scan.capped.is_empty(), "{:?}", scan.capped);

    let cluster = find(&scan, "cluster:home-lab");
    assert_eq!(cluster.facts.details["nodes"], "2");
    assert_eq!(cluster.facts.details["version"], "v1.33.1+k3s1");

    let k1 = find(&scan, "kube_node:home-lab:k3s-1");
    let k2 = find(&scan, "kube_node:home-lab:k3s-2");
    assert_eq!(
        (k1.status.as_str(), k2.status.as_str()),
        ("Ready", "NotReady")
    );
    assert_eq!(
        k1.parent.as_ref().map(ToString::to_string).as_deref(),
        Some("cluster:home-lab")
    );
    assert_eq!(k1.facts.details["kubelet_version"], "v1.33.1+k3s1");
    assert_eq!(
        (
            k1.facts.details["cpu"].as_str(),
            k1.facts.details["memory"].as_str()
        ),
        ("4", "8029848Ki")
    );
    assert_eq!(k1.facts.ips, ["192.168.1.21"]);

    let deploy = find(&scan, "deployment:home-lab:media:jellyfin");
    assert_eq!(deploy.status, "1/2");
    assert_eq!(
        deploy.facts.details["images"],
        "jellyfin/jellyfin:10.10.7, busybox:1.36"
    );
    assert_eq!(
        deploy.parent.as_ref().map(ToString::to_string).as_deref(),
        Some("namespace:home-lab:media")
    );

    let pod = find(&scan, "pod:home-lab:media:jellyfin-7c9d8f6b5-x2x9k");
    assert_eq!(pod.status, "Running");
    assert_eq!(
        pod.parent.as_ref().map(ToString::to_string).as_deref(),
        Some("namespace:home-lab:media")
    );
    let d = &pod.facts.details;
    assert_eq!(
        (
            d["restarts"].as_str(),
            d["ready"].as_str(),
            d["containers"].as_str(),
            d["node"].as_str()
        ),
        ("3", "1/2", "server,sidecar", "k3s-2")
    );
    assert_eq!(pod.facts.ips, ["10.42.1.15", "fd00:10:42:1::f"]);
    assert_eq!(
        pod.facts.image.as_deref(),
        Some("jellyfin/jellyfin:10.10.7")
    );
    assert_eq!(pod.facts.ports, ["8096/tcp"]);
    assert_eq!(pod.facts.labels["app"], "jellyfin");
    assert_eq!(pod.aliases, ["jellyfin"]);
    assert_eq!(pod.paths.len(), 1);
    assert_eq!(pod.paths[0].agent, "agent-1");
    assert_eq!(pod.paths[0].via, Via::Kubernetes);
    assert_eq!(
        pod.paths[0].target.to_string(),
        format!("pod:media/{JELLYFIN}/server")
    );
    let warnings = &d["warning_events"];
    assert!(
        warnings.starts_with("Unhealthy: Readiness probe failed"),
        "{warnings}"
    );
    assert!(
        warnings.ends_with(&format!("(Pod/{JELLYFIN})")),
        "{warnings}"
    );
    assert_eq!(
        warnings.lines().count(),
        1,
        "the multi-line message is one line"
    );

    let coredns = find(&scan, "pod:home-lab:kube-system:coredns-697968c856-7xk2p");
    assert_eq!(coredns.facts.ports, ["53/tcp", "53/udp", "9153/tcp"]);
    assert_eq!(coredns.aliases, ["coredns"]);
    assert!(!coredns.facts.details.contains_key("warning_events"));
    assert!(
        find(&scan, "pod:home-lab:media:postgres-0")
            .aliases
            .is_empty()
    );
    assert_eq!(
        find(&scan, "pod:home-lab:default:backup-29123456-q7wzp").status,
        "Succeeded"
    );

    let crashy = find(&scan, "pod:home-lab:default:crashy");
    assert_eq!(crashy.facts.details["restarts"], "12");
    assert_eq!(crashy.facts.details["waiting"], "crashy: CrashLoopBackOff");
    // Only warnings: the server filters by the field selector, and the Normal one is absent.
    assert_eq!(
        crashy.facts.details["warning_events"],
        "BackOff: Back-off restarting failed container crashy in pod crashy_default(5c6d7e8f-9a0b-4cbd-9e2f-3a4b5c6d7e8f) (Pod/crashy)"
    );
    let default_ns = find(&scan, "namespace:home-lab:default");
    assert_eq!(default_ns.status, "Active");
    let lines: Vec<&str> = default_ns.facts.details["warning_events"].lines().collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].starts_with("BackOff:"), "newest first: {lines:?}");
    assert_eq!(
        lines[1],
        "NodeNotReady: Node k3s-2 status is now: NodeNotReady (Node/k3s-2)"
    );

    let events = seen
        .iter()
        .find(|s| s.path == "/api/v1/events")
        .unwrap_or_else(|| panic!("{seen:?}"));
    assert_eq!(events.values("fieldSelector"), ["type=Warning"]);
    let pods = seen
        .iter()
        .find(|s| s.path == "/api/v1/pods")
        .unwrap_or_else(|| panic!("{seen:?}"));
    assert_eq!(pods.values("limit"), ["2000"]);
}

#[tokio::test]
async fn kinds_with_more_objects_than_the_cap_are_cut_and_reported() {
    let (scan, seen) = scan_with_cap(4).await;
    let pods = ids(&scan)
        .into_iter()
        .filter(|id| id.starts_with("pod:"))
        .count();
    assert_eq!(pods, 4);
    assert_eq!(scan.capped, ["pod: 4 of 6"]);
    assert!(
        find(&scan, "pod:home-lab:default:crashy")
            .facts
            .details
            .contains_key("warning_events")
    );
    let pod_lists: Vec<&Seen> = seen.iter().filter(|s| s.path == "/api/v1/pods").collect();
    assert_eq!(pod_lists.len(), 1, "the cap is reached on the first page");

    // Every kind has its own cap: nodes (2) and deployments (2) fit, the rest are cut.
    let (scan, _) = scan_with_cap(2).await;
    assert_eq!(
        scan.capped,
        ["namespace: 2 of 3", "pod: 2 of 6", "event: 2 of 3"]
    );
}

#[tokio::test]
async fn the_watch_notifies_on_pod_and_deployment_changes() {
    let api = server::start().await;
    let source = KubeSource::new(api.client(), "lab".into(), 100);
    let changed = Arc::new(Notify::new());
    let task = source
        .watch(changed.clone())
        .unwrap_or_else(|| panic!("no watch"));
    guarded(changed.notified()).await;
    // Both kinds are watched across all namespaces.
    let watched = || {
        api.seen()
            .into_iter()
            .filter(|s| s.values("watch") == ["true"])
            .map(|s| s.path)
            .collect::<Vec<_>>()
    };
    guarded(async {
        while !(watched().contains(&"/api/v1/pods".to_owned())
            && watched().contains(&"/apis/apps/v1/deployments".to_owned()))
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    task.abort();
}
