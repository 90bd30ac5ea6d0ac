//! Proxmox VE tools: pct, qm, pvesh, pvecm, pvesm, ha-manager, pveum, pvenode, pvesr,
//! pvesubscription, pvereport, pveceph, each read with its table in `rules/`.

use super::super::args::Spec;
use super::super::engine::wrap_rewrite;
use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::Cmd;
use crate::policy::options::judge;

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "pct" => pct(cmd),
        "qm" => qm(cmd),
        "pvesh" => pvesh(cmd),
        "pvecm" | "pvesm" | "ha-manager" | "pveum" | "pvenode" | "pvesr" | "pvesubscription"
        | "pvereport" | "pveceph" => cmd.by_table(cmd.name),
        _ => return None,
    };
    Some(v)
}

/// pct: `rules/pct.toml` decides; `exec` runs its inner command, `enter` is a shell.
fn pct(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "pct");
    match w.path.first().map(String::as_str) {
        Some("exec") => guest_exec(cmd, "pct exec", 1),
        Some("enter" | "console") => {
            Verdict::write(Risk::High, "pct enter opens a shell in the container")
                .unbounded(UnboundedCategory::Repl, None)
        }
        _ => judge("pct", &w),
    }
}

/// qm: `rules/qm.toml` decides; `guest`, `agent`, `wait` and the terminals here.
fn qm(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "qm");
    let sub = w.path.first().map(String::as_str);
    match sub {
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
            let v = judge("qm", &w);
            if v.is_write() || w.has("timeout") {
                v
            } else {
                v.unbounded(
                    UnboundedCategory::Stream,
                    Some(format!("{} --timeout 60", cmd.src())),
                )
            }
        }
        _ => judge("qm", &w),
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

/// pvesh: `rules/pvesh.toml` decides; without a method it is a shell.
fn pvesh(cmd: &Cmd<'_>) -> Verdict {
    if cmd.args.is_empty() {
        return Verdict::unknown("pvesh without a command opens a shell")
            .unbounded(UnboundedCategory::Repl, None);
    }
    cmd.by_table("pvesh")
}
