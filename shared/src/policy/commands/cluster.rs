//! Status forms of cluster and virtualization tools a self-hosting operator meets: libvirt's
//! `virsh`, HashiCorp's `consul`, `vault` and `nomad`, and `etcdctl`. Only a listed
//! subcommand (or subcommand pair) is a read; everything else, a subcommand computed at run
//! time, or an option before the subcommand that we do not know (it may take a value that
//! would then be taken for the subcommand) is a write. Interactive shells (`virsh` alone)
//! and followers (`consul monitor`, `etcdctl watch`) are not reads.

use super::super::args::Spec;
use super::super::types::Risk;
use super::super::verdict::Verdict;
use super::{Cmd, by_subcommand};

/// `virsh` subcommands that only report.
const VIRSH_READS: &[&str] = &[
    "list",
    "dominfo",
    "domstate",
    "domstats",
    "domblklist",
    "domiflist",
    "domblkinfo",
    "domifaddr",
    "dumpxml",
    "nodeinfo",
    "nodememstats",
    "nodecpustats",
    "capabilities",
    "version",
    "uri",
    "hostname",
    "net-list",
    "net-info",
    "net-dumpxml",
    "pool-list",
    "pool-info",
    "pool-dumpxml",
    "vol-list",
    "vol-info",
    "snapshot-list",
    "iface-list",
];

/// `(subcommand, sub-subcommand)` pairs that only report; `None` allows any second word.
type Pairs<'a> = &'a [(&'a str, Option<&'a [&'a str]>)];

const CONSUL_READS: Pairs<'static> = &[
    ("members", None),
    ("info", None),
    ("version", None),
    ("catalog", Some(&["services", "nodes", "datacenters"])),
    ("operator", Some(&["raft"])),
];
const VAULT_READS: Pairs<'static> = &[("status", None), ("version", None)];
const NOMAD_READS: Pairs<'static> = &[
    ("status", None),
    ("version", None),
    ("node", Some(&["status"])),
    ("job", Some(&["status"])),
    ("server", Some(&["members"])),
    ("alloc", Some(&["status"])),
];
const ETCDCTL_READS: Pairs<'static> = &[
    ("version", None),
    ("get", None),
    ("endpoint", Some(&["health", "status", "hashkv"])),
    ("member", Some(&["list"])),
    ("alarm", Some(&["list"])),
];

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "virsh" => by_subcommand(cmd, Spec::default(), VIRSH_READS, false),
        "consul" => by_pairs(cmd, CONSUL_READS),
        "vault" => by_pairs(cmd, VAULT_READS),
        "nomad" => by_pairs(cmd, NOMAD_READS),
        "etcdctl" => by_pairs(cmd, ETCDCTL_READS),
        _ => return None,
    };
    Some(v)
}

/// The first two positionals against `pairs`. `consul operator raft` is a read only as
/// `list-peers`.
fn by_pairs(cmd: &Cmd<'_>, pairs: Pairs<'_>) -> Verdict {
    let p = cmd.parse(Spec::default());
    let words: Vec<Option<&str>> = p.positionals.iter().map(|w| w.fixed()).collect();
    let Some(first) = words.first() else {
        return Verdict::unknown(format!("{}: missing subcommand", cmd.name));
    };
    let Some(first) = *first else {
        return Verdict::unknown(format!("{}: subcommand is computed at run time", cmd.name));
    };
    let second = words.get(1).copied().flatten();
    let allowed = pairs.iter().any(|(sub, next)| {
        *sub == first
            && match next {
                None => true,
                Some(next) => second.is_some_and(|s| next.contains(&s)),
            }
    });
    // `consul operator raft` reads only as `list-peers`.
    let raft_write = first == "operator" && words.get(2).copied().flatten() != Some("list-peers");
    if allowed && !raft_write {
        let what = second.filter(|_| pairs.iter().any(|(s, n)| *s == first && n.is_some()));
        let name = what.map_or(first.to_owned(), |s| format!("{first} {s}"));
        Verdict::read(format!("{} {name} only reports", cmd.name))
    } else {
        Verdict::write(
            Risk::Medium,
            format!("{} {first} is not a known read form", cmd.name),
        )
    }
}
