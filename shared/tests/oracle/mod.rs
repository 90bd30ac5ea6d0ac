//! The write oracle: runs, for real, the commands of every corpus that the classifier
//! accepts as reads, each in a throw-away root (see `jail`), and fails on any write it
//! sees: a copy-up in the overlay's upper layer, a file left in the scratch `/dev`, `/run`
//! or `/tmp`, a write refused by the read-only `/proc` and `/sys` (EROFS), a changed host
//! name, or a change outside the jail (see `outside`). It also fails on a connection the
//! read's reach does not allow (`vigil_shared::policy::reach`): a UNIX socket connect from
//! a read whose programs need no socket, or an IPv4/IPv6 connect from one that needs no
//! network (strace records every `connect(2)`; nothing in the jail answers, so it is the
//! attempt that counts). Name-service lookups that the agent's sandbox refuses quietly
//! (nscd, systemd's user database) are not counted.
//!
//! `make test` runs a deterministic sample; `make oracle` (`VIGIL_ORACLE=full`) runs every
//! read. It needs root, overlayfs and util-linux; without them it says why and passes,
//! except under CI (`CI` set), where it fails. The network is a namespace with only a down
//! loopback, so reads that would connect out fail fast.
//!
//! Nothing is filtered out of the upper layer: overlayfs copies a file up only when it is
//! opened for writing or its metadata changes, and reading through the overlay updates
//! access times on the host's lower files (with `relatime`, at most once a day), not in
//! the upper layer. Reads known to write anyway are listed in `known.tsv` with why, and
//! printed on every run that meets them.

mod jail;
mod outside;

use crate::support;

use jail::{Ended, Jail, Outcome};
use outside::Snapshot;
use std::collections::BTreeSet;
use vigil_shared::policy::{Reach, classify, reach};

/// Per-command timeout, in seconds.
const SECONDS: u64 = 3;
/// How many reads `make test` runs.
const SAMPLE: usize = 120;

/// Reads known to write, each with why it stays accepted (`known.tsv`).
fn known_writes() -> Vec<(String, String)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/known.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (command, why) = l
                .split_once('\t')
                .unwrap_or_else(|| panic!("known.tsv: no tab in {l:?}"));
            (command.to_owned(), why.to_owned())
        })
        .collect()
}

/// Every distinct command the classifier accepts as a read, in corpus order.
fn reads() -> Vec<String> {
    let mut seen = BTreeSet::new();
    support::all_cases()
        .into_iter()
        .map(|case| case.command)
        .filter(|command| classify(command).allowed_as_read())
        .filter(|command| seen.insert(command.clone()))
        .collect()
}

/// Every read under `VIGIL_ORACLE=full`, else an evenly spread sample of [`SAMPLE`].
fn selection(reads: Vec<String>) -> Vec<String> {
    if std::env::var("VIGIL_ORACLE").is_ok_and(|v| v == "full") || reads.len() <= SAMPLE {
        return reads;
    }
    let step = reads.len().div_ceil(SAMPLE);
    reads.into_iter().step_by(step).collect()
}

/// Sockets that C libraries try on their own for name-service lookups; a read's sandbox
/// refuses them quietly and the lookup falls back to files.
const LOOKUPS: &[&str] = &[
    "/var/run/nscd/socket",
    "/run/nscd/socket",
    "/run/systemd/userdb/",
];

/// The connections `outcome` shows that `command`'s reach does not allow.
fn undeclared_connects(outcome: &Outcome, command: &str) -> Vec<String> {
    let reach = reach(command);
    outcome
        .connects
        .iter()
        .filter(|line| {
            let unix = line.contains("sa_family=AF_UNIX");
            let inet = line.contains("sa_family=AF_INET");
            if unix && LOOKUPS.iter().any(|p| line.contains(p)) {
                return false;
            }
            (unix && reach == Reach::Local) || (inet && reach != Reach::Network)
        })
        .map(|line| format!("connect not declared (reach {}): {line}", reach.as_str()))
        .collect()
}

/// The writes `outcome` shows, judged against the jail's state after `true`.
fn writes(outcome: &Outcome, baseline: &Outcome) -> Vec<String> {
    let mut found: Vec<String> = outcome
        .upper
        .iter()
        .map(|e| format!("upper: {e}"))
        .collect();
    for entry in outcome
        .scratch
        .iter()
        .filter(|e| !baseline.scratch.contains(e))
    {
        found.push(format!("scratch: {entry} created"));
    }
    for entry in baseline
        .scratch
        .iter()
        .filter(|e| !outcome.scratch.contains(e))
    {
        found.push(format!("scratch: {entry} removed"));
    }
    for line in outcome.stderr.lines() {
        if line.contains("Read-only file system") {
            found.push(format!("refused: {line}"));
        }
    }
    if outcome.hostname != baseline.hostname {
        found.push(format!("host name set to {:?}", outcome.hostname));
    }
    found
}

#[test]
fn reads_do_not_write() {
    if let Some(why) = jail::unavailable() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but the write oracle cannot run: {why}"
        );
        eprintln!("oracle: skipped: {why}");
        return;
    }
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("oracle-{}", std::process::id()));
    let sentinel = outside::make_sentinel(&dir).expect("sentinel tree");
    let mut jail = Jail::new(&dir, SECONDS);
    let baseline = jail.run("true").expect("the jail runs `true`");
    assert!(
        baseline.upper.is_empty(),
        "`true` wrote: {:?}",
        baseline.upper
    );
    assert_eq!(baseline.ended, Ended::Ok, "{}", baseline.stderr);

    let all = reads();
    let chosen = selection(all.clone());
    let known = known_writes();
    let (mut counts, mut findings, mut host_tmp) = ([0usize; 4], vec![], vec![]);
    let mut known_seen = vec![];
    for command in &chosen {
        let before = Snapshot::take(&sentinel);
        let outcome = jail.run(command).unwrap_or_else(|e| panic!("{e}"));
        let mut found = writes(&outcome, &baseline);
        found.extend(undeclared_connects(&outcome, command));
        let changes = Snapshot::take(&sentinel).changes_since(&before);
        found.extend(changes.escaped);
        host_tmp.extend(
            changes
                .host_tmp
                .into_iter()
                .map(|c| format!("{c} ({command:?})")),
        );
        counts[outcome.ended as usize] += 1;
        if outcome.ended == Ended::TimedOut {
            eprintln!("oracle: timed out: {command:?}");
        }
        let why = known.iter().find(|(k, _)| k == command).map(|(_, why)| why);
        if let (false, Some(why)) = (found.is_empty(), why) {
            known_seen.push(format!("{command:?}: {why}\n    {}", found.join("\n    ")));
        } else if !found.is_empty() {
            findings.push(format!("{command:?}\n    {}", found.join("\n    ")));
        }
    }
    std::fs::remove_dir_all(&dir).expect("remove the oracle's directory");
    if !host_tmp.is_empty() {
        eprintln!(
            "oracle: note: the host's /tmp changed while reads ran (the jail cannot reach \
             it; other processes write there):\n  {}",
            host_tmp.join("\n  ")
        );
    }
    for (command, _) in &known {
        let wrote = known_seen
            .iter()
            .any(|s| s.starts_with(&format!("{command:?}:")));
        if !wrote && (chosen.contains(command) || !all.contains(command)) {
            eprintln!("oracle: known.tsv entry no longer writes as a read: {command:?}");
        }
    }
    for seen in &known_seen {
        eprintln!("oracle: known write (tests/oracle/known.tsv): {seen}");
    }
    let [ok, failed, not_found, timed_out] = counts;
    eprintln!(
        "oracle: {} of {} reads run: {} exited 0, {} failed, {} not found, {} timed out \
         ({SECONDS} s); {} wrote, {} known writes",
        chosen.len(),
        all.len(),
        ok,
        failed,
        not_found,
        timed_out,
        findings.len(),
        known_seen.len()
    );
    assert!(
        findings.is_empty(),
        "{} reads wrote:\n{}",
        findings.len(),
        findings.join("\n")
    );
}
