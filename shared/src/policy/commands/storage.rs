//! Storage tools: zfs, zpool, ceph, rbd, rados, smartctl, mount, swapon, mdadm, btrfs,
//! fdisk/parted, hdparm, nvme, multipath, tune2fs and the interval reporters (iostat,
//! vmstat, mpstat, pidstat, sar, dstat, free, arcstat), each read with its table in
//! `rules/`; here what a table cannot say (operands that mount, `-l` values that set,
//! `interval [count]` streams).

use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::{Cmd, parted};
use crate::policy::options::{Walk, judge};

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "zfs" => super::zfs::zfs(cmd),
        "zpool" => super::zfs::zpool(cmd),
        "ceph" => ceph(cmd),
        "rbd" | "rados" | "hdparm" | "nvme" | "multipath" | "tune2fs" | "btrfs" => {
            cmd.by_table(cmd.name)
        }
        "smartctl" => smartctl(cmd),
        "mount" => with_operands(cmd, "mount", Risk::High, "mount with an operand mounts it"),
        "swapon" => with_operands(
            cmd,
            "swapon",
            Risk::Medium,
            "swapon with a device enables it",
        ),
        "mdadm" => cmd.by_table("mdadm"),
        "sgdisk" => cmd.by_table("sgdisk"),
        "fdisk" | "sfdisk" | "gdisk" => cmd.by_table(cmd.name),
        "parted" => parted::parted(cmd),
        "iostat" | "vmstat" | "mpstat" | "pidstat" | "sar" | "dstat" | "free" | "arcstat" => {
            interval_tool(cmd)
        }
        _ => return None,
    };
    Some(v)
}

/// mount and swapon: the table reads the options; an operand names what to mount or
/// enable.
fn with_operands(cmd: &Cmd<'_>, tool: &str, risk: Risk, why: &str) -> Verdict {
    let w = walk!(cmd, tool);
    let v = judge(tool, &w);
    if v.is_write() || w.operands.is_empty() {
        return v;
    }
    Verdict::write(risk, why)
}

/// Tools taking `[interval [count]]`: an interval without a count repeats forever.
fn interval_tool(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, cmd.name);
    let v = judge(cmd.name, &w);
    if v.is_write() {
        return v;
    }
    let unbounded = match cmd.name {
        "free" => w.has("seconds") && !w.has("count"),
        "arcstat" => arcstat_unbounded(cmd, &w),
        name => {
            let numbers = w
                .operands
                .iter()
                .filter_map(|(_, word)| word.fixed())
                .filter(|t| t.parse::<f64>().is_ok())
                .count();
            if name == "dstat" {
                numbers < 2
            } else {
                numbers == 1
            }
        }
    };
    if !unbounded {
        return v;
    }
    let rewrite = if cmd.name == "free" {
        format!("{} -c 5", cmd.src())
    } else if w.operands.is_empty() {
        format!("{} 1 5", cmd.src())
    } else {
        format!("{} 5", cmd.src())
    };
    v.because(format!(
        "{} with an interval and no count repeats forever",
        cmd.name
    ))
    .unbounded(UnboundedCategory::Stream, Some(rewrite))
}

/// arcstat takes its interval and count after skipping one word per option and one more
/// per option with a value (`rules/arcstat.toml`); a count of 0, or an interval alone,
/// repeats forever.
fn arcstat_unbounded(cmd: &Cmd<'_>, w: &Walk<'_, '_>) -> bool {
    let skip = w.occs.len() + w.occs.iter().filter(|o| o.value.is_some()).count();
    let rest: Vec<Option<&str>> = cmd.args.iter().skip(skip).map(|a| a.fixed()).collect();
    match rest.as_slice() {
        [] => false,
        [_] => true,
        [_, count, ..] => count.is_none_or(|c| c.parse::<i64>().is_ok_and(|n| n <= 0)),
    }
}

/// ceph: `rules/ceph.toml` reads the options and the command's prefix words; here `-s`
/// (status, no command) and `-w` (a stream).
fn ceph(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "ceph");
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

/// smartctl: `rules/smartctl.toml`; here the `-l` values that set or reset (`scterc,N,M`,
/// `scttempint,N`, `sasphy,reset`, `sataphy,reset`).
fn smartctl(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "smartctl");
    let v = judge("smartctl", &w);
    if v.is_write() {
        return v;
    }
    for occ in w.all("log") {
        let Some(t) = occ.fixed() else {
            return Verdict::unknown("smartctl -l with a log type computed at run time");
        };
        let t = t.to_ascii_lowercase();
        let sets = t.contains("reset")
            || t.starts_with("scttempint")
            || (t.starts_with("scterc") && t != "scterc");
        if sets {
            return Verdict::write(
                Risk::Medium,
                format!("smartctl -l {t} changes a drive setting or resets counters"),
            );
        }
    }
    v
}
