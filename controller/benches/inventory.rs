//! The controller's inventory graph at homelab-fleet scale: 50 Proxmox nodes × 40 LXCs ×
//! 10 Docker containers (20,000 containers + 2,000 guests + 50 nodes) reported by 50 node
//! agents, plus 200 agents inside guests reporting their own containers (the same
//! containers, merged). Measures applying one node agent's full update (~440 resources,
//! all changed, and all unchanged), a one-resource diff, and name search; prints p50/p99
//! and the heap the graph holds (counted by a global allocator) and the resident memory
//! growth. Then the fleet shape of issue 13 (`fleet`): 10,000 agents with a host and five
//! containers each. Run: `cargo bench -p vigil-controller --bench inventory`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[path = "inventory/fleet.rs"]
mod fleet;

use std::alloc::System;
use std::hint::black_box;
use std::time::{Duration, Instant};

use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use vigil_controller::inventory::{AgentUpdate, Inventory};
use vigil_shared::resource::{ExecPath, Facts, Resource, ResourceId, Via};

const NODES: usize = 50;
const GUESTS: usize = 40;
const CONTAINERS: usize = 10;
/// Guests (per node) with an agent inside.
const INSIDE: usize = 4;
const FULL_RUNS: usize = 200;
const DIFF_RUNS: usize = 2000;
const QUERIES: usize = 2000;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// The heap bytes allocated and not freed since [`Heap::start`].
struct Heap(Region<'static, System>);

impl Heap {
    fn start() -> Self {
        Heap(Region::new(GLOBAL))
    }

    fn live(&self) -> i64 {
        let change = self.0.change();
        change.bytes_allocated as i64 - change.bytes_deallocated as i64
    }
}

const SERVICES: [&str; 40] = [
    "jellyfin",
    "sonarr",
    "radarr",
    "lidarr",
    "prowlarr",
    "bazarr",
    "qbittorrent",
    "sabnzbd",
    "plex",
    "tautulli",
    "overseerr",
    "postgres",
    "redis",
    "mariadb",
    "nginx",
    "traefik",
    "grafana",
    "prometheus",
    "loki",
    "alertmanager",
    "homepage",
    "authentik",
    "vaultwarden",
    "nextcloud",
    "immich",
    "paperless",
    "gitea",
    "drone",
    "minio",
    "mosquitto",
    "zigbee2mqtt",
    "homeassistant",
    "nodered",
    "pihole",
    "unbound",
    "wireguard",
    "uptime-kuma",
    "portainer",
    "syncthing",
    "frigate",
];

fn node_agent(n: usize) -> String {
    format!("node-agent-{n:02}")
}

fn inside_agent(n: usize, g: usize) -> String {
    format!("guest-agent-{n:02}-{g:02}")
}

fn mac(n: usize, g: usize) -> String {
    format!("bc:24:11:00:{n:02x}:{g:02x}")
}

fn container_id(n: usize, g: usize, c: usize) -> String {
    format!("{:012x}", (n * 1_000_000 + g * 1_000 + c) * 7919)
}

fn path(agent: &str, target: &str, via: Via) -> ExecPath {
    ExecPath {
        agent: agent.to_owned(),
        target: target.parse().unwrap(),
        via,
    }
}

fn resource(
    id: ResourceId,
    name: String,
    parent: Option<ResourceId>,
    paths: Vec<ExecPath>,
) -> Resource {
    Resource {
        kind: id.kind(),
        id,
        name,
        aliases: Vec::new(),
        parent,
        status: "running".into(),
        paths,
        facts: Facts::default(),
    }
}

/// A container of guest `g` on node `n`, as the node's agent or the agent inside sees it.
fn container(n: usize, g: usize, c: usize, inside: Option<&str>) -> Resource {
    let short = container_id(n, g, c);
    let id: ResourceId = format!("docker_container:h{n:02}-g{g:02}:{short}")
        .parse()
        .unwrap();
    let service = SERVICES[(g + c) % SERVICES.len()];
    let name = format!("{service}-pve{n:02}-g{g:02}");
    let (parent, via) = match inside {
        Some(agent) => (
            ResourceId::Host(agent.to_owned()),
            path(agent, &format!("docker:{short}"), Via::Docker),
        ),
        None => (
            ResourceId::Lxc {
                node: format!("pve{n:02}"),
                vmid: 100 + g as u32,
            },
            path(
                &node_agent(n),
                &format!("lxc:{}/docker:{short}", 100 + g),
                Via::PctExec,
            ),
        ),
    };
    let mut r = resource(id, name, Some(parent), vec![via]);
    r.aliases = vec![short, service.to_owned()];
    r.facts.image = Some(format!("ghcr.io/example/{service}:latest"));
    r.facts.ports = vec!["8080/tcp".into()];
    r.facts
        .labels
        .insert("com.docker.compose.project".into(), format!("stack{g}"));
    r.facts
        .labels
        .insert("com.docker.compose.service".into(), service.to_owned());
    r
}

/// Node `n`'s full report: the node, its 40 LXCs and their 400 containers.
fn node_report(n: usize, status: &str) -> AgentUpdate {
    let agent = node_agent(n);
    let node = ResourceId::Node(format!("pve{n:02}"));
    let mut upserts = vec![resource(
        node.clone(),
        format!("pve{n:02}"),
        None,
        vec![path(&agent, "host", Via::Direct)],
    )];
    for g in 0..GUESTS {
        let vmid = 100 + g as u32;
        let id = ResourceId::Lxc {
            node: format!("pve{n:02}"),
            vmid,
        };
        let mut lxc = resource(
            id,
            format!("h{n:02}-g{g:02}"),
            Some(node.clone()),
            vec![path(&agent, &format!("lxc:{vmid}"), Via::PctExec)],
        );
        lxc.facts.macs = vec![mac(n, g)];
        lxc.status = status.to_owned();
        upserts.push(lxc);
        for c in 0..CONTAINERS {
            let mut r = container(n, g, c, None);
            r.status = status.to_owned();
            upserts.push(r);
        }
    }
    AgentUpdate {
        seq: 1,
        full: true,
        upserts,
        sources: vec!["host".into(), "proxmox".into()],
        ..AgentUpdate::default()
    }
}

/// The full report of the agent inside guest `g` of node `n`.
fn inside_report(n: usize, g: usize) -> AgentUpdate {
    let agent = inside_agent(n, g);
    let mut host = resource(
        ResourceId::Host(agent.clone()),
        format!("h{n:02}-g{g:02}"),
        None,
        vec![path(&agent, "host", Via::Direct)],
    );
    host.facts.macs = vec![mac(n, g), "02:42:ac:11:00:01".into()];
    let mut upserts = vec![host];
    upserts.extend((0..CONTAINERS).map(|c| container(n, g, c, Some(&agent))));
    AgentUpdate {
        seq: 1,
        full: true,
        upserts,
        sources: vec!["host".into(), "docker".into()],
        ..AgentUpdate::default()
    }
}

fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn percentiles(mut times: Vec<Duration>) -> (f64, f64, f64) {
    times.sort();
    let at = |p: f64| times[((times.len() as f64 - 1.0) * p) as usize].as_secs_f64() * 1e6;
    (at(0.50), at(0.99), at(1.0))
}

fn print(label: &str, times: Vec<Duration>) {
    let runs = times.len();
    let (p50, p99, max) = percentiles(times);
    println!("{label}: p50 {p50:.1} µs, p99 {p99:.1} µs, max {max:.1} µs ({runs} runs)");
}

fn main() {
    let rss_before = rss_kib();
    let heap = Heap::start();
    let inventory = Inventory::new();
    let start = Instant::now();
    for n in 0..NODES {
        inventory.apply(&node_agent(n), node_report(n, "running"));
        for g in 0..INSIDE {
            inventory.apply(&inside_agent(n, g), inside_report(n, g));
        }
    }
    let load = start.elapsed();
    let bytes = heap.live();
    let rss_after = rss_kib();
    let total = inventory.len();
    assert_eq!(
        total,
        NODES * (1 + GUESTS + GUESTS * CONTAINERS) + NODES * INSIDE
    );
    let linked = inventory
        .get(&"lxc:pve00:100".parse().unwrap())
        .unwrap()
        .resource;
    assert_eq!(
        linked.paths[0].via,
        Via::Direct,
        "the guest link is in place"
    );
    println!(
        "inventory: {total} resources from {} agents loaded in {:.0} ms",
        NODES * (1 + INSIDE),
        load.as_secs_f64() * 1e3
    );
    if let (Some(before), Some(after)) = (rss_before, rss_after) {
        println!(
            "memory: resident set grew by {:.1} MiB while loading",
            after.saturating_sub(before) as f64 / 1024.0
        );
    }
    let one_copy = {
        let heap = Heap::start();
        let reports: Vec<AgentUpdate> = (0..NODES).map(|n| node_report(n, "running")).collect();
        let bytes = heap.live();
        drop(black_box(reports));
        bytes
    };
    println!(
        "memory: the graph holds {:.1} MiB of heap, {:.0} B per resource; the node agents' \
         reports as received are {:.0} B per resource",
        bytes as f64 / (1024.0 * 1024.0),
        bytes as f64 / total as f64,
        one_copy as f64 / (NODES * (1 + GUESTS + GUESTS * CONTAINERS)) as f64,
    );

    // (a) One node agent's full update, every resource changed (status flips) or unchanged.
    let variants = [node_report(7, "stopped"), node_report(7, "running")];
    let mut changed = Vec::with_capacity(FULL_RUNS);
    for run in 0..FULL_RUNS {
        let update = variants[run % 2].clone();
        let t = Instant::now();
        inventory.apply(&node_agent(7), update);
        changed.push(t.elapsed());
    }
    let size = variants[0].upserts.len();
    print(
        &format!("full update, {size} resources, all changed"),
        changed,
    );
    let mut same = Vec::with_capacity(FULL_RUNS);
    for _ in 0..FULL_RUNS {
        let update = variants[1].clone();
        let t = Instant::now();
        inventory.apply(&node_agent(7), update);
        same.push(t.elapsed());
    }
    print(
        &format!("full update, {size} resources, none changed"),
        same,
    );

    // (b) A one-resource diff.
    let mut diffs = Vec::with_capacity(DIFF_RUNS);
    for run in 0..DIFF_RUNS {
        let mut r = container(11, run % GUESTS, run % CONTAINERS, None);
        r.status = format!("up {run} s");
        let update = AgentUpdate {
            seq: 2 + run as u64,
            upserts: vec![r],
            ..AgentUpdate::default()
        };
        let t = Instant::now();
        inventory.apply(&node_agent(11), update);
        diffs.push(t.elapsed());
    }
    print("one-resource diff", diffs);

    // (c) Search: exact names, name prefixes and hyphen parts, default page of 200.
    let mut queries = Vec::with_capacity(QUERIES);
    for i in 0..QUERIES {
        let (n, g) = (i % NODES, (i * 7) % GUESTS);
        let service = SERVICES[i % SERVICES.len()];
        queries.push(match i % 4 {
            0 => format!("{service}-pve{n:02}-g{g:02}"),
            1 => format!("h{n:02}-g{g:02}"),
            2 => service[..service.len().min(4)].to_owned(),
            _ => service.to_owned(),
        });
    }
    let mut searches = Vec::with_capacity(QUERIES);
    let mut hits = 0;
    for q in &queries {
        let t = Instant::now();
        let found = inventory.search(q, None, 200);
        searches.push(t.elapsed());
        hits += black_box(found).len();
    }
    println!(
        "search: {} hits on average (exact names, guest names, 4-letter prefixes, hyphen parts)",
        hits / QUERIES
    );
    print("search, limit 200", searches);
    let mut narrow = Vec::with_capacity(QUERIES);
    for q in &queries {
        let t = Instant::now();
        black_box(inventory.search(q, None, 10));
        narrow.push(t.elapsed());
    }
    print("search, limit 10", narrow);
    drop(inventory);

    fleet::run();
}
