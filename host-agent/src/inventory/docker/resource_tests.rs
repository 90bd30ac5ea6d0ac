use super::*;
use serde_json::json;

const ID: &str = "74d4eede344479727257acca5098892bec884e7ae480aae8e22420c953936693";

fn summary(value: serde_json::Value) -> ContainerSummary {
    serde_json::from_value(value).unwrap()
}

fn web() -> ContainerSummary {
    summary(json!({
        "Id": ID,
        "Names": ["/other/web-alias", "/web"],
        "Image": "nginx:1.27",
        "Created": 1_700_000_000,
        "Ports": [
            {"IP": "0.0.0.0", "PrivatePort": 80, "PublicPort": 8080, "Type": "tcp"},
            {"IP": "::", "PrivatePort": 80, "PublicPort": 8080, "Type": "tcp"},
            {"PrivatePort": 443, "Type": "tcp"},
            {"PrivatePort": 53, "Type": "udp"}
        ],
        "Labels": {
            "com.docker.compose.project": "demo",
            "com.docker.compose.service": "frontend",
            "tier": "edge"
        },
        "State": "running",
        "NetworkSettings": {"Networks": {
            "bridge": {"IPAddress": "172.17.0.2", "GlobalIPv6Address": ""},
            "demo_default": {"IPAddress": "172.18.0.5", "GlobalIPv6Address": "fd00::5"}
        }},
        "Mounts": [
            {"Type": "volume", "Name": "data", "Source": "/var/lib/docker/volumes/data/_data",
             "Destination": "/data", "RW": true},
            {"Type": "bind", "Source": "/srv/conf", "Destination": "/etc/nginx", "RW": false},
            {"Type": "tmpfs", "Source": "", "Destination": "/run", "RW": true}
        ]
    }))
}

#[test]
fn a_listed_container_becomes_a_docker_container_resource() {
    let inspect: ContainerInspectResponse = serde_json::from_value(json!({
        "Id": ID,
        "Name": "/web",
        "RestartCount": 2,
        "State": {"Status": "running", "Running": true, "Health": {"Status": "healthy"}}
    }))
    .unwrap();
    let r = container_resource("agent-1", "web01", &web(), Some(&inspect)).unwrap();
    assert_eq!(r.id.to_string(), "docker_container:web01:74d4eede3444");
    assert_eq!(r.kind, ResourceKind::DockerContainer);
    assert_eq!(r.name, "web");
    assert_eq!(r.aliases, ["74d4eede3444", "frontend"]);
    assert_eq!(r.parent.unwrap().to_string(), "host:agent-1");
    assert_eq!(r.status, "running");
    assert_eq!(r.paths.len(), 1);
    assert_eq!(r.paths[0].agent, "agent-1");
    assert_eq!(r.paths[0].target.to_string(), "docker:74d4eede3444");
    assert_eq!(r.paths[0].via, Via::Docker);
    let f = &r.facts;
    assert_eq!(f.image.as_deref(), Some("nginx:1.27"));
    assert_eq!(f.ports, ["443/tcp", "53/udp", "8080->80/tcp"]);
    assert_eq!(
        f.mounts,
        [
            Mount {
                host_path: "/var/lib/docker/volumes/data/_data".into(),
                path: "/data".into(),
                read_only: false
            },
            Mount {
                host_path: "/srv/conf".into(),
                path: "/etc/nginx".into(),
                read_only: true
            },
        ]
    );
    assert_eq!(f.ips, ["172.17.0.2", "172.18.0.5", "fd00::5"]);
    assert_eq!(f.labels.len(), 3);
    assert_eq!(f.labels["tier"], "edge");
    assert_eq!(f.details["health"], "healthy");
    assert_eq!(f.details["compose_project"], "demo");
    assert_eq!(f.details["restart_count"], "2");
    assert_eq!(f.details["created"], "2023-11-14T22:13:20Z");
}

#[test]
fn the_same_container_listed_in_another_order_is_the_same_resource() {
    let a = container_resource("a", "h", &web(), None).unwrap();
    let mut shuffled = web();
    if let Some(p) = shuffled.ports.as_mut() {
        p.reverse();
    }
    if let Some(m) = shuffled.mounts.as_mut() {
        m.reverse();
    }
    let b = container_resource("a", "h", &shuffled, None).unwrap();
    assert_eq!(a, b);
    // Without an inspection the listed name that is not a link alias is used.
    assert_eq!(a.name, "web");
    assert!(!a.facts.details.contains_key("restart_count"));
}

#[test]
fn labels_are_capped_in_number_and_length() {
    let mut many = serde_json::Map::new();
    for i in 0..100 {
        many.insert(format!("label.{i:03}"), json!("v".repeat(1000)));
    }
    let s = summary(json!({"Id": ID, "Names": ["/x"], "State": "exited", "Labels": many}));
    let r = container_resource("a", "h", &s, None).unwrap();
    assert_eq!(r.facts.labels.len(), MAX_LABELS);
    assert!(r.facts.labels.contains_key("label.000"));
    assert!(!r.facts.labels.contains_key("label.099"));
    assert!(
        r.facts
            .labels
            .values()
            .all(|v| v.chars().count() == MAX_LABEL_VALUE_CHARS)
    );
    assert_eq!(r.status, "exited");
    assert_eq!(r.aliases, ["74d4eede3444"]);
}

#[test]
fn containers_without_a_usable_id_are_skipped() {
    for id in [
        json!(null),
        json!(""),
        json!("abc"),
        json!("zzzzzzzzzzzzzzzz"),
    ] {
        let s = summary(json!({"Id": id, "Names": ["/x"]}));
        assert!(container_resource("a", "h", &s, None).is_none(), "{id}");
    }
    // An empty listing still gives a resource with a placeholder status.
    let bare = summary(json!({"Id": ID}));
    let r = container_resource("a", "h", &bare, None).unwrap();
    assert_eq!((r.name.as_str(), r.status.as_str()), ("", "unknown"));
    assert!(r.facts.ports.is_empty() && r.facts.mounts.is_empty() && r.facts.ips.is_empty());
}

#[test]
fn hostile_host_names_are_made_id_parts() {
    assert_eq!(id_part("web01").as_deref(), Some("web01"));
    assert_eq!(id_part("my host:1\t").as_deref(), Some("my-host-1"));
    assert_eq!(id_part(" :\n"), None);
    assert_eq!(id_part(""), None);
    let id = format!(
        "docker_container:{}:74d4eede3444",
        id_part("a b:c").unwrap()
    );
    assert!(id.parse::<ResourceId>().is_ok(), "{id}");
}
