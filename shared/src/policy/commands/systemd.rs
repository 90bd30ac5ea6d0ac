//! systemd tools: systemctl, journalctl, service, hostnamectl, timedatectl, loginctl,
//! resolvectl, networkctl, systemd-analyze, coredumpctl.

use super::super::args::Spec;
use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::{Cmd, by_subcommand};

const SYSTEMCTL_READS: &[&str] = &[
    "status",
    "show",
    "cat",
    "list-units",
    "list-unit-files",
    "list-sockets",
    "list-timers",
    "list-jobs",
    "list-dependencies",
    "list-machines",
    "list-automounts",
    "list-paths",
    "is-active",
    "is-enabled",
    "is-failed",
    "is-system-running",
    "get-default",
    "help",
    "show-environment",
    "--version",
    "version",
];

const SYSTEMCTL_VALUES: &str = "tpHMnos";
const SYSTEMCTL_LONG_VALUES: &[&str] = &[
    "type",
    "property",
    "host",
    "machine",
    "lines",
    "output",
    "state",
    "signal",
    "kill-whom",
    "root",
    "job-mode",
    "what",
    "reboot-argument",
    "timestamp",
    "when",
    "message",
    "image",
    "preset-mode",
    "boot-loader-entry",
    "boot-loader-menu",
    "kill-value",
    "drop-in",
];

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
        "systemd-analyze" => by_subcommand(
            cmd,
            Spec::default(),
            &[
                "time",
                "blame",
                "critical-chain",
                "dump",
                "plot",
                "dot",
                "unit-paths",
                "exit-status",
                "capability",
                "condition",
                "syscall-filter",
                "calendar",
                "timestamp",
                "timespan",
                "security",
                "verify",
                "cat-config",
                "unit-files",
                "log-level",
                "log-target",
                "service-watchdogs",
            ],
            true,
        ),
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

fn systemctl(cmd: &Cmd<'_>) -> Verdict {
    let p = cmd.parse(Spec {
        short_values: SYSTEMCTL_VALUES,
        long_values: SYSTEMCTL_LONG_VALUES,
        ..Spec::default()
    });
    if p.dynamic {
        return cmd.dynamic_write();
    }
    let Some(verb) = p.first() else {
        return Verdict::read("systemctl lists units");
    };
    if SYSTEMCTL_READS.contains(&verb) {
        if p.long("now") {
            return Verdict::write(Risk::Medium, "systemctl --now starts or stops units");
        }
        return Verdict::read(format!("systemctl {verb} only reports"));
    }
    let risk = match verb {
        "reboot" | "poweroff" | "halt" | "kexec" | "rescue" | "emergency" | "isolate"
        | "default" | "switch-root" | "soft-reboot" => Risk::High,
        "stop" | "disable" | "mask" | "kill" => Risk::High,
        _ => Risk::Medium,
    };
    let v = Verdict::write(
        risk,
        format!("systemctl {verb} changes services or the system"),
    );
    if verb == "edit" {
        return v
            .because("systemctl edit opens an editor")
            .unbounded(UnboundedCategory::Pager, None);
    }
    v
}

fn journalctl(cmd: &Cmd<'_>) -> Verdict {
    const WRITES: &[&str] = &[
        "vacuum-size",
        "vacuum-time",
        "vacuum-files",
        "rotate",
        "flush",
        "sync",
        "relinquish-var",
        "smart-relinquish-var",
        "setup-keys",
        "update-catalog",
    ];
    let p = cmd.parse(Spec {
        short_values: "unpoSUbDMtIFgcqT",
        long_values: &[
            "unit",
            "user-unit",
            "lines",
            "priority",
            "output",
            "since",
            "until",
            "boot",
            "directory",
            "file",
            "root",
            "image",
            "identifier",
            "field",
            "grep",
            "cursor",
            "after-cursor",
            "cursor-file",
            "facility",
            "machine",
            "namespace",
            "output-fields",
            "vacuum-size",
            "vacuum-time",
            "vacuum-files",
            "interval",
            "verify-key",
            "invocation",
            "exclude-identifier",
        ],
        ..Spec::default()
    });
    if let Some(w) = WRITES.iter().find(|w| p.long(w)) {
        return Verdict::write(
            Risk::Medium,
            format!("journalctl --{w} changes the journal files"),
        );
    }
    if p.long("cursor-file") {
        return Verdict::write(Risk::Low, "journalctl --cursor-file writes the cursor file");
    }
    if p.dynamic {
        return cmd.dynamic_write();
    }
    if p.flag('f', "follow") {
        let has_lines = p.flag('n', "lines");
        let has_since = p.long("since") || p.short('S');
        let mut extra: Vec<&str> = Vec::new();
        if !has_lines {
            extra.extend(["-n", "200"]);
        }
        if !has_since {
            extra.extend(["--since", "\"10 min ago\""]);
        }
        let rewrite = cmd.rebuilt_without("f", &["follow"], false, &extra);
        return Verdict::read("journalctl only reads")
            .because("journalctl -f follows the journal forever")
            .unbounded(UnboundedCategory::Stream, Some(rewrite));
    }
    Verdict::read("journalctl only reads")
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
