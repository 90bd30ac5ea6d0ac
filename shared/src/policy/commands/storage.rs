//! Storage tools: zfs, zpool, ceph, rbd, smartctl, mount, swapon, mdadm, btrfs, lvm,
//! fdisk/parted, hdparm, nvme, multipath.

use super::super::args::Spec;
use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::{Cmd, by_subcommand, parted};
use crate::policy::options::judge;

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

/// ceph: `rules/ceph.toml` reads the options and the command's prefix words; here `-s`
/// (status, no command) and `-w` (a stream).
fn ceph(cmd: &Cmd<'_>) -> Verdict {
    let w = match cmd.walk("ceph") {
        Ok(w) => w,
        Err(v) => return v,
    };
    let v = judge("ceph", &w);
    if v.is_write() {
        return v;
    }
    let watch = [
        "watch",
        "watch-debug",
        "watch-info",
        "watch-warn",
        "watch-error",
    ];
    if watch.iter().any(|o| w.has(o)) || w.has("watch-channel") {
        return v.unbounded(UnboundedCategory::Stream, Some("ceph status".into()));
    }
    match (w.has("status"), w.path.is_empty()) {
        (true, true) => Verdict::read("ceph -s only reads"),
        (true, false) => Verdict::unknown("ceph -s puts status before the command words"),
        (false, true) if w.has("version") || w.has("help") => v,
        (false, true) => Verdict::unknown("ceph without a command opens its shell")
            .unbounded(UnboundedCategory::Repl, None),
        _ => v,
    }
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
