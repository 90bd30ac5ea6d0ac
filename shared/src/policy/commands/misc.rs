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

/// prlimit: `rules/prlimit.toml` decides; a resource option with a value sets the limit.
fn prlimit(cmd: &Cmd<'_>) -> Verdict {
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
    let w = match cmd.walk("prlimit") {
        Ok(w) => w,
        Err(v) => return v,
    };
    let v = judge("prlimit", &w);
    if v.is_write() {
        return v;
    }
    match w
        .occs
        .iter()
        .find(|o| RESOURCES.contains(&o.opt.id.as_str()) && o.value.is_some())
    {
        Some(o) => Verdict::write(
            Risk::Medium,
            format!("prlimit {} with a value sets the limit", o.written),
        ),
        None => v,
    }
}

/// npm: only `npm --version` reads (`rules/npm.toml`); every other command writes npm's
/// debug log and update-notifier state under ~/.npm, even to list.
fn npm(cmd: &Cmd<'_>) -> Verdict {
    let w = match cmd.walk("npm") {
        Ok(w) => w,
        Err(v) => return v,
    };
    if !judge("npm", &w).is_write() {
        return Verdict::read("npm --version prints the version");
    }
    Verdict::write(
        Risk::Low,
        "npm writes its debug log and update-notifier state under ~/.npm, even to list",
    )
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
        "nmap" => nmap(cmd),
        "ssh-keyscan" => cmd.by_table("ssh-keyscan"),
        "apt-key" => cmd.by_table("apt-key"),
        "debsums" | "atq" | "at" | "update-alternatives" | "ldconfig" => cmd.by_table(cmd.name),
        "pveam"
        | "pve-firewall"
        | "proxmox-boot-tool"
        | "proxmox-backup-manager"
        | "proxmox-backup-client" => cmd.by_table(cmd.name),
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
        "hwclock" | "taskset" | "chrt" | "wipefs" | "yq" => cmd.by_table(cmd.name),
        "prlimit" => prlimit(cmd),
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
        | "pg_lsclusters" | "pg_controldata" | "locate" | "plocate" | "mlocate" | "screenfetch"
        | "fastfetch" | "lstopo-no-graphics" => Verdict::read(format!("{} only reports", cmd.name)),
        "7z" | "7za" | "7zr" => cmd.by_table(cmd.name),
        "tc" => {
            let words = cmd.parse(Spec::default()).words();
            match words.get(1) {
                _ if words.first() == Some(&"monitor") => Verdict::read("tc monitor only reads")
                    .unbounded(UnboundedCategory::Stream, None),
                None | Some(&"show" | &"ls" | &"list") => Verdict::read("tc show only reads"),
                Some(v) => Verdict::write(Risk::High, format!("tc {v} changes traffic control")),
            }
        }
        "npm" => npm(cmd),
        _ => return None,
    };
    Some(v)
}
