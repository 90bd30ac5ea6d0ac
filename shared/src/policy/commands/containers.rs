//! Container tools: compose, helm, crictl, stern, and the dispatch to docker/podman
//! (`docker.rs`) and kubectl (`kubernetes.rs`).

use super::super::args::Spec;
use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::super::word::Word;
use super::Cmd;
use crate::policy::options::judge;

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "docker" | "nerdctl" => super::docker::docker(cmd),
        "podman" => super::docker::podman(cmd),
        "docker-compose" | "podman-compose" => compose(cmd, cmd.args, cmd.name.to_owned()),
        "kubectl" | "oc" => super::kubernetes::kubectl(cmd),
        "k3s" | "microk8s" => match cmd.args.split_first() {
            Some((w, rest)) if w.fixed() == Some("kubectl") => {
                super::kubernetes::kubectl(&cmd.with_args("kubectl", rest))
            }
            _ => Verdict::unknown(format!("{} form not understood", cmd.name)),
        },
        "helm" => cmd.by_table("helm"),
        "stern" => {
            let p = cmd.parse(Spec {
                exact_long: true,
                ..Spec::default()
            });
            if p.long("no-follow") && p.value(None, "no-follow").is_none_or(|v| v == "true") {
                Verdict::read("stern --no-follow only reads")
            } else {
                Verdict::read("stern only reads").unbounded(
                    UnboundedCategory::Stream,
                    Some(cmd.rebuilt(|_| false, &["--no-follow", "--tail=200"])),
                )
            }
        }
        "crictl" => crictl(cmd),
        _ => return None,
    };
    Some(v)
}

/// crictl: `rules/crictl.toml` finds the command and checks every option; `logs -f` and
/// `stats --watch` are reads that do not end.
fn crictl(cmd: &Cmd<'_>) -> Verdict {
    let w = match cmd.walk("crictl") {
        Ok(w) => w,
        Err(v) => return v,
    };
    let v = judge("crictl", &w);
    if v.is_write() {
        return v;
    }
    match w.path.first().map(String::as_str) {
        Some("logs") if w.has("follow") => {
            let rewrite = cmd.rebuilt_without("f", &["follow"], true, &[]).replacen(
                "crictl logs",
                "crictl logs --tail=200",
                1,
            );
            v.because("crictl logs -f follows forever")
                .unbounded(UnboundedCategory::Stream, Some(rewrite))
        }
        Some("stats" | "statsp") if w.has("watch") => v
            .because("crictl stats --watch repeats forever")
            .unbounded(UnboundedCategory::Stream, None),
        _ => v,
    }
}

pub(super) fn is_tty_flag(w: &Word) -> bool {
    matches!(
        w.text.as_str(),
        "-it" | "-ti" | "-t" | "-i" | "--tty" | "--interactive"
    )
}

/// docker compose / docker-compose.
pub(super) fn compose(cmd: &Cmd<'_>, args: &[Word], prefix: String) -> Verdict {
    let ccmd = Cmd {
        name: cmd.name,
        args,
        ctx: cmd.ctx,
        scan: cmd.scan,
    };
    let p = ccmd.parse(Spec {
        short_values: "fp",
        long_values: &[
            "file",
            "project-name",
            "project-directory",
            "env-file",
            "profile",
            "ansi",
            "parallel",
            "progress",
        ],
        stop_at_positional: true,
        exact_long: true,
        ..Spec::default()
    });
    let Some(&si) = p.positional_index.first() else {
        return Verdict::read("compose with no subcommand prints help");
    };
    let Some(sub) = args[si].fixed() else {
        return ccmd.dynamic_write();
    };
    let rest = &args[si + 1..];
    let rcmd = cmd.with_args(cmd.name, rest);
    let rp = rcmd.parse(Spec {
        short_values: "no",
        long_values: &["tail", "since", "until", "format", "output"],
        exact_long: true,
        ..Spec::default()
    });
    match sub {
        "config" | "convert" if rp.flag('o', "output") => {
            Verdict::write(Risk::Low, format!("{prefix} {sub} -o writes a file"))
        }
        "ps" | "ls" | "config" | "images" | "top" | "version" | "port" | "convert" => {
            Verdict::read(format!("{prefix} {sub} only reads"))
        }
        "logs" if rp.flag('f', "follow") => {
            let mut parts = vec![prefix.clone()];
            parts.extend(args[..si].iter().map(|w| w.src.clone()));
            parts.push("logs".into());
            if !rp.long("tail") && !rp.short('n') {
                parts.push("--tail=200".into());
            }
            parts.extend(
                rest.iter()
                    .filter(|w| !super::super::args::names_option(w, "f", &["follow"], true))
                    .map(|w| w.src.clone()),
            );
            Verdict::read(format!("{prefix} logs only reads"))
                .unbounded(UnboundedCategory::Stream, Some(parts.join(" ")))
        }
        "logs" => Verdict::read(format!("{prefix} logs only reads")),
        "exec" => {
            let ep = rcmd.parse(Spec {
                short_values: "ewu",
                long_values: &["env", "workdir", "user", "index"],
                stop_at_positional: true,
                exact_long: true,
                ..Spec::default()
            });
            if ep.flag('d', "detach") || ep.flag('e', "env") || ep.long("privileged") {
                return Verdict::write(
                    Risk::Medium,
                    format!("{prefix} exec with -d/-e/--privileged"),
                );
            }
            match ep.positional_index.first() {
                Some(&i) if i + 1 < rest.len() => cmd.ctx.argv(&rest[i + 1..]),
                _ => Verdict::unknown(format!("{prefix} exec without a command"))
                    .unbounded(UnboundedCategory::Tty, None),
            }
        }
        other => {
            let risk = if matches!(other, "down" | "rm" | "kill" | "stop") {
                Risk::High
            } else {
                Risk::Medium
            };
            Verdict::write(risk, format!("{prefix} {other} changes services"))
        }
    }
}
