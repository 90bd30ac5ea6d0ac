//! The fleet shape of issue 13: 10,000 agents, each reporting its own host and five
//! Docker containers on it (60,000 resources, each from one agent). Measures the heap the
//! graph holds per agent and per resource, a full update of one agent and search.

use std::hint::black_box;
use std::time::Instant;

use vigil_controller::inventory::{AgentUpdate, Inventory};
use vigil_shared::resource::{ResourceId, Via};

use super::{Heap, SERVICES, path, print, resource};

const AGENTS: usize = 10_000;
const CONTAINERS: usize = 5;
const RUNS: usize = 2000;

/// An agent id as the controller issues them (a UUID).
fn agent(a: usize) -> String {
    format!(
        "{:08x}-5e1f-4c3a-9d2e-{:012x}",
        a * 2_654_435_761 % (1 << 32),
        a
    )
}

/// Agent `a`'s full report: its host and its containers.
fn report(a: usize, status: &str) -> AgentUpdate {
    let agent = agent(a);
    let host_id = ResourceId::Host(agent.clone());
    let mut host = resource(
        host_id.clone(),
        format!("srv{a:05}.example.lan"),
        None,
        vec![path(&agent, "host", Via::Direct)],
    );
    host.facts.macs = vec![format!(
        "52:54:00:{:02x}:{:02x}:{:02x}",
        a >> 16,
        (a >> 8) & 255,
        a & 255
    )];
    host.facts.ips = vec![format!("10.{}.{}.{}", a >> 16, (a >> 8) & 255, a & 255)];
    host.facts.details.insert("cpus".into(), "4".into());
    host.facts
        .details
        .insert("memory_bytes".into(), "8589934592".into());
    host.facts
        .details
        .insert("os".into(), "Debian GNU/Linux 13 (trixie)".into());
    let mut upserts = vec![host];
    for c in 0..CONTAINERS {
        let short = format!("{:012x}", (a * 16 + c) * 7919);
        let service = SERVICES[(a + c) % SERVICES.len()];
        let mut r = resource(
            format!("docker_container:{agent}:{short}").parse().unwrap(),
            format!("{service}-{a:05}"),
            Some(host_id.clone()),
            vec![path(&agent, &format!("docker:{short}"), Via::Docker)],
        );
        r.status = status.to_owned();
        r.aliases = vec![short, service.to_owned()];
        r.facts.image = Some(format!("ghcr.io/example/{service}:latest"));
        r.facts.ports = vec!["8080/tcp".into()];
        r.facts.labels.insert(
            "com.docker.compose.project".into(),
            format!("stack{}", a % 97),
        );
        r.facts
            .labels
            .insert("com.docker.compose.service".into(), service.to_owned());
        upserts.push(r);
    }
    AgentUpdate {
        seq: 1,
        full: true,
        upserts,
        sources: vec!["host".into(), "docker".into()],
        ..AgentUpdate::default()
    }
}

/// Load the fleet, print its memory, time a full update and search, then forget it all.
pub fn run() {
    let heap = Heap::start();
    let inventory = Inventory::new();
    let start = Instant::now();
    for a in 0..AGENTS {
        inventory.apply(&agent(a), report(a, "running"));
    }
    let load = start.elapsed();
    let bytes = heap.live();
    let total = inventory.len();
    assert_eq!(total, AGENTS * (1 + CONTAINERS));
    println!(
        "fleet: {total} resources from {AGENTS} agents loaded in {:.0} ms; heap {:.1} MiB, \
         {:.0} B per agent, {:.0} B per resource",
        load.as_secs_f64() * 1e3,
        bytes as f64 / (1024.0 * 1024.0),
        bytes as f64 / AGENTS as f64,
        bytes as f64 / total as f64,
    );

    let variants = [report(4242, "exited"), report(4242, "running")];
    let mut times = Vec::with_capacity(RUNS);
    for run in 0..RUNS {
        let update = variants[run % 2].clone();
        let t = Instant::now();
        inventory.apply(&agent(4242), update);
        times.push(t.elapsed());
    }
    print(
        "fleet: one agent's full update, 6 resources, all changed",
        times,
    );

    let mut times = Vec::with_capacity(RUNS);
    for i in 0..RUNS {
        let query = match i % 3 {
            0 => format!("srv{:05}.example.lan", i * 5 % AGENTS),
            1 => format!("{}-{:05}", SERVICES[i % SERVICES.len()], i * 7 % AGENTS),
            _ => format!("srv{:03}", i % 100),
        };
        let t = Instant::now();
        black_box(inventory.search(&query, None, 10));
        times.push(t.elapsed());
    }
    print("fleet: search, limit 10", times);

    for a in 0..AGENTS {
        inventory.forget_agent(&agent(a));
    }
    assert!(inventory.is_empty());
    drop(inventory);
    println!(
        "fleet: heap after forgetting every agent and dropping the inventory: {} B",
        heap.live()
    );
}
