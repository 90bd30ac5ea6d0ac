//! Assorted operator tools with a clear split between query and change forms: VPNs,
//! scanners, schedulers, firmware and hardware tools, Proxmox helpers, archives.

use super::super::args::Spec;
use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::Cmd;

/// Read when some word names a query and none names a change.
pub(crate) fn by_words(
    cmd: &Cmd<'_>,
    reads: &[&str],
    writes: &[&str],
    empty_read: bool,
) -> Verdict {
    if cmd.has_dynamic() {
        return cmd.dynamic_write();
    }
    let words: Vec<&str> = cmd
        .args
        .iter()
        .filter_map(|w| w.fixed())
        .filter(|t| !t.starts_with('-'))
        .collect();
    if let Some(w) = words.iter().find(|w| writes.contains(w)) {
        return Verdict::write(Risk::Medium, format!("{} {w} changes state", cmd.name));
    }
    if (words.is_empty() && empty_read) || words.iter().any(|w| reads.contains(w)) {
        return Verdict::read(
            format!(
                "{} {} only reads",
                cmd.name,
                words.first().copied().unwrap_or("")
            )
            .trim_end()
            .to_owned(),
        );
    }
    Verdict::unknown(format!(
        "{} {} is not known to be read-only",
        cmd.name,
        words.join(" ")
    ))
}

/// Read when every option is one of `reads` (and there may be plain arguments).
fn by_flags(cmd: &Cmd<'_>, reads: &[&str], empty_read: bool) -> Verdict {
    let flags: Vec<&str> = cmd
        .args
        .iter()
        .filter_map(|w| w.fixed())
        .filter(|t| t.starts_with('-'))
        .collect();
    if cmd.has_dynamic() {
        return cmd.dynamic_write();
    }
    if flags.is_empty() && !empty_read {
        return Verdict::write(
            Risk::Medium,
            format!("{} without a query option changes state", cmd.name),
        );
    }
    match flags.iter().find(|f| {
        !reads
            .iter()
            .any(|r| *f == r || f.starts_with(&format!("{r}=")))
    }) {
        Some(f) => Verdict::write(Risk::Medium, format!("{} {f} changes state", cmd.name)),
        None => Verdict::read(format!("{} query only reads", cmd.name)),
    }
}

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    const CHANGE: &[&str] = &[
        "set",
        "add",
        "del",
        "delete",
        "remove",
        "rm",
        "create",
        "destroy",
        "start",
        "stop",
        "restart",
        "reload",
        "enable",
        "disable",
        "up",
        "down",
        "update",
        "upgrade",
        "install",
        "uninstall",
        "purge",
        "download",
        "prune",
        "forget",
        "restore",
        "backup",
        "sync",
        "mount",
        "umount",
        "unmount",
        "login",
        "logout",
        "switch",
        "reset",
        "clear",
        "apply",
        "import",
        "export",
        "flush",
        "change",
        "modify",
        "edit",
        "run",
        "exec",
        "push",
        "pull",
        "upload",
        "gc",
        "garbage-collect",
        "refresh",
        "init",
        "format",
        "kill",
        "reboot",
        "shutdown",
        "power",
        "raw",
    ];
    let v = match cmd.name {
        "wg" => by_words(
            cmd,
            &["show", "showconf", "genkey", "genpsk", "pubkey"],
            &["set", "setconf", "addconf", "syncconf"],
            true,
        ),
        "tailscale" => by_words(
            cmd,
            &[
                "status",
                "ip",
                "netcheck",
                "version",
                "whois",
                "ping",
                "dns",
                "exit-node",
                "metrics",
                "lock",
            ],
            CHANGE,
            false,
        ),
        "nmap" => {
            let bad = cmd.args.iter().filter_map(|w| w.fixed()).find(|t| {
                t.starts_with("-o")
                    || t.starts_with("--script")
                    || t.starts_with("--resume")
                    || t.starts_with("--datadir")
                    || t.starts_with("--servicedb")
                    || t.starts_with("--versiondb")
                    || *t == "-iR"
                    || t.starts_with("--append-output")
                    || *t == "-sC"
                    || *t == "-A"
            });
            match bad {
                Some(f) if cmd.has_dynamic() || !f.is_empty() => Verdict::write(
                    Risk::Medium,
                    format!("nmap {f} writes files or runs scripts"),
                ),
                _ if cmd.has_dynamic() => cmd.dynamic_write(),
                _ => Verdict::read("nmap only probes"),
            }
        }
        "ssh-keyscan" => Verdict::read("ssh-keyscan only queries hosts"),
        "apt-key" => by_words(
            cmd,
            &["list", "finger", "fingerprint", "export", "exportall"],
            &["add", "del", "adv", "update", "net-update"],
            false,
        ),
        "debsums" => {
            if cmd
                .args
                .iter()
                .any(|w| w.text.starts_with("-g") || w.text.starts_with("--generate"))
            {
                Verdict::write(Risk::Low, "debsums -g writes checksum files")
            } else {
                Verdict::read("debsums only checks")
            }
        }
        "atq" => Verdict::read("atq only lists jobs"),
        "at" => {
            let p = cmd.parse(Spec {
                short_values: "qfMt",
                ..Spec::default()
            });
            if p.short('l') || p.short('c') {
                Verdict::read("at -l/-c only lists jobs")
            } else {
                Verdict::write(Risk::Medium, "at schedules or removes jobs")
            }
        }
        "update-alternatives" => by_flags(
            cmd,
            &["--display", "--list", "--query", "--get-selections"],
            false,
        ),
        "ldconfig" => {
            if cmd
                .args
                .iter()
                .all(|w| matches!(w.text.as_str(), "-p" | "--print-cache" | "-v" | "--verbose"))
                && cmd
                    .args
                    .iter()
                    .any(|w| w.text == "-p" || w.text == "--print-cache")
            {
                Verdict::read("ldconfig -p only prints the cache")
            } else {
                Verdict::write(Risk::Medium, "ldconfig rebuilds the linker cache")
            }
        }
        "pveam" => by_words(
            cmd,
            &["list", "available", "help"],
            &["download", "remove", "update"],
            false,
        ),
        "pve-firewall" => by_words(
            cmd,
            &["status", "compile", "localnet", "version", "help"],
            CHANGE,
            false,
        ),
        "proxmox-boot-tool" => by_words(
            cmd,
            &["status", "help"],
            &["init", "format", "refresh", "clean", "kernel", "reinit"],
            false,
        ),
        "proxmox-backup-manager" | "proxmox-backup-client" => by_words(
            cmd,
            &[
                "list",
                "show",
                "status",
                "snapshots",
                "files",
                "catalog",
                "version",
                "help",
            ],
            CHANGE,
            false,
        ),
        "exportfs" => {
            let only_verbose = cmd
                .args
                .iter()
                .all(|w| matches!(w.text.as_str(), "-v" | "-s"));
            if only_verbose {
                Verdict::read("exportfs lists exports")
            } else {
                Verdict::write(Risk::High, "exportfs changes NFS exports")
            }
        }
        "showmount" => Verdict::read("showmount only queries"),
        "nfsstat" => {
            if cmd
                .args
                .iter()
                .any(|w| w.text.starts_with("-z") || w.text == "--zero")
            {
                Verdict::write(Risk::Low, "nfsstat -z resets counters")
            } else {
                Verdict::read("nfsstat only reports")
            }
        }
        "hwclock" => by_flags(
            cmd,
            &[
                "--show",
                "-r",
                "--get",
                "--verbose",
                "-v",
                "--utc",
                "-u",
                "--localtime",
                "--debug",
                "--test",
                "--version",
                "-V",
            ],
            true,
        ),
        "taskset" => {
            let p = cmd.parse(Spec::default());
            if (p.flag('p', "pid")) && p.positionals.len() == 1 {
                Verdict::read("taskset -p PID only reports")
            } else {
                Verdict::write(
                    Risk::Medium,
                    "taskset changes CPU affinity or runs a command",
                )
            }
        }
        "chrt" => {
            let p = cmd.parse(Spec::default());
            if (p.flag('p', "pid") && p.positionals.len() == 1) || p.flag('m', "max") {
                Verdict::read("chrt -p PID only reports")
            } else {
                Verdict::write(Risk::Medium, "chrt changes scheduling or runs a command")
            }
        }
        "prlimit" => {
            let sets = cmd.args.iter().any(|w| {
                w.text.contains('=')
                    && !w.text.starts_with("--pid=")
                    && !w.text.starts_with("--output=")
            }) || cmd
                .args
                .iter()
                .any(|w| !w.text.starts_with('-') && w.text.parse::<u64>().is_err());
            if sets {
                Verdict::write(Risk::Medium, "prlimit changes limits or runs a command")
            } else {
                Verdict::read("prlimit only reports")
            }
        }
        "busctl" => by_words(
            cmd,
            &[
                "list",
                "status",
                "tree",
                "introspect",
                "get-property",
                "help",
            ],
            &["call", "set-property", "emit", "capture", "monitor"],
            true,
        ),
        "ipmitool" => by_words(
            cmd,
            &[
                "list",
                "print",
                "info",
                "status",
                "get",
                "elist",
                "reading",
                "getaccess",
                "summary",
                "selftest",
                "guid",
            ],
            &[
                "set",
                "power",
                "reset",
                "clear",
                "raw",
                "bmc",
                "identify",
                "bootdev",
                "bootparam",
                "cold",
                "warm",
                "delete",
                "disable",
                "enable",
                "sol",
                "shell",
                "exec",
                "activate",
                "deactivate",
                "write",
                "edit",
            ],
            false,
        ),
        "upsc" | "inxi" | "lsb_release" | "runlevel" | "arc_summary" | "pg_isready"
        | "pg_lsclusters" | "pg_controldata" | "locate" | "plocate" | "mlocate" | "neofetch"
        | "screenfetch" | "fastfetch" | "lstopo-no-graphics" => {
            Verdict::read(format!("{} only reports", cmd.name))
        }
        "yq" => {
            if cmd.args.iter().any(|w| {
                w.text == "-i"
                    || w.text.starts_with("--inplace")
                    || w.text.starts_with("--split-exp")
                    || w.text == "-s"
            }) {
                Verdict::write(Risk::Medium, "yq -i edits files in place")
            } else if cmd.has_dynamic() {
                cmd.dynamic_write()
            } else {
                Verdict::read("yq only reads")
            }
        }
        "7z" | "7za" | "7zr" => match cmd.args.first().and_then(|w| w.fixed()) {
            Some("l" | "t" | "i" | "h") => Verdict::read("7z l only lists"),
            Some("e" | "x") if cmd.args.iter().any(|w| w.text == "-so") => {
                Verdict::read("7z x -so extracts to standard output")
            }
            _ => Verdict::write(Risk::Medium, "7z writes archives or files"),
        },
        "tc" => {
            let words: Vec<&str> = cmd
                .args
                .iter()
                .filter_map(|w| w.fixed())
                .filter(|t| !t.starts_with('-'))
                .collect();
            match words.get(1) {
                _ if words.first() == Some(&"monitor") => Verdict::read("tc monitor only reads")
                    .unbounded(UnboundedCategory::Stream, None),
                None | Some(&"show" | &"ls" | &"list") => Verdict::read("tc show only reads"),
                Some(v) => Verdict::write(Risk::High, format!("tc {v} changes traffic control")),
            }
        }
        "wipefs" => {
            let p = cmd.parse(Spec {
                short_values: "ot",
                long_values: &["offset", "types"],
                ..Spec::default()
            });
            if p.flag('a', "all")
                || p.flag('o', "offset")
                || p.flag('b', "backup") && !p.flag('n', "no-act")
            {
                Verdict::write(Risk::High, "wipefs erases signatures")
            } else {
                Verdict::read("wipefs without -a only lists signatures")
            }
        }
        "npm" => by_words(
            cmd,
            &[
                "ls", "list", "ll", "la", "view", "info", "show", "outdated", "search", "root",
                "prefix", "bin", "help", "explain", "why", "get",
            ],
            &[
                "install",
                "i",
                "ci",
                "uninstall",
                "remove",
                "rm",
                "update",
                "up",
                "publish",
                "unpublish",
                "link",
                "prune",
                "dedupe",
                "set",
                "delete",
                "edit",
                "exec",
                "run",
                "run-script",
                "start",
                "stop",
                "restart",
                "test",
                "version",
                "init",
                "rebuild",
                "audit",
                "cache",
                "pack",
                "deprecate",
                "dist-tag",
                "owner",
                "access",
                "token",
                "login",
                "logout",
                "adduser",
                "fix",
            ],
            false,
        ),
        _ => return None,
    };
    Some(v)
}
