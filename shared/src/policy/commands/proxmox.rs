//! Proxmox VE tools: pct, qm, pvesh, pvecm, pvesm, ha-manager, pveum, pvenode.

use super::super::args::Spec;
use super::super::engine::wrap_rewrite;
use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::{Cmd, by_subcommand};

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "pct" => pct(cmd),
        "qm" => qm(cmd),
        "pvesh" => pvesh(cmd),
        "pvecm" => by_subcommand(cmd, Spec::default(), &["status", "nodes", "help"], false),
        "pvesm" => by_subcommand(
            cmd,
            Spec::default(),
            &[
                "status",
                "list",
                "path",
                "extractconfig",
                "help",
                "scan",
                "nfsscan",
                "cifsscan",
                "glusterfsscan",
                "iscsiscan",
                "lvmscan",
                "lvmthinscan",
                "zfsscan",
                "apiinfo",
            ],
            false,
        ),
        "ha-manager" => by_subcommand(
            cmd,
            Spec::default(),
            &["status", "config", "groupconfig", "help"],
            false,
        ),
        "pveum" => pveum(cmd),
        "pvenode" => match (
            cmd.args.first().and_then(|w| w.fixed()),
            cmd.args.get(1).and_then(|w| w.fixed()),
        ) {
            (Some("cert"), Some("info"))
            | (Some("config"), Some("get"))
            | (Some("task"), Some("list" | "log" | "status"))
            | (Some("acme"), Some("account" | "plugin"))
                if cmd.args.get(2).and_then(|w| w.fixed()).is_none_or(|t| {
                    matches!(t, "list" | "info") || !t.starts_with(char::is_alphabetic)
                }) =>
            {
                Verdict::read("pvenode query only reads")
            }
            _ => Verdict::write(Risk::Medium, "pvenode changes node settings"),
        },
        "pvesr" => by_subcommand(
            cmd,
            Spec::default(),
            &["status", "list", "read", "help"],
            false,
        ),
        "pvesubscription" => by_subcommand(cmd, Spec::default(), &["get"], false),
        "pvereport" => Verdict::read("pvereport only reports"),
        "pveceph" => by_subcommand(cmd, Spec::default(), &["status", "help"], false),
        _ => return None,
    };
    Some(v)
}

fn pveum(cmd: &Cmd<'_>) -> Verdict {
    let words: Vec<Option<&str>> = cmd.args.iter().map(|w| w.fixed()).collect();
    let reads = words
        .iter()
        .flatten()
        .any(|w| matches!(*w, "list" | "ls" | "permissions" | "help"))
        && !words.iter().flatten().any(|w| {
            matches!(
                *w,
                "add" | "create" | "delete" | "modify" | "set" | "passwd" | "change"
            )
        });
    if reads {
        Verdict::read("pveum list only reads")
    } else {
        Verdict::write(Risk::High, "pveum changes users or permissions")
    }
}

fn pct(cmd: &Cmd<'_>) -> Verdict {
    let sub = cmd.args.first().and_then(|w| w.fixed());
    match sub {
        None => Verdict::read("pct with no subcommand prints help"),
        Some(
            "list" | "config" | "status" | "pending" | "listsnapshot" | "df" | "cpusets" | "help",
        ) => Verdict::read(format!("pct {} only reads", sub.unwrap_or_default())),
        Some("exec") => guest_exec(cmd, "pct exec", 1),
        Some("enter" | "console") => {
            Verdict::write(Risk::High, "pct enter opens a shell in the container")
                .unbounded(UnboundedCategory::Repl, None)
        }
        Some(s) => {
            let risk = if matches!(
                s,
                "destroy" | "stop" | "rollback" | "restore" | "delsnapshot" | "reboot" | "shutdown"
            ) {
                Risk::High
            } else {
                Risk::Medium
            };
            Verdict::write(risk, format!("pct {s} changes the container"))
        }
    }
}

fn qm(cmd: &Cmd<'_>) -> Verdict {
    let sub = cmd.args.first().and_then(|w| w.fixed());
    match sub {
        None => Verdict::read("qm with no subcommand prints help"),
        Some(
            "list" | "config" | "status" | "pending" | "listsnapshot" | "showcmd" | "help"
            | "cloudinit",
        ) if sub != Some("cloudinit")
            || cmd
                .args
                .get(1)
                .and_then(|w| w.fixed())
                .is_some_and(|t| matches!(t, "dump" | "pending")) =>
        {
            Verdict::read(format!("qm {} only reads", sub.unwrap_or_default()))
        }
        Some("guest") => match cmd.args.get(1).and_then(|w| w.fixed()) {
            Some("exec") => guest_exec(cmd, "qm guest exec", 2),
            Some("exec-status") => Verdict::read("qm guest exec-status only reads"),
            Some("cmd") => match cmd.args.get(3).and_then(|w| w.fixed()) {
                Some(c)
                    if c.starts_with("get-")
                        || matches!(c, "info" | "ping" | "network-get-interfaces") =>
                {
                    Verdict::read(format!("qm guest cmd {c} only reads"))
                }
                Some(c) => {
                    Verdict::write(Risk::High, format!("qm guest cmd {c} changes the guest"))
                }
                None => Verdict::unknown("qm guest cmd without a command"),
            },
            Some("passwd") => Verdict::write(Risk::High, "qm guest passwd changes a password"),
            _ => Verdict::unknown("qm guest form not understood"),
        },
        Some("agent") => match cmd.args.get(2).and_then(|w| w.fixed()) {
            Some(c)
                if c.starts_with("get-")
                    || matches!(c, "info" | "ping" | "network-get-interfaces") =>
            {
                Verdict::read(format!("qm agent {c} only reads"))
            }
            _ => Verdict::write(Risk::High, "qm agent command changes the guest"),
        },
        Some("terminal" | "monitor" | "vncproxy" | "mtunnel") => Verdict::write(
            Risk::High,
            format!("qm {} is interactive", sub.unwrap_or_default()),
        )
        .unbounded(UnboundedCategory::Tty, None),
        Some("wait") => {
            // Proxmox's CLI parses with Getopt::Long, which accepts prefixes.
            let has_timeout = cmd
                .parse(Spec {
                    long_values: &["timeout"],
                    ..Spec::default()
                })
                .long("timeout");
            let v = Verdict::read("qm wait only waits");
            if has_timeout {
                v
            } else {
                v.unbounded(
                    UnboundedCategory::Stream,
                    Some(format!("{} --timeout 60", cmd.src())),
                )
            }
        }
        Some(s) => {
            let risk = if matches!(
                s,
                "destroy"
                    | "stop"
                    | "rollback"
                    | "reset"
                    | "delsnapshot"
                    | "reboot"
                    | "shutdown"
                    | "migrate"
                    | "importdisk"
                    | "disk"
            ) {
                Risk::High
            } else {
                Risk::Medium
            };
            Verdict::write(risk, format!("qm {s} changes the VM"))
        }
    }
}

/// `pct exec VMID -- CMD…` and `qm guest exec VMID [--timeout N] -- CMD…`.
fn guest_exec(cmd: &Cmd<'_>, what: &str, skip: usize) -> Verdict {
    let args = &cmd.args[skip..];
    let Some(dash) = args.iter().position(|w| w.fixed() == Some("--")) else {
        // Without `--`, the words after the vmid are the command (pct accepts that too).
        if args.len() >= 2 && args[1..].iter().all(|w| !w.text.starts_with("--")) {
            let head = format!("{what} {}", args[0].src);
            return wrap_rewrite(cmd.ctx.argv(&args[1..]), |r| format!("{head} -- {r}"));
        }
        return Verdict::unknown(format!(
            "{what} form not understood (use -- before the command)"
        ));
    };
    if args[..dash].iter().any(|w| w.is_dynamic()) {
        return cmd.dynamic_write();
    }
    if cmd
        .parse_args(&args[..dash], Spec::default())
        .long("pass-stdin")
    {
        return Verdict::unknown(format!(
            "{what} --pass-stdin feeds the command input we cannot see"
        ));
    }
    let inner = &args[dash + 1..];
    if inner.is_empty() {
        return Verdict::unknown(format!("{what} without a command"));
    }
    let head: Vec<String> = args[..dash].iter().map(|w| w.src.clone()).collect();
    let head = format!("{what} {} --", head.join(" "));
    wrap_rewrite(cmd.ctx.argv(inner), |r| format!("{head} {r}"))
}

fn pvesh(cmd: &Cmd<'_>) -> Verdict {
    match cmd.args.first().and_then(|w| w.fixed()) {
        None => Verdict::unknown("pvesh without a command opens a shell")
            .unbounded(UnboundedCategory::Repl, None),
        Some("get" | "ls" | "usage" | "help") => {
            if cmd.has_dynamic() {
                cmd.dynamic_write()
            } else {
                Verdict::read("pvesh get only reads the API")
            }
        }
        Some(m) => Verdict::write(Risk::High, format!("pvesh {m} changes the cluster")),
    }
}
