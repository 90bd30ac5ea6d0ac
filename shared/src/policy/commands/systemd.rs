//! systemd tools: systemctl, journalctl, service, hostnamectl, timedatectl, localectl,
//! loginctl, resolvectl, networkctl, busctl, systemd-analyze, coredumpctl, systemd-cgls,
//! systemd-cgtop, each read with its option table (`rules/*.toml`).

use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::Cmd;
use crate::policy::options::judge;

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "systemctl" => systemctl(cmd),
        "journalctl" => journalctl(cmd),
        "service" => service(cmd),
        "hostnamectl" | "localectl" | "loginctl" | "networkctl" | "busctl" | "systemd-cgls" => {
            cmd.by_table(cmd.name)
        }
        "timedatectl" => timedatectl(cmd),
        "resolvectl" => resolvectl(cmd),
        "systemd-analyze" => cmd.by_table("systemd-analyze"),
        "coredumpctl" => coredumpctl(cmd),
        "systemd-cgtop" => cgtop(cmd),
        _ => return None,
    };
    Some(v)
}

/// systemctl: `rules/systemctl.toml` decides; `edit` also opens an editor.
fn systemctl(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "systemctl");
    let v = judge("systemctl", &w);
    if w.path.first().map(String::as_str) == Some("edit") && v.is_write() {
        return v
            .because("systemctl edit opens an editor")
            .unbounded(UnboundedCategory::Pager, None);
    }
    v
}

/// journalctl: `rules/journalctl.toml` decides; `-f` follows forever (rewritten with a
/// line count and a start time).
fn journalctl(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "journalctl");
    let v = judge("journalctl", &w);
    if v.is_write() || !w.has("follow") {
        return v;
    }
    let mut extra: Vec<&str> = Vec::new();
    if !w.has("lines") {
        extra.extend(["-n", "200"]);
    }
    if !w.has("since") {
        extra.extend(["--since", "\"10 min ago\""]);
    }
    let rewrite = cmd.rebuilt_without("f", &["follow"], false, &extra);
    v.because("journalctl -f follows the journal forever")
        .unbounded(UnboundedCategory::Stream, Some(rewrite))
}

/// service: `rules/service.toml` for its exact options; `--status-all` or `--version`
/// alone, or `NAME status` alone, reads.
fn service(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "service");
    let v = judge("service", &w);
    if v.is_write() {
        return v;
    }
    let operands: Vec<Option<&str>> = w.operands.iter().map(|(_, o)| o.fixed()).collect();
    let reports = w.has("status-all") || w.has("version") || w.has("help");
    match operands.as_slice() {
        [] if reports && cmd.args.len() == 1 => Verdict::read("service --status-all only reports"),
        [Some(_), Some("status")] if w.occs.is_empty() => {
            Verdict::read("service NAME status only reports")
        }
        [_, Some(action), ..] => {
            Verdict::write(Risk::Medium, format!("service {action} changes a service"))
        }
        [_, None, ..] => Verdict::write(Risk::Medium, "service runs a computed action"),
        _ => Verdict::unknown("service form not understood"),
    }
}

/// timedatectl: `rules/timedatectl.toml` decides; `--monitor` follows timesyncd forever.
fn timedatectl(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "timedatectl");
    let v = judge("timedatectl", &w);
    if w.has("monitor") && !v.is_write() {
        return v.unbounded(UnboundedCategory::Stream, None);
    }
    v
}

/// resolvectl: `rules/resolvectl.toml` decides; `monitor` follows forever.
fn resolvectl(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "resolvectl");
    let v = judge("resolvectl", &w);
    if w.path.first().map(String::as_str) == Some("monitor") && !v.is_write() {
        return v.unbounded(UnboundedCategory::Stream, None);
    }
    v
}

/// coredumpctl: `rules/coredumpctl.toml` decides; `debug` is an interactive debugger.
fn coredumpctl(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "coredumpctl");
    let v = judge("coredumpctl", &w);
    if matches!(w.path.first().map(String::as_str), Some("debug" | "gdb")) {
        return v.unbounded(UnboundedCategory::Tty, None);
    }
    v
}

/// systemd-cgtop: `rules/systemd-cgtop.toml` decides; without iterations it refreshes
/// forever (rewritten in batch mode for one iteration).
fn cgtop(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "systemd-cgtop");
    let v = judge("systemd-cgtop", &w);
    if v.is_write() || w.has("iterations") || w.has("1") {
        return v;
    }
    v.because("systemd-cgtop refreshes until stopped")
        .unbounded(
            UnboundedCategory::Stream,
            Some(format!("{} -b -n 1", cmd.src())),
        )
}
