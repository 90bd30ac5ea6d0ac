//! systemd tools: systemctl, journalctl, service, hostnamectl, timedatectl, loginctl,
//! resolvectl, networkctl, systemd-analyze, coredumpctl.

use super::super::args::Spec;
use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::{Cmd, by_subcommand};
use crate::policy::options::judge;

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "systemctl" => systemctl(cmd),
        "journalctl" => journalctl(cmd),
        "service" => service(cmd),
        "hostnamectl" => by_subcommand(cmd, Spec::default(), &["status", "show"], true),
        "timedatectl" => by_subcommand(
            cmd,
            Spec::default(),
            &[
                "status",
                "show",
                "list-timezones",
                "timesync-status",
                "show-timesync",
            ],
            true,
        ),
        "localectl" => by_subcommand(
            cmd,
            Spec::default(),
            &[
                "status",
                "list-locales",
                "list-keymaps",
                "list-x11-keymap-models",
                "list-x11-keymap-layouts",
            ],
            true,
        ),
        "loginctl" => by_subcommand(
            cmd,
            Spec::default(),
            &[
                "list-sessions",
                "session-status",
                "show-session",
                "list-users",
                "user-status",
                "show-user",
                "list-seats",
                "seat-status",
                "show-seat",
            ],
            true,
        ),
        "resolvectl" => {
            let settable = [
                "dns",
                "domain",
                "default-route",
                "llmnr",
                "mdns",
                "dnssec",
                "dnsovertls",
                "nta",
                "log-level",
            ];
            let words = cmd.parse(Spec::default()).words();
            match words.first() {
                Some(s) if settable.contains(s) && words.len() > 2 => Verdict::write(
                    Risk::High,
                    format!("resolvectl {s} LINK VALUE changes DNS settings"),
                ),
                Some(&"monitor") => Verdict::read("resolvectl monitor only reads")
                    .unbounded(UnboundedCategory::Stream, None),
                _ => by_subcommand(
                    cmd,
                    Spec::default(),
                    &[
                        "status",
                        "query",
                        "service",
                        "openpgp",
                        "tlsa",
                        "statistics",
                        "dns",
                        "domain",
                        "default-route",
                        "llmnr",
                        "mdns",
                        "dnssec",
                        "dnsovertls",
                        "nta",
                        "log-level",
                    ],
                    true,
                ),
            }
        }
        "networkctl" => by_subcommand(
            cmd,
            Spec::default(),
            &["list", "status", "lldp", "label"],
            true,
        ),
        "systemd-analyze" => cmd.by_table("systemd-analyze"),
        "coredumpctl" => coredumpctl(cmd),
        "systemd-cgtop" => {
            let p = cmd.parse(Spec {
                short_values: "nd",
                long_values: &["iterations", "delay", "depth"],
                ..Spec::default()
            });
            if p.flag('n', "iterations") {
                Verdict::read("systemd-cgtop with iterations ends")
            } else {
                Verdict::read("systemd-cgtop only reads").unbounded(
                    UnboundedCategory::Stream,
                    Some(format!("{} -b -n 1", cmd.src())),
                )
            }
        }
        _ => return None,
    };
    Some(v)
}

/// systemctl: `rules/systemctl.toml` decides; `edit` also opens an editor.
fn systemctl(cmd: &Cmd<'_>) -> Verdict {
    let w = match cmd.walk("systemctl") {
        Ok(w) => w,
        Err(v) => return v,
    };
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
    let w = match cmd.walk("journalctl") {
        Ok(w) => w,
        Err(v) => return v,
    };
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

fn service(cmd: &Cmd<'_>) -> Verdict {
    let texts: Vec<Option<&str>> = cmd.args.iter().map(|w| w.fixed()).collect();
    match texts.as_slice() {
        [Some("--status-all")] | [Some("--version")] => {
            Verdict::read("service --status-all only reports")
        }
        [Some(_), Some("status")] => Verdict::read("service NAME status only reports"),
        [Some(_), Some(action), ..] => {
            Verdict::write(Risk::Medium, format!("service {action} changes a service"))
        }
        _ => Verdict::unknown("service form not understood"),
    }
}

fn coredumpctl(cmd: &Cmd<'_>) -> Verdict {
    let p = cmd.parse(Spec {
        short_values: "oFDS",
        long_values: &[
            "output",
            "field",
            "directory",
            "since",
            "until",
            "file",
            "debugger",
            "debugger-arguments",
        ],
        ..Spec::default()
    });
    if p.flag('o', "output") {
        return Verdict::write(Risk::Low, "coredumpctl -o writes a file");
    }
    match p.first() {
        None | Some("list" | "info") => Verdict::read("coredumpctl lists or shows core dumps"),
        Some("dump") => Verdict::read("coredumpctl dump writes to standard output"),
        Some(other) => Verdict::unknown(format!("coredumpctl {other} starts a debugger"))
            .unbounded(UnboundedCategory::Tty, None),
    }
}
