//! Checks the tables' arities against the real tools, where they are installed: each
//! tool's own help text is read, every option it shows with its argument form, and an
//! option the table declares with another arity fails the test (that is the class of
//! miss where a flag hides the next option, or a value shifts the subcommand). Options
//! the help shows but the table lacks are only listed: the engine denies them anyway.
//! A tool that is not installed is skipped with a note.

use super::table;
use super::table::{Arity, Node, OptSpec, Table};
use std::process::Command;

/// An option's argument form as a help text shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shown {
    None,
    Required,
    Optional,
}

/// (table tool, subcommand path, help command). The help command runs without a shell.
const PROBES: &[(&str, &[&str], &[&str])] = &[
    ("curl", &[], &["curl", "--help", "all"]),
    ("systemctl", &[], &["systemctl", "--help"]),
    ("journalctl", &[], &["journalctl", "--help"]),
    ("systemd-analyze", &[], &["systemd-analyze", "--help"]),
    ("hostnamectl", &[], &["hostnamectl", "--help"]),
    ("timedatectl", &[], &["timedatectl", "--help"]),
    ("localectl", &[], &["localectl", "--help"]),
    ("loginctl", &[], &["loginctl", "--help"]),
    ("networkctl", &[], &["networkctl", "--help"]),
    ("resolvectl", &[], &["resolvectl", "--help"]),
    ("coredumpctl", &[], &["coredumpctl", "--help"]),
    ("busctl", &[], &["busctl", "--help"]),
    ("systemd-cgls", &[], &["systemd-cgls", "--help"]),
    ("systemd-cgtop", &[], &["systemd-cgtop", "--help"]),
    ("psql", &[], &["psql", "--help"]),
    ("xargs", &[], &["xargs", "--help"]),
    ("watch", &[], &["watch", "--help"]),
    ("gzip", &[], &["gzip", "--help"]),
    ("xz", &[], &["xz", "--long-help"]),
    ("uniq", &[], &["uniq", "--help"]),
    ("sort", &[], &["sort", "--help"]),
    ("tar", &[], &["tar", "--help"]),
    ("bzip2", &[], &["bzip2", "--help"]),
    ("pigz", &[], &["pigz", "--help"]),
    ("lz4", &[], &["lz4", "-H"]),
    ("tshark", &[], &["tshark", "--help"]),
    ("dumpcap", &[], &["dumpcap", "--help"]),
    ("fdisk", &[], &["fdisk", "--help"]),
    ("sfdisk", &[], &["sfdisk", "--help"]),
    ("parted", &[], &["parted", "--help"]),
    ("zstd", &[], &["zstd", "-H"]),
    ("sgdisk", &[], &["sgdisk", "--help"]),
    ("kubectl", &[], &["kubectl", "options"]),
    ("kubectl", &["get"], &["kubectl", "get", "--help"]),
    ("kubectl", &["logs"], &["kubectl", "logs", "--help"]),
    ("kubectl", &["exec"], &["kubectl", "exec", "--help"]),
    (
        "kubectl",
        &["rollout", "status"],
        &["kubectl", "rollout", "status", "--help"],
    ),
    ("docker", &[], &["docker", "--help"]),
    ("docker", &["ps"], &["docker", "ps", "--help"]),
    ("docker", &["logs"], &["docker", "logs", "--help"]),
    ("docker", &["inspect"], &["docker", "inspect", "--help"]),
    ("docker", &["stats"], &["docker", "stats", "--help"]),
    ("docker", &["events"], &["docker", "events", "--help"]),
    ("docker", &["exec"], &["docker", "exec", "--help"]),
    ("docker", &["save"], &["docker", "save", "--help"]),
    ("docker", &["images"], &["docker", "images", "--help"]),
    (
        "docker",
        &["system", "df"],
        &["docker", "system", "df", "--help"],
    ),
    (
        "docker",
        &["swarm", "ca"],
        &["docker", "swarm", "ca", "--help"],
    ),
    ("git", &["ls-files"], &["git", "ls-files", "-h"]),
    ("git", &["ls-tree"], &["git", "ls-tree", "-h"]),
    ("git", &["ls-remote"], &["git", "ls-remote", "-h"]),
    ("git", &["cat-file"], &["git", "cat-file", "-h"]),
    ("git", &["describe"], &["git", "describe", "-h"]),
    ("git", &["grep"], &["git", "grep", "-h"]),
    ("git", &["for-each-ref"], &["git", "for-each-ref", "-h"]),
    ("git", &["show-ref"], &["git", "show-ref", "-h"]),
    ("git", &["archive"], &["git", "archive", "-h"]),
    ("git", &["fsck"], &["git", "fsck", "-h"]),
    ("git", &["help"], &["git", "help", "-h"]),
    ("git", &["branch"], &["git", "branch", "-h"]),
    ("git", &["tag"], &["git", "tag", "-h"]),
    ("git", &["blame"], &["git", "blame", "-h"]),
    ("git", &["shortlog"], &["git", "shortlog", "-h"]),
    ("git", &["count-objects"], &["git", "count-objects", "-h"]),
    ("git", &["name-rev"], &["git", "name-rev", "-h"]),
    ("git", &["merge-base"], &["git", "merge-base", "-h"]),
    ("git", &["check-ignore"], &["git", "check-ignore", "-h"]),
    ("git", &["cherry"], &["git", "cherry", "-h"]),
    ("git", &["show-branch"], &["git", "show-branch", "-h"]),
    ("wget", &[], &["wget", "--help"]),
    ("pg_dump", &[], &["pg_dump", "--help"]),
    ("pg_dumpall", &[], &["pg_dumpall", "--help"]),
    ("mysql", &[], &["mysql", "--help"]),
    ("redis-cli", &[], &["redis-cli", "--help"]),
    ("podman", &[], &["podman", "--help"]),
    ("podman", &["ps"], &["podman", "ps", "--help"]),
    ("podman", &["logs"], &["podman", "logs", "--help"]),
    ("podman", &["exec"], &["podman", "exec", "--help"]),
    ("podman", &["inspect"], &["podman", "inspect", "--help"]),
    ("podman", &["pod", "ps"], &["podman", "pod", "ps", "--help"]),
];

/// Tools whose help is cobra's: `-f, --filter filter   Filter…`, a lowercase type word
/// after the name for an option that takes a value (pigz writes its values `xxx`, Wireshark's tools
/// `pdml|ps|…` and `tap_name`).
const COBRA: &[&str] = &["docker", "podman", "helm", "pigz", "tshark", "dumpcap"];

/// Arities that differ from the help text on purpose, with why.
const KNOWN: &[(&str, &str, &str)] = &[
    // curl's help shows `--help <category>`, but the category is optional: declared as a
    // flag, so an option after it is seen (the help request ends curl before any write).
    ("curl", "help", "help's category is optional"),
    // The brackets are part of the value (`[protocol://]host[:port]`), which is required.
    ("curl", "proxy", "a required value shown with brackets"),
    ("curl", "preproxy", "a required value shown with brackets"),
    // `--help=commands` and `--help=variables` are listed as examples of `--help[=TOPIC]`.
    ("psql", "help", "optional topic, shown as examples"),
    // zstd's own parser takes a long option's value only after `=` (`--format=xz`), so
    // they are declared optional (attached only); its help writes them `--format=zstd`.
    ("zstd", "*", "values only after ="),
    // pflag shows every option as `--name=default:`; these three have a NoOptDefVal, so
    // a bare `--dry-run` is valid and the value must be attached.
    ("kubectl", "dry-run", "pflag NoOptDefVal"),
    ("kubectl", "validate", "pflag NoOptDefVal"),
    ("kubectl", "cascade", "pflag NoOptDefVal"),
    // wget's help shows `--hsts-file` bare; its option table (OPT_VALUE) takes a FILE.
    ("wget", "hsts-file", "help omits the value"),
    // redis-cli's help shows `-X` bare; its parser takes the tag that follows.
    ("redis-cli", "X", "help omits the tag"),
    // systemd-cgls parses `-u`/`--unit` and `--user-unit` with an optional value (getopt
    // "u::"); its help shows them bare.
    ("systemd-cgls", "unit", "optional value, help shows it bare"),
    (
        "systemd-cgls",
        "user-unit",
        "optional value, help shows it bare",
    ),
    // sort's help shows `-c, --check, --check=diagnose-first`: `--check`'s value is
    // optional.
    ("sort", "check", "optional value, shown as examples"),
    // pigz's help shows the levels as a range, `-0 to -9, -11`.
    ("pigz", "0", "a range of levels"),
    // lz4's help shows `--list FILE`: the files are operands, `--list` a mode.
    ("lz4", "list", "the files are operands"),
    // sfdisk's help shows each command option with its operands (`-d, --dump <dev>`);
    // the command options take no value.
    ("sfdisk", "activate", "operands shown after a command option"),
    ("sfdisk", "dump", "operands shown after a command option"),
    ("sfdisk", "json", "operands shown after a command option"),
    ("sfdisk", "backup-pt-sectors", "operands shown after a command option"),
    ("sfdisk", "show-geometry", "operands shown after a command option"),
    ("sfdisk", "list", "operands shown after a command option"),
    ("sfdisk", "list-free", "operands shown after a command option"),
    ("sfdisk", "reorder", "operands shown after a command option"),
    ("sfdisk", "show-size", "operands shown after a command option"),
    ("sfdisk", "verify", "operands shown after a command option"),
    ("sfdisk", "delete", "operands shown after a command option"),
    ("sfdisk", "part-label", "operands shown after a command option"),
    ("sfdisk", "part-type", "operands shown after a command option"),
    ("sfdisk", "part-uuid", "operands shown after a command option"),
    ("sfdisk", "part-attrs", "operands shown after a command option"),
    ("sfdisk", "disk-id", "operands shown after a command option"),
    ("sfdisk", "relocate", "operands shown after a command option"),
];

fn help(cmd: &[&str]) -> Option<String> {
    let (prog, args) = cmd.split_first()?;
    let out = Command::new(prog).args(args).output().ok()?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    Some(text)
}

/// An argument placeholder: `<file>`, `[=X]`, `NAME`, `FILE|-`, `#`.
fn is_placeholder(t: &str) -> bool {
    t.starts_with('<')
        || t.starts_with('[')
        || t.starts_with('{')
        || t == "#"
        || (t.chars().any(|c| c.is_ascii_uppercase())
            && t.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || "_-|:[]=.@".contains(c)))
}

/// Every option a help line shows: (short, long, argument form).
fn parse_help(text: &str, cobra: bool) -> Vec<(Option<char>, Option<String>, Shown)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        // Option lines are indented a little; a deeply indented one continues a
        // description (`-i to change the interval`).
        if !t.starts_with('-') || line.len() == t.len() || line.len() - t.len() > 12 {
            continue;
        }
        // kubectl (pflag): `-o, --output='':`, a flag when its default is a boolean.
        if let Some(flag) = t
            .strip_suffix(':')
            .filter(|f| f.contains("--") && f.contains('=') && !f.contains("  "))
        {
            let (names, default) = flag.split_once('=').unwrap_or((flag, ""));
            let mut short = None;
            let mut long = None;
            for n in names.split(", ") {
                match n.strip_prefix("--") {
                    Some(l) => long = Some(l.to_owned()),
                    None => short = n.strip_prefix('-').and_then(|c| c.chars().next()),
                }
            }
            let shown = if matches!(default, "true" | "false") {
                Shown::None
            } else {
                Shown::Required
            };
            out.push((short, long, shown));
            continue;
        }
        let head = t.split("  ").next().unwrap_or("").replace(", ", " ");
        let (mut short, mut long, mut shown) = (None, None, Shown::None);
        for tok in head.split_whitespace() {
            if let Some(l) = tok.strip_prefix("--") {
                // git 2.4x: `--[no-]cached` is `--cached` (and its negation).
                let l = l.strip_prefix("[no-]").unwrap_or(l);
                let (name, arg) = match l.find(['=', '[']) {
                    Some(i) => (&l[..i], &l[i..]),
                    None => (l, ""),
                };
                if name.is_empty() || long.is_some() {
                    break;
                }
                long = Some(name.to_owned());
                shown = if arg.starts_with('[') {
                    Shown::Optional
                } else if arg.starts_with('=') {
                    Shown::Required
                } else {
                    Shown::None
                };
            } else if let Some(s) = tok.strip_prefix('-') {
                let mut cs = s.chars();
                match (cs.next(), cs.next()) {
                    (Some(c), None) if short.is_none() && long.is_none() => short = Some(c),
                    _ => break,
                }
            } else if (cobra || is_placeholder(tok)) && shown == Shown::None {
                shown = if tok.starts_with('[') {
                    Shown::Optional
                } else {
                    Shown::Required
                };
                break;
            } else {
                break;
            }
        }
        if short.is_some() || long.is_some() {
            out.push((short, long, shown));
        }
    }
    out
}

fn node<'t>(t: &'t Table, path: &[&str]) -> Option<&'t Node> {
    path.iter().try_fold(&t.root, |n, p| n.subs.get(*p))
}

fn find<'t>(n: &'t Node, short: Option<char>, long: Option<&str>) -> Option<&'t OptSpec> {
    n.opts.iter().find(|o| match long {
        Some(l) => o.longs.iter().any(|x| x == l),
        None => short.is_some_and(|c| o.shorts.contains(&c)),
    })
}

fn agrees(declared: Arity, shown: Shown) -> bool {
    matches!(
        (declared, shown),
        (Arity::None, Shown::None)
            | (Arity::Required, Shown::Required)
            | (Arity::Optional | Arity::OptionalNumeric, Shown::Optional)
    )
}

#[test]
fn arities_agree_with_the_installed_tools() {
    let mut failures = Vec::new();
    for (tool, path, cmd) in PROBES {
        let Some(Ok(t)) = table(tool) else {
            failures.push(format!("{tool}: no table"));
            continue;
        };
        let Some(text) = help(cmd) else {
            eprintln!("skipped {tool}: `{}` is not installed", cmd.join(" "));
            continue;
        };
        let Some(n) = node(t, path) else {
            failures.push(format!("{tool}: no node {path:?}"));
            continue;
        };
        let shown = parse_help(&text, COBRA.contains(tool));
        let (mut checked, mut missing) = (0, Vec::new());
        for (short, long, form) in &shown {
            let Some(o) = find(n, *short, long.as_deref()) else {
                let short = short.map_or(String::new(), |c| format!("-{c}"));
                missing.push(long.clone().map_or(short, |l| format!("--{l}")));
                continue;
            };
            checked += 1;
            if KNOWN
                .iter()
                .any(|(k, id, _)| k == tool && (*id == o.id || *id == "*"))
            {
                continue;
            }
            if !agrees(o.arity, *form) {
                failures.push(format!(
                    "{tool}: {} is declared {:?} but `{}` shows {form:?}",
                    o.id,
                    o.arity,
                    cmd.join(" ")
                ));
            }
        }
        eprintln!(
            "{tool}: {checked} options checked against `{}`; not in the table: {missing:?}",
            cmd.join(" ")
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
