//! ZFS: `zfs` and `zpool` subcommands, with interval forms of `zpool iostat/status`.

use super::super::args::Spec;
use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::Cmd;

pub(super) fn zfs(cmd: &Cmd<'_>) -> Verdict {
    const READS: &[&str] = &[
        "list",
        "get",
        "holds",
        "diff",
        "userspace",
        "groupspace",
        "projectspace",
        "version",
        "help",
        "send",
        "wait",
    ];
    let p = cmd.parse(Spec {
        stop_at_positional: true,
        ..Spec::default()
    });
    match p.first() {
        None => Verdict::read("zfs with no subcommand prints help"),
        Some("send") => {
            let sp = cmd.with_args("zfs", &cmd.args[1..]).parse(Spec::default());
            if sp.flag('n', "dryrun") || sp.flag('P', "parsable") && sp.short('n') {
                Verdict::read("zfs send -n only estimates")
            } else {
                Verdict::read("zfs send writes the stream to standard output")
            }
        }
        Some(sub) if READS.contains(&sub) => Verdict::read(format!("zfs {sub} only reads")),
        Some(sub) => {
            let risk = if matches!(
                sub,
                "destroy"
                    | "rollback"
                    | "receive"
                    | "recv"
                    | "promote"
                    | "rename"
                    | "unmount"
                    | "umount"
            ) {
                Risk::High
            } else {
                Risk::Medium
            };
            Verdict::write(risk, format!("zfs {sub} changes datasets"))
        }
    }
}

pub(super) fn zpool(cmd: &Cmd<'_>) -> Verdict {
    const READS: &[&str] = &["status", "list", "get", "history", "version", "help"];
    let p = cmd.parse(Spec {
        stop_at_positional: true,
        ..Spec::default()
    });
    let Some(&si) = p.positional_index.first() else {
        return Verdict::read("zpool with no subcommand prints help");
    };
    let Some(sub) = cmd.args[si].fixed() else {
        return cmd.dynamic_write();
    };
    let rest = cmd.with_args("zpool", &cmd.args[si + 1..]);
    let rp = rest.parse(Spec {
        short_values: "ToTc",
        ..Spec::default()
    });
    match sub {
        "iostat" => {
            let trailing_numbers = rp
                .positionals
                .iter()
                .rev()
                .take_while(|w| w.fixed().is_some_and(|t| t.parse::<f64>().is_ok()))
                .count();
            let v = Verdict::read("zpool iostat only reports");
            if trailing_numbers == 1 {
                v.because("zpool iostat with an interval and no count repeats forever")
                    .unbounded(UnboundedCategory::Stream, Some(format!("{} 5", cmd.src())))
            } else {
                v
            }
        }
        "status"
            if rp
                .positionals
                .iter()
                .filter_map(|w| w.fixed())
                .any(|t| t.parse::<f64>().is_ok())
                && rp
                    .positionals
                    .iter()
                    .filter_map(|w| w.fixed())
                    .filter(|t| t.parse::<f64>().is_ok())
                    .count()
                    == 1 =>
        {
            Verdict::read("zpool status only reports")
                .unbounded(UnboundedCategory::Stream, Some(format!("{} 1", cmd.src())))
        }
        "events" => {
            if rp.flag('f', "follow") {
                Verdict::read("zpool events only reads").unbounded(
                    UnboundedCategory::Stream,
                    Some(cmd.rebuilt_without("f", &[], false, &[])),
                )
            } else if rp.short('c') {
                Verdict::write(Risk::Low, "zpool events -c clears the event log")
            } else {
                Verdict::read("zpool events only reads")
            }
        }
        "import" if rp.positionals.is_empty() && !rp.short('a') => {
            Verdict::read("zpool import without a pool only lists importable pools")
        }
        "wait" => Verdict::read("zpool wait only waits"),
        s if READS.contains(&s) => Verdict::read(format!("zpool {s} only reads")),
        s => {
            let risk = if matches!(
                s,
                "destroy"
                    | "offline"
                    | "detach"
                    | "remove"
                    | "export"
                    | "labelclear"
                    | "replace"
                    | "split"
                    | "create"
                    | "add"
            ) {
                Risk::High
            } else {
                Risk::Medium
            };
            Verdict::write(risk, format!("zpool {s} changes the pool"))
        }
    }
}
