//! Discovery: the scan's resources and the event watch.

use super::{HANG_GUARD, platform};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use vigil_agent::inventory::{SourceCtx, docker};
use vigil_agent::platform::Detected;
use vigil_shared::ids::ExecTarget;
use vigil_shared::resource::{Mount, Resource, ResourceKind, Via};
use vigil_tests::docker::{Container, docker_ok, require};

fn ctx() -> SourceCtx {
    SourceCtx {
        agent_id: "agent-docker-test".into(),
        hostname: vigil_agent::inventory::hostname(),
    }
}

fn docker_host() -> String {
    docker::id_part(&docker_ok(&["info", "--format", "{{.Name}}"])).expect("docker host name")
}

async fn scan(found: &Detected) -> Vec<Resource> {
    found
        .source
        .scan(&ctx())
        .await
        .expect("docker scan")
        .resources
}

fn find<'a>(resources: &'a [Resource], c: &Container) -> &'a Resource {
    let id = format!("docker_container:{}:{}", docker_host(), c.short_id());
    resources
        .iter()
        .find(|r| r.id.to_string() == id)
        .unwrap_or_else(|| panic!("{id} not in the scan: {resources:#?}"))
}

#[tokio::test]
async fn the_scan_reports_containers_with_their_facts() {
    if !require() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bind = format!("{}:/data:ro", dir.path().display());
    let a = Container::run(
        "vigil-scan-a",
        "alpha",
        &[
            "-l",
            "com.docker.compose.project=demo",
            "-l",
            "com.docker.compose.service=web",
            "-l",
            "tier=edge",
            "-p",
            "127.0.0.1::80",
            "--expose",
            "443",
            "-v",
            &bind,
        ],
    )
    .unwrap();
    let b = Container::run("vigil-scan-b", "beta", &[]).unwrap();
    b.stop();
    let published = docker_ok(&["port", &a.name, "80/tcp"]);
    let host_port = published.rsplit(':').next().unwrap().trim().to_owned();

    let found = platform().await;
    assert_eq!(found.source.name(), "docker");
    assert_eq!(found.capabilities, ["docker"]);
    let resources = scan(&found).await;

    let ra = find(&resources, &a);
    assert_eq!(ra.kind, ResourceKind::DockerContainer);
    assert_eq!(ra.name, a.name);
    assert_eq!(ra.aliases, [a.short_id(), "web"]);
    assert_eq!(
        ra.parent.as_ref().unwrap().to_string(),
        "host:agent-docker-test"
    );
    assert_eq!(ra.status, "running");
    assert_eq!(ra.paths.len(), 1);
    assert_eq!(ra.paths[0].agent, "agent-docker-test");
    assert_eq!(ra.paths[0].target, ExecTarget::Docker(a.short_id().into()));
    assert_eq!(ra.paths[0].via, Via::Docker);
    let f = &ra.facts;
    assert_eq!(f.image.as_deref(), Some(vigil_tests::docker::IMAGE));
    assert_eq!(
        f.ports,
        [format!("{host_port}->80/tcp"), "443/tcp".to_owned()]
    );
    assert_eq!(
        f.mounts,
        [Mount {
            host_path: dir.path().display().to_string(),
            path: "/data".into(),
            read_only: true,
        }]
    );
    assert_eq!(f.labels.get("tier").map(String::as_str), Some("edge"));
    assert_eq!(f.labels.len(), 3, "{:?}", f.labels);
    assert_eq!(
        f.details.get("compose_project").map(String::as_str),
        Some("demo")
    );
    assert_eq!(
        f.details.get("restart_count").map(String::as_str),
        Some("0")
    );
    assert!(f.details.contains_key("created"), "{:?}", f.details);
    assert!(
        !f.details.contains_key("health"),
        "no healthcheck: {:?}",
        f.details
    );
    assert!(
        !f.ips.is_empty(),
        "a running container on the bridge has an address"
    );

    let rb = find(&resources, &b);
    assert_eq!(rb.name, b.name);
    assert_eq!(rb.status, "exited");
    assert_eq!(rb.aliases, [b.short_id()]);
    assert!(rb.facts.ports.is_empty() && rb.facts.mounts.is_empty());
    assert!(!rb.facts.details.contains_key("compose_project"));

    // Nothing changed: the next scan reports equal resources (the reporter sends nothing).
    let again = scan(&found).await;
    assert_eq!(find(&again, &a), ra);
    assert_eq!(find(&again, &b), rb);
}

/// Swallow notifications until none came for a moment (settling, not asserting).
async fn drain(changed: &Notify) {
    while tokio::time::timeout(Duration::from_millis(700), changed.notified())
        .await
        .is_ok()
    {}
}

/// Wait for notifications, rescanning after each, until `c` has `status`.
async fn until_status(found: &Detected, changed: &Notify, c: &Container, status: &str) -> bool {
    tokio::time::timeout(HANG_GUARD, async {
        loop {
            changed.notified().await;
            if find(&scan(found).await, c).status == status {
                return;
            }
        }
    })
    .await
    .is_ok()
}

#[tokio::test]
async fn the_watch_marks_starts_and_stops() {
    if !require() {
        return;
    }
    let a = Container::run("vigil-watch-a", "alpha", &[]).unwrap();
    let b = Container::run("vigil-watch-b", "beta", &[]).unwrap();
    b.stop();
    let found = platform().await;
    let changed = Arc::new(Notify::new());
    let watch = found
        .source
        .watch(changed.clone())
        .expect("docker sources watch");

    // The event stream connects in the background: poke the engine until it is heard.
    let primed = tokio::time::timeout(HANG_GUARD, async {
        loop {
            docker_ok(&["pause", &a.name]);
            docker_ok(&["unpause", &a.name]);
            if tokio::time::timeout(Duration::from_secs(2), changed.notified())
                .await
                .is_ok()
            {
                return;
            }
        }
    })
    .await;
    assert!(primed.is_ok(), "no event was heard from the engine");

    drain(&changed).await;
    a.stop();
    assert!(
        until_status(&found, &changed, &a, "exited").await,
        "stop not seen"
    );
    drain(&changed).await;
    b.start();
    assert!(
        until_status(&found, &changed, &b, "running").await,
        "start not seen"
    );
    // Exec events are not changes: running commands does not cause rescans.
    drain(&changed).await;
    docker_ok(&["exec", &b.name, "true"]);
    let quiet = tokio::time::timeout(Duration::from_secs(2), changed.notified()).await;
    assert!(quiet.is_err(), "an exec marked a change");
    watch.abort();
}
