//! Assorted operator tools with a clear split between query and change forms: VPNs,
//! scanners, schedulers, firmware and hardware tools, Proxmox helpers, archives.

use super::super::args::Spec;
use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::Cmd;
use crate::policy::options::judge;

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
    let words = cmd.parse(Spec::default()).words();
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

/// Read when every option is one of `shorts` or `longs` (in full; there may be plain
/// arguments).
fn by_flags(cmd: &Cmd<'_>, shorts: &str, longs: &[&str], empty_read: bool) -> Verdict {
    if cmd.has_dynamic() {
        return cmd.dynamic_write();
    }
    let p = cmd.parse(Spec::default());
    if p.opts.is_empty() && !empty_read {
        return Verdict::write(
            Risk::Medium,
            format!("{} without a query option changes state", cmd.name),
        );
    }
    match p.unlisted(shorts, longs) {
        Some(f) => Verdict::write(Risk::Medium, format!("{} {f} changes state", cmd.name)),
        None => Verdict::read(format!("{} query only reads", cmd.name)),
    }
}

/// tailscale: `rules/tailscale.toml` decides; `netcheck --every` and `ping -c 0` run
/// until stopped.
fn tailscale(cmd: &Cmd<'_>) -> Verdict {
    let w = match cmd.walk("tailscale") {
        Ok(w) => w,
        Err(v) => return v,
    };
    let v = judge("tailscale", &w);
    let forever = w
        .all("every")
        .any(|o| o.fixed().is_none_or(|t| !matches!(t, "0" | "0s")))
        || w.all("c").any(|o| {
            o.fixed()
                .is_none_or(|t| t.parse::<i64>().is_ok_and(|n| n <= 0))
        });
    if v.is_write() || !forever {
        v
    } else {
        v.because("tailscale netcheck --every or ping -c 0 runs until stopped")
            .unbounded(UnboundedCategory::Stream, None)
    }
}

/// nmap: `rules/nmap.toml` decides; `-sC` (scan type letters after `-s`) runs scripts.
fn nmap(cmd: &Cmd<'_>) -> Verdict {
    let w = match cmd.walk("nmap") {
        Ok(w) => w,
        Err(v) => return v,
    };
    if w.all("s")
        .any(|o| o.fixed().is_none_or(|t| t.contains('C')))
    {
        return Verdict::write(Risk::Medium, "nmap -sC runs the default scripts");
    }
    judge("nmap", &w)
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
        "wg" => cmd.by_table("wg"),
        "tailscale" => tailscale(cmd),
        "nmap" => nmap(cmd),
        "ssh-keyscan" => cmd.by_table("ssh-keyscan"),
        "apt-key" => by_words(
            cmd,
            &["list", "finger", "fingerprint", "export", "exportall"],
            &["add", "del", "adv", "update", "net-update"],
            false,
        ),
        "debsums" => {
            // Perl Getopt::Long with bundling: abbreviations and bundles as getopt.
            let p = cmd.parse(Spec {
                short_values: "r",
                long_values: &["root", "admindir"],
                ..Spec::default()
            });
            if p.flag('g', "generate") {
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
            "",
            &["display", "list", "query", "get-selections"],
            false,
        ),
        "ldconfig" => {
            let p = cmd.parse(Spec::default());
            if p.positionals.is_empty()
                && p.unlisted("pv", &["print-cache", "verbose"]).is_none()
                && p.flag('p', "print-cache")
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
        "exportfs" => cmd.by_table("exportfs"),
        "showmount" => cmd.by_table("showmount"),
        "nfsstat" => {
            let w = match cmd.walk("nfsstat") {
                Ok(w) => w,
                Err(v) => return Some(v),
            };
            let v = judge("nfsstat", &w);
            if v.is_write() || !w.has("sleep") {
                v
            } else {
                v.because("nfsstat -Z collects until interrupted")
                    .unbounded(UnboundedCategory::Stream, None)
            }
        }
        "hwclock" => by_flags(
            cmd,
            "rvuV",
            &[
                "show",
                "get",
                "verbose",
                "utc",
                "localtime",
                "debug",
                "test",
                "version",
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
            // Every resource option sets the limit when given a value (`--nofile=10`,
            // `-n10`); without one it only reports. A positional is a command to run.
            const RESOURCES: &[&str] = &[
                "core",
                "data",
                "nice",
                "fsize",
                "sigpending",
                "memlock",
                "rss",
                "nofile",
                "msgqueue",
                "rtprio",
                "stack",
                "cpu",
                "nproc",
                "as",
                "locks",
                "rttime",
            ];
            let p = cmd.parse(Spec {
                short_values: "po",
                long_values: &["pid", "output"],
                ..Spec::default()
            });
            let mut longs = vec![
                "pid",
                "output",
                "noheadings",
                "raw",
                "verbose",
                "help",
                "version",
            ];
            let sets = p.opts.iter().any(|o| {
                matches!(o, super::super::args::Opt::Long(l, Some(_)) if !matches!(l.as_str(), "pid" | "output"))
            });
            longs.extend_from_slice(RESOURCES);
            if sets
                || !p.positionals.is_empty()
                || p.unlisted("pohVcdefilmnqrstuvxy", &longs).is_some()
            {
                Verdict::write(Risk::Medium, "prlimit changes limits or runs a command")
            } else {
                Verdict::read("prlimit only reports")
            }
        }
        "ipmitool" => {
            let w = match cmd.walk("ipmitool") {
                Ok(w) => w,
                Err(v) => return Some(v),
            };
            let v = judge("ipmitool", &w);
            if v.is_write() || !(w.has("a") || w.has("Y")) {
                v
            } else {
                v.because("ipmitool -a/-Y prompts on the terminal")
                    .unbounded(UnboundedCategory::Tty, None)
            }
        }
        "upsc" | "inxi" | "lsb_release" | "runlevel" | "arc_summary" | "pg_isready"
        | "pg_lsclusters" | "pg_controldata" | "locate" | "plocate" | "mlocate" | "screenfetch"
        | "fastfetch" | "lstopo-no-graphics" => Verdict::read(format!("{} only reports", cmd.name)),
        "yq" => {
            // mikefarah's yq (pflag, exact long names) or the Python one (argparse, which
            // abbreviates `--in-place`): prefixes are matched, the safe side for both.
            let p = cmd.parse(Spec {
                short_values: "Iopn",
                long_values: &["indent", "output-format", "input-format"],
                long_flags: &["indent"],
                ..Spec::default()
            });
            if p.flag('i', "inplace")
                || p.long("in-place")
                || p.flag('s', "split-exp")
                || p.long("split-exp-file")
            {
                Verdict::write(Risk::Medium, "yq -i edits files in place")
            } else if cmd.has_dynamic() {
                cmd.dynamic_write()
            } else {
                Verdict::read("yq only reads")
            }
        }
        "7z" | "7za" | "7zr" => match cmd.args.first().and_then(|w| w.fixed()) {
            Some("l" | "t" | "i" | "h") => Verdict::read("7z l only lists"),
            // 7-Zip's switches are single-dash words matched in full.
            Some("e" | "x")
                if cmd
                    .parse(Spec {
                        long_only: true,
                        exact_long: true,
                        ..Spec::default()
                    })
                    .long("so") =>
            {
                Verdict::read("7z x -so extracts to standard output")
            }
            _ => Verdict::write(Risk::Medium, "7z writes archives or files"),
        },
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
        // Every npm command but `--version` writes ~/.npm/_logs/*-debug-0.log and the
        // update notifier's state (seen by the write oracle), so only the version is a read.
        "npm" => {
            if cmd.has_dynamic() {
                return Some(cmd.dynamic_write());
            }
            let p = cmd.parse(Spec::default());
            if p.words().is_empty() && p.flag('v', "version") {
                Verdict::read("npm --version prints the version")
            } else {
                Verdict::write(
                    Risk::Low,
                    "npm writes its debug log and update-notifier state under ~/.npm, even to list",
                )
            }
        }
        _ => return None,
    };
    Some(v)
}
