//! Assorted operator tools with a clear split between query and change forms: VPNs,
//! scanners, schedulers, firmware and hardware tools, Proxmox helpers, archives.

use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::Cmd;
use crate::policy::options::judge;

/// tailscale: `rules/tailscale.toml` decides; `netcheck --every` and `ping -c 0` run
/// until stopped.
fn tailscale(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "tailscale");
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
    let w = walk!(cmd, "nmap");
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
    let w = walk!(cmd, "prlimit");
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
    let w = walk!(cmd, "npm");
    if !judge("npm", &w).is_write() {
        return Verdict::read("npm --version prints the version");
    }
    Verdict::write(
        Risk::Low,
        "npm writes its debug log and update-notifier state under ~/.npm, even to list",
    )
}

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "wg" => cmd.by_table("wg"),
        "tailscale" => tailscale(cmd),
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
            let w = walk!(cmd, "nfsstat", Some);
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
        "ipmitool" => {
            let w = walk!(cmd, "ipmitool", Some);
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
        "7z" | "7za" | "7zr" => cmd.by_table(cmd.name),
        "npm" => npm(cmd),
        _ => return None,
    };
    Some(v)
}
