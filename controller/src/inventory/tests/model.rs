//! A naive model of the inventory — keep the reports, rebuild the whole merged view from
//! them on every read — and a test that random update sequences give the incremental graph
//! the same view and the same search results.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

use vigil_shared::ids::ExecTarget;
use vigil_shared::resource::{ExecPath, Resource, ResourceId, ResourceKind, Via};

use super::{R, id, r};
use crate::inventory::{AgentUpdate, Inventory, ResourceView};

/// One agent's report: its last seq, and each resource with the stamp of its last change.
type Report = (u64, BTreeMap<ResourceId, (Resource, u64)>);

/// The reports as the rules describe them, with a stamp for "most recently updated".
#[derive(Debug, Default)]
struct Model {
    reports: BTreeMap<String, Report>,
    labels: BTreeMap<String, ResourceId>,
    clock: u64,
}

fn via_rank(via: Via) -> u8 {
    match via {
        Via::Direct => 0,
        Via::Docker | Via::Kubernetes => 1,
        Via::PctExec => 2,
        Via::QmGuestExec => 3,
    }
}

fn normal_macs(r: &Resource) -> BTreeSet<String> {
    r.facts
        .macs
        .iter()
        .map(|m| m.trim().to_lowercase())
        .filter(|m| !m.is_empty() && m != "00:00:00:00:00:00")
        .collect()
}

impl Model {
    fn apply(&mut self, agent: &str, update: &AgentUpdate) {
        let entry = self.reports.entry(agent.to_owned()).or_default();
        if !update.full && update.seq < entry.0 {
            return;
        }
        self.clock += 1;
        entry.0 = update.seq;
        let mut next = if update.full {
            BTreeMap::new()
        } else {
            entry.1.clone()
        };
        for resource in &update.upserts {
            let mut resource = resource.clone();
            if matches!(&resource.id, ResourceId::Host(a) if a != agent) {
                continue;
            }
            let direct_ok = matches!(resource.id, ResourceId::Host(_) | ResourceId::Node(_));
            resource.paths.retain(|p| direct_ok || p.via != Via::Direct);
            for p in &mut resource.paths {
                p.agent = agent.to_owned();
            }
            let stamp = match entry.1.get(&resource.id) {
                Some((old, stamp)) if *old == resource => *stamp,
                _ => self.clock,
            };
            next.insert(resource.id.clone(), (resource, stamp));
        }
        if !update.full {
            for gone in &update.removed {
                next.remove(gone);
            }
        }
        entry.1 = next;
    }

    fn forget(&mut self, agent: &str) {
        self.reports.remove(agent);
        self.labels.remove(agent);
    }

    fn label(&mut self, agent: &str, guest: Option<ResourceId>) {
        match guest.filter(|g| matches!(g.kind(), ResourceKind::Lxc | ResourceKind::Vm)) {
            Some(g) => self.labels.insert(agent.to_owned(), g),
            None => self.labels.remove(agent),
        };
    }

    /// Every resource merged from scratch, guest links applied.
    fn views(&self) -> BTreeMap<ResourceId, ResourceView> {
        let mut by_id: BTreeMap<&ResourceId, Vec<(&str, &Resource, u64)>> = BTreeMap::new();
        for (agent, (_, resources)) in &self.reports {
            for (rid, (res, stamp)) in resources {
                by_id.entry(rid).or_default().push((agent, res, *stamp));
            }
        }
        let mut base: BTreeMap<ResourceId, Resource> = BTreeMap::new();
        for (rid, reports) in by_id {
            let best = |r: &Resource| r.paths.iter().map(|p| via_rank(p.via)).min().unwrap_or(99);
            let winner = reports
                .iter()
                .min_by_key(|(a, r, s)| (best(r), Reverse(*s), *a))
                .unwrap();
            let mut all: Vec<(u8, &str, &ExecPath)> = Vec::new();
            for (a, r, _) in &reports {
                for p in &r.paths {
                    all.push((via_rank(p.via), a, p));
                }
            }
            all.sort_by_key(|(rank, a, _)| (*rank, *a));
            let mut paths: Vec<ExecPath> = Vec::new();
            for (_, _, p) in all {
                if !paths.contains(p) {
                    paths.push(p.clone());
                }
            }
            let aliases: BTreeSet<String> = reports
                .iter()
                .flat_map(|(_, r, _)| r.aliases.clone())
                .collect();
            let mut merged = winner.1.clone();
            merged.paths = paths;
            merged.aliases = aliases.into_iter().collect();
            base.insert(rid.clone(), merged);
        }
        let agents: BTreeSet<&String> = self.reports.keys().chain(self.labels.keys()).collect();
        let mut links: BTreeMap<String, ResourceId> = BTreeMap::new();
        for agent in agents {
            let link = if let Some(g) = self.labels.get(agent) {
                base.contains_key(g).then(|| g.clone())
            } else if let Some(host) = base.get(&ResourceId::Host(agent.clone())) {
                let hm = normal_macs(host);
                let guests: Vec<&ResourceId> = base
                    .iter()
                    .filter(|(g, r)| {
                        matches!(g.kind(), ResourceKind::Lxc | ResourceKind::Vm)
                            && !normal_macs(r).is_disjoint(&hm)
                    })
                    .map(|(g, _)| g)
                    .collect();
                (guests.len() == 1).then(|| guests[0].clone())
            } else {
                None
            };
            if let Some(g) = link {
                links.insert(agent.clone(), g);
            }
        }
        let mut views: BTreeMap<ResourceId, ResourceView> = BTreeMap::new();
        for (rid, res) in &base {
            let mut res = res.clone();
            let inside: Vec<&String> = links
                .iter()
                .filter(|(_, g)| *g == rid)
                .map(|(a, _)| a)
                .collect();
            if !inside.is_empty() {
                let mut paths: Vec<ExecPath> = inside
                    .iter()
                    .map(|a| ExecPath {
                        agent: (*a).clone(),
                        target: ExecTarget::Host,
                        via: Via::Direct,
                    })
                    .collect();
                paths.append(&mut res.paths);
                res.paths = paths;
                let mut aliases: BTreeSet<String> = res.aliases.drain(..).collect();
                for a in inside {
                    let host = ResourceId::Host(a.clone());
                    if let Some(h) = base.get(&host).filter(|h| !h.name.is_empty()) {
                        aliases.insert(h.name.clone());
                    }
                    aliases.insert(host.to_string());
                }
                res.aliases = aliases.into_iter().collect();
            }
            res.parent = match (&res.id, &res.parent) {
                (ResourceId::Host(a), _) if links.contains_key(a) => links.get(a).cloned(),
                (_, Some(ResourceId::Host(a))) if links.contains_key(a) => links.get(a).cloned(),
                (_, p) => p.clone(),
            };
            views.insert(
                rid.clone(),
                ResourceView {
                    resource: res,
                    children: Vec::new(),
                },
            );
        }
        let pairs: Vec<(ResourceId, ResourceId)> = views
            .values()
            .filter_map(|v| Some((v.resource.parent.clone()?, v.resource.id.clone())))
            .collect();
        for (p, c) in pairs {
            if let Some(v) = views.get_mut(&p) {
                v.children.push(c);
            }
        }
        for v in views.values_mut() {
            v.children.sort();
        }
        views
    }
}

/// The search rules, applied to every view.
fn naive_search(
    views: &BTreeMap<ResourceId, ResourceView>,
    query: &str,
    limit: usize,
) -> Vec<ResourceId> {
    let q = query.trim().to_lowercase();
    let mut hits: Vec<(u8, ResourceId)> = Vec::new();
    for (rid, v) in views {
        let id_text = rid.to_string().to_lowercase();
        let names: Vec<String> = std::iter::once(&v.resource.name)
            .chain(&v.resource.aliases)
            .map(|n| n.trim().to_lowercase())
            .filter(|n| !n.is_empty())
            .collect();
        let parts: Vec<&str> = names
            .iter()
            .flat_map(|n| n.split(|c: char| "-_.".contains(c) || c.is_whitespace()))
            .filter(|p| !p.is_empty())
            .collect();
        let rank = if id_text == q {
            0
        } else if names.contains(&q) {
            1
        } else if id_text.starts_with(&q) || names.iter().any(|n| n.starts_with(&q)) {
            2
        } else if parts.contains(&q.as_str()) {
            3
        } else if parts.iter().any(|p| p.starts_with(&q)) {
            4
        } else {
            continue;
        };
        hits.push((rank, rid.clone()));
    }
    hits.sort();
    hits.into_iter().take(limit).map(|(_, id)| id).collect()
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const NODES: [&str; 2] = ["n1", "n2"];
const GUESTS: [&str; 3] = ["g1", "g2", "g3"];
const NAMES: [&str; 8] = [
    "media-jellyfin-1",
    "jellyfin",
    "web.front",
    "db_main",
    "Jelly",
    "sonarr",
    "",
    "media box",
];
const MACS: [&str; 5] = [
    "aa:00:00:00:00:01",
    "AA:00:00:00:00:02",
    "aa:00:00:00:00:03",
    "aa:00:00:00:00:04",
    "00:00:00:00:00:00",
];
const GUEST_IDS: [&str; 6] = [
    "lxc:p1:101",
    "vm:p1:102",
    "vm:p1:150",
    "lxc:p2:201",
    "lxc:p2:202",
    "vm:p2:250",
];

fn random_macs(rng: &mut Rng) -> Vec<&'static str> {
    (0..rng.below(3)).map(|_| rng.pick(&MACS)).collect()
}

/// Something `agent` might report (now and then something it may not).
fn random_resource(rng: &mut Rng, agent: &str) -> R {
    let name = rng.pick(&NAMES);
    let container = format!("docker_container:h{}:c{}", rng.below(2), rng.below(4));
    let mut res = if NODES.contains(&agent) {
        let node = if agent == "n1" { "p1" } else { "p2" };
        match rng.below(5) {
            0 => r(&format!("node:{node}"), name).path(agent, "host", Via::Direct),
            1 | 2 => {
                let vmid = 100 * (1 + usize::from(agent == "n2")) + rng.below(3);
                let guest = if vmid % 100 == 2 { "vm" } else { "lxc" };
                let via = if guest == "vm" {
                    Via::QmGuestExec
                } else {
                    Via::PctExec
                };
                let guest = r(&format!("{guest}:{node}:{vmid}"), name)
                    .parent(&format!("node:{node}"))
                    .macs(&random_macs(rng));
                if rng.chance(80) {
                    guest.path(
                        agent,
                        &format!("{}:{vmid}", if via == Via::PctExec { "lxc" } else { "vm" }),
                        via,
                    )
                } else {
                    guest.path(agent, "host", Via::Direct)
                }
            }
            _ => r(&container, name).parent(&format!("lxc:{node}:101")).path(
                agent,
                "lxc:101/docker:c1",
                Via::PctExec,
            ),
        }
    } else {
        match rng.below(4) {
            0 => r(&format!("host:{agent}"), name)
                .path(agent, "host", Via::Direct)
                .macs(&random_macs(rng)),
            1 => r("host:g1", name).path(agent, "host", Via::Direct),
            _ => r(&container, name).parent(&format!("host:{agent}")).path(
                agent,
                "docker:c1",
                Via::Docker,
            ),
        }
    };
    if rng.chance(30) {
        res = res.alias(rng.pick(&NAMES));
    }
    if rng.chance(30) {
        res = res.status("exited");
    }
    res
}

fn check(inv: &Inventory, model: &Model, step: usize) {
    let views = model.views();
    let all = inv.search("", None, usize::MAX);
    let ids: Vec<&ResourceId> = all.iter().map(|r| &r.id).collect();
    assert_eq!(ids, views.keys().collect::<Vec<_>>(), "step {step}: ids");
    for (rid, view) in &views {
        assert_eq!(inv.get(rid).as_ref(), Some(view), "step {step}: {rid}");
    }
    for q in NAMES
        .iter()
        .chain(&["jel", "media", "p1", "host:g", "lxc:p1:101", "1", "box"])
    {
        if q.trim().is_empty() {
            continue;
        }
        let found: Vec<ResourceId> = inv.search(q, None, 6).into_iter().map(|r| r.id).collect();
        assert_eq!(
            found,
            naive_search(&views, q, 6),
            "step {step}: search {q:?}"
        );
    }
}

#[test]
fn incremental_updates_match_a_naive_rebuild() {
    for seed in 1..=12u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let inv = Inventory::new();
        let mut model = Model::default();
        let mut seqs: BTreeMap<&str, u64> = BTreeMap::new();
        for step in 0..150 {
            let agent = rng.pick(&[NODES[0], NODES[1], GUESTS[0], GUESTS[1], GUESTS[2]]);
            match rng.below(20) {
                0 => {
                    inv.forget_agent(agent);
                    model.forget(agent);
                    seqs.remove(agent);
                }
                1 | 2 => {
                    let guest = rng.chance(70).then(|| {
                        let pool = [GUEST_IDS.as_slice(), &["node:p1"]].concat();
                        id(rng.pick(&pool))
                    });
                    inv.set_guest_label(agent, guest.clone());
                    model.label(agent, guest);
                }
                kind => {
                    let full = kind < 7;
                    let seq = seqs.entry(agent).or_insert(0);
                    *seq = if full && rng.chance(50) {
                        1
                    } else if rng.chance(10) {
                        seq.saturating_sub(1)
                    } else {
                        *seq + 1
                    };
                    let mut upserts: Vec<Resource> = Vec::new();
                    for _ in 0..rng.below(6) {
                        let res = random_resource(&mut rng, agent).0;
                        if !upserts.iter().any(|u| u.id == res.id) {
                            upserts.push(res);
                        }
                    }
                    let removed = (0..rng.below(3))
                        .map(|_| random_resource(&mut rng, agent).0.id)
                        .collect();
                    let update = AgentUpdate {
                        seq: *seq,
                        full,
                        upserts,
                        removed,
                        ..AgentUpdate::default()
                    };
                    model.apply(agent, &update);
                    inv.apply(agent, update);
                }
            }
            check(&inv, &model, step);
        }
    }
}

#[test]
fn the_model_sees_links_at_all() {
    // Guards the random test against a generator that never links anything.
    let inv = Inventory::new();
    let mut model = Model::default();
    let updates = [
        (
            "n1",
            vec![
                r("lxc:p1:101", "web")
                    .path("n1", "lxc:101", Via::PctExec)
                    .macs(&["aa:00:00:00:00:01"]),
            ],
        ),
        (
            "g1",
            vec![
                r("host:g1", "web-host")
                    .path("g1", "host", Via::Direct)
                    .macs(&["AA:00:00:00:00:01"]),
            ],
        ),
    ];
    for (agent, resources) in updates {
        let update = AgentUpdate {
            seq: 1,
            full: true,
            upserts: resources.into_iter().map(|r| r.0).collect(),
            ..AgentUpdate::default()
        };
        model.apply(agent, &update);
        inv.apply(agent, update);
    }
    let views = model.views();
    assert_eq!(
        views[&id("host:g1")].resource.parent,
        Some(id("lxc:p1:101"))
    );
    check(&inv, &model, 0);
}
