//! Container tools: compose, helm, crictl, stern, and the dispatch to docker/podman
//! (`docker.rs`) and kubectl (`kubernetes.rs`).

use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::super::word::Word;
use super::Cmd;
use crate::policy::options::judge;

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "docker" | "nerdctl" => super::docker::docker(cmd),
        "podman" => super::docker::podman(cmd),
        "docker-compose" => compose(cmd, cmd.args, cmd.name.to_owned()),
        // It runs podman, which opens and on first use creates its storage: no podman
        // form is a read (docker.rs).
        "podman-compose" => Verdict::write(
            Risk::Medium,
            "podman-compose runs podman, which creates its storage and state on first use",
        ),
        "kubectl" | "oc" => super::kubernetes::kubectl(cmd),
        "k3s" | "microk8s" => k3s(cmd),
        "helm" => cmd.by_table("helm"),
        "stern" => stern(cmd),
        "crictl" => crictl(cmd),
        _ => return None,
    };
    Some(v)
}

/// k3s/microk8s: `rules/k3s.toml` finds `kubectl`; its arguments go to kubectl's table.
fn k3s(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "k3s");
    if w.deny.is_some() || w.path.first().map(String::as_str) != Some("kubectl") {
        return judge(cmd.name, &w);
    }
    let rest = cmd.args.get(w.after_sub..).unwrap_or_default();
    super::kubernetes::kubectl(&cmd.with_args("kubectl", rest))
}

/// stern: `rules/stern.toml` decides; without `--no-follow` (or with `--no-follow=false`)
/// it follows forever.
fn stern(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "stern");
    let v = judge("stern", &w);
    if v.is_write() {
        return v;
    }
    let ends = w
        .all("no-follow")
        .last()
        .is_some_and(|o| o.value.is_none() || o.fixed() == Some("true"));
    if ends {
        return v;
    }
    v.because("stern follows the logs forever").unbounded(
        UnboundedCategory::Stream,
        Some(cmd.rebuilt(|_| false, &["--no-follow", "--tail=200"])),
    )
}

/// crictl: `rules/crictl.toml` finds the command and checks every option; `logs -f` and
/// `stats --watch` are reads that do not end.
fn crictl(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "crictl");
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

/// docker compose / docker-compose: `rules/compose.toml` decides; `logs -f` is a
/// stream and `exec` runs its inner command.
pub(super) fn compose(cmd: &Cmd<'_>, args: &[Word], prefix: String) -> Verdict {
    let w = match cmd.walk_args(args, "docker-compose") {
        Ok(w) => w,
        Err(v) => return v,
    };
    let v = judge(&prefix, &w);
    if v.is_write() {
        return v;
    }
    match w.path.first().map(String::as_str) {
        Some("logs") if w.has("follow") => {
            let mut parts = vec![prefix.clone()];
            parts.extend(args[..w.after_sub].iter().map(|a| a.src.clone()));
            if !w.has("tail") {
                parts.push("--tail=200".into());
            }
            parts.extend(
                args[w.after_sub..]
                    .iter()
                    .filter(|a| !super::super::args::names_option(a, "f", &["follow"], true))
                    .map(|a| a.src.clone()),
            );
            v.because(format!("{prefix} logs -f follows forever"))
                .unbounded(UnboundedCategory::Stream, Some(parts.join(" ")))
        }
        Some("exec") => match w.operand_index.first() {
            Some(&i) if i + 1 < args.len() => cmd.ctx.argv(&args[i + 1..]),
            _ => Verdict::unknown(format!("{prefix} exec without a command"))
                .unbounded(UnboundedCategory::Tty, None),
        },
        _ => v,
    }
}
