//! Storage tools: zfs, zpool, ceph, rbd, smartctl, mount, swapon, mdadm, btrfs, lvm,
//! fdisk/parted, hdparm, nvme, multipath.

use super::super::args::Spec;
use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::{Cmd, by_subcommand, parted};

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "zfs" => super::zfs::zfs(cmd),
        "zpool" => super::zfs::zpool(cmd),
        "ceph" => ceph(cmd),
        "rbd" => super::misc::by_words(
            cmd,
            &[
                "ls",
                "list",
                "info",
                "du",
                "disk-usage",
                "status",
                "showmapped",
            ],
            &[
                "create",
                "rm",
                "remove",
                "rename",
                "resize",
                "map",
                "unmap",
                "protect",
                "unprotect",
                "rollback",
                "purge",
                "clone",
                "flatten",
                "copy",
                "cp",
                "mv",
                "import",
                "export",
                "import-diff",
                "export-diff",
                "lock",
                "unlock",
                "feature",
                "bench",
                "sparsify",
                "trash",
                "migration",
                "mirror",
                "config",
                "object-map",
                "journal",
                "group",
                "namespace",
                "pool",
                "encryption",
                "device",
            ],
            false,
        ),
        "rados" => by_subcommand(
            cmd,
            Spec {
                short_values: "p",
                long_values: &["pool"],
                ..Spec::default()
            },
            &[
                "df",
                "lspools",
                "ls",
                "stat",
                "list-inconsistent-pg",
                "list-inconsistent-obj",
            ],
            false,
        ),
        "smartctl" => smartctl(cmd),
        "mount" => mount(cmd),
        "swapon" => {
            let p = cmd.parse(Spec::default());
            if p.positionals.is_empty() && !p.flag('a', "all") && !p.flag('e', "ifexists") {
                Verdict::read("swapon without devices only reports")
            } else {
                Verdict::write(Risk::Medium, "swapon enables swap")
            }
        }
        "mdadm" => cmd.by_table("mdadm"),
        "btrfs" => btrfs(cmd),
        "sgdisk" => cmd.by_table("sgdisk"),
        "fdisk" | "sfdisk" | "gdisk" => cmd.by_table(cmd.name),
        "parted" => parted::parted(cmd),
        "hdparm" => {
            let p = cmd.parse(Spec::default());
            let read_only = !cmd.has_dynamic() && p.unlisted("IitTgCv", &[]).is_none();
            if read_only {
                Verdict::read("hdparm query only reads")
            } else {
                Verdict::write(Risk::High, "hdparm changes drive settings")
            }
        }
        "nvme" => by_subcommand(
            cmd,
            Spec::default(),
            &[
                "list",
                "list-subsys",
                "smart-log",
                "id-ctrl",
                "id-ns",
                "error-log",
                "fw-log",
                "get-log",
                "list-ns",
                "show-regs",
                "version",
                "help",
                "get-feature",
            ],
            false,
        ),
        "multipath" => {
            let p = cmd.parse(Spec::default());
            if p.short('l') || p.short('L') || (p.short('v') && p.short('l')) {
                Verdict::read("multipath -ll only lists")
            } else {
                Verdict::write(Risk::High, "multipath changes device maps")
            }
        }
        "tune2fs" => {
            let p = cmd.parse(Spec::default());
            if !cmd.has_dynamic() && p.unlisted("l", &[]).is_none() && p.short('l') {
                Verdict::read("tune2fs -l only lists")
            } else {
                Verdict::write(Risk::High, "tune2fs changes a file system")
            }
        }
        "iostat" | "vmstat" | "mpstat" | "pidstat" | "sar" | "dstat" | "free" | "arcstat" => {
            interval_tool(cmd)
        }
        _ => return None,
    };
    Some(v)
}

/// Tools taking `[interval [count]]`: an interval without a count repeats forever.
fn interval_tool(cmd: &Cmd<'_>) -> Verdict {
    let p = cmd.parse(Spec {
        short_values: if cmd.name == "free" {
            "sc"
        } else {
            "pPpTSoefirn"
        },
        long_values: &["seconds", "count"],
        ..Spec::default()
    });
    if cmd.name == "sar" && (p.short('o')) {
        return Verdict::write(Risk::Low, "sar -o writes a data file");
    }
    let numbers: Vec<&str> = p
        .positionals
        .iter()
        .filter_map(|w| w.fixed())
        .filter(|t| t.parse::<f64>().is_ok())
        .collect();
    let unbounded = if cmd.name == "free" {
        (p.flag('s', "seconds")) && !p.flag('c', "count")
    } else if cmd.name == "dstat" {
        numbers.len() < 2
    } else {
        numbers.len() == 1
    };
    let v = Verdict::read(format!("{} only reports", cmd.name));
    if unbounded {
        let rewrite = if cmd.name == "free" {
            format!("{} -c 5", cmd.src())
        } else if numbers.is_empty() {
            format!("{} 1 5", cmd.src())
        } else {
            format!("{} 5", cmd.src())
        };
        v.because(format!(
            "{} with an interval and no count repeats forever",
            cmd.name
        ))
        .unbounded(UnboundedCategory::Stream, Some(rewrite))
    } else {
        v
    }
}

fn ceph(cmd: &Cmd<'_>) -> Verdict {
    let p = cmd.parse(Spec {
        short_values: "cknfi",
        long_values: &[
            "cluster",
            "conf",
            "keyring",
            "name",
            "format",
            "id",
            "connect-timeout",
        ],
        ..Spec::default()
    });
    if p.flag('w', "watch")
        || p.long("watch-debug")
        || p.long("watch-info")
        || p.long("watch-warn")
        || p.long("watch-error")
    {
        return Verdict::read("ceph -w only reads")
            .unbounded(UnboundedCategory::Stream, Some("ceph status".into()));
    }
    if p.flag('s', "status") && p.positionals.is_empty() {
        return Verdict::read("ceph -s only reads");
    }
    if p.dynamic {
        return cmd.dynamic_write();
    }
    let words: Vec<&str> = p.positionals.iter().filter_map(|w| w.fixed()).collect();
    const READ_VERBS: &[&str] = &[
        "status",
        "health",
        "df",
        "tree",
        "stat",
        "dump",
        "ls",
        "list",
        "perf",
        "versions",
        "version",
        "report",
        "quorum_status",
        "mon_status",
        "features",
        "detail",
        "get",
        "stats",
        "services",
        "show",
        "info",
        "time-sync-status",
        "last",
        "utilization",
        "metadata",
        "count-metadata",
        "find",
        "map",
        "query",
        "summary",
        "help",
        "blocked-by",
        "ls-by-pool",
        "ls-by-osd",
        "ls-by-primary",
        "autoscale-status",
        "usage",
        "ok-to-stop",
        "safe-to-destroy",
        "dump_stuck",
        "ps",
        "osd_stat",
        "dump_json",
    ];
    const WRITE_WORDS: &[&str] = &[
        "set",
        "unset",
        "mute",
        "unmute",
        "rm",
        "create",
        "delete",
        "out",
        "in",
        "down",
        "up",
        "reweight",
        "reweight-by-utilization",
        "add",
        "purge",
        "destroy",
        "archive",
        "archive-all",
        "enable",
        "disable",
        "fail",
        "repair",
        "scrub",
        "deep-scrub",
        "pause",
        "unpause",
        "rename",
        "import",
        "export",
        "put",
        "new",
        "lost",
        "rm-failed",
        "mark",
        "tell",
        "injectargs",
        "apply",
        "redeploy",
        "restart",
        "start",
        "stop",
        "upgrade",
        "caps",
        "reset",
        "move",
        "link",
        "unlink",
        "mksnap",
        "rmsnap",
        "compact",
        "sync",
        "forward",
        "drain",
        "remove",
        "on",
        "off",
        "kick",
        "clear",
        "flush",
        "trim",
        "evict",
    ];
    if words.is_empty() {
        return Verdict::unknown("ceph without a command opens its shell")
            .unbounded(UnboundedCategory::Repl, None);
    }
    if let Some(w) = words.iter().find(|w| WRITE_WORDS.contains(w)) {
        return Verdict::write(Risk::High, format!("ceph … {w} changes the cluster"));
    }
    if words.iter().any(|w| READ_VERBS.contains(w)) {
        return Verdict::read(format!("ceph {} only reads", words.join(" ")));
    }
    Verdict::unknown(format!(
        "ceph {} is not known to be read-only",
        words.join(" ")
    ))
}

fn smartctl(cmd: &Cmd<'_>) -> Verdict {
    let p = cmd.parse(Spec {
        short_values: "dTbrnlqsoSFtXf",
        long_values: &[
            "device",
            "tolerance",
            "badsum",
            "report",
            "nocheck",
            "log",
            "quietmode",
            "smart",
            "offlineauto",
            "saveauto",
            "test",
            "set",
            "format",
            "firmwarebug",
            "presets",
            "drivedb",
            "attributes",
        ],
        ..Spec::default()
    });
    if let Some((c, why)) = p.first_of(&[
        ('t', "test", "starts a self-test"),
        ('X', "abort", "aborts a self-test"),
        ('s', "smart", "switches SMART on or off"),
        ('o', "offlineauto", "changes offline testing"),
        ('S', "saveauto", "changes attribute autosave"),
    ]) {
        return Verdict::write(Risk::Medium, format!("smartctl -{c} {why}"));
    }
    if p.long("set") {
        return Verdict::write(Risk::Medium, "smartctl --set changes drive settings");
    }
    Verdict::read("smartctl only reads drive data")
}

fn mount(cmd: &Cmd<'_>) -> Verdict {
    let p = cmd.parse(Spec {
        short_values: "tOoLU",
        long_values: &["types", "options", "test-opts", "label", "uuid"],
        ..Spec::default()
    });
    let only_listing = p.positionals.is_empty()
        && !p.flag('a', "all")
        && !p.long("bind")
        && !p.long("move")
        && !p.long("rbind")
        && !p.short('B')
        && !p.short('M')
        && !p.short('R');
    if only_listing && !p.flag('o', "options") {
        Verdict::read("mount without arguments lists mounts")
    } else {
        Verdict::write(Risk::High, "mount changes mounts")
    }
}

fn btrfs(cmd: &Cmd<'_>) -> Verdict {
    let p = cmd.parse(Spec::default());
    let words = p.words();
    let read = match words.as_slice() {
        [g, s, ..] => {
            matches!(
                (short_group(g), *s),
                ("filesystem", "show" | "df" | "usage" | "du")
                    | ("subvolume", "list" | "show" | "get-default")
                    | ("device", "stats" | "usage")
                    | ("scrub", "status")
                    | ("balance", "status")
                    | ("replace", "status")
                    | ("qgroup", "show")
                    | ("inspect-internal", _)
                    | ("property", "get")
            ) && !(p.short('z') || p.long("reset"))
        }
        [g] => matches!(*g, "version" | "help"),
        [] => true,
    };
    if read {
        Verdict::read("btrfs query only reads")
    } else {
        Verdict::write(Risk::High, "btrfs command changes the file system")
    }
}

fn short_group(g: &str) -> &str {
    const GROUPS: &[&str] = &[
        "filesystem",
        "subvolume",
        "device",
        "scrub",
        "balance",
        "replace",
        "qgroup",
        "inspect-internal",
        "property",
    ];
    GROUPS
        .iter()
        .find(|full| full.starts_with(g) && g.len() >= 2)
        .copied()
        .unwrap_or(g)
}
