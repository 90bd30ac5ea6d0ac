//! kubectl (and `oc`, `k3s kubectl`): verbs, watch and follow forms, and `kubectl exec`.

use super::super::engine::wrap_rewrite;
use super::super::types::UnboundedCategory;
use super::super::verdict::Verdict;
use super::Cmd;
use super::containers::is_tty_flag;
use crate::policy::options::{Walk, judge};
use crate::policy::word::Word;

/// kubectl: `rules/kubectl.toml` finds the verb and checks every option; the rest here
/// is boundedness (watch, follow, terminals) and `kubectl exec`'s inner command.
pub(super) fn kubectl(cmd: &Cmd<'_>) -> Verdict {
    // Before a literal `--`, for `kubectl exec POD -- CMD…`: the words after it are the
    // inner command's, classified on their own.
    let dash = cmd.args.iter().position(|w| w.lit() == Some("--"));
    if let Some(d) = dash {
        let head = cmd.args.get(..d).unwrap_or_default();
        match cmd.walk_args(head, "kubectl") {
            Ok(w) if w.path.first().map(String::as_str) == Some("exec") => {
                let inner = cmd.args.get(d + 1..).unwrap_or_default();
                return kubectl_exec(cmd, &w, head, inner);
            }
            Ok(_) => {}
            Err(v) => return v,
        }
    }
    let w = walk!(cmd, "kubectl");
    let Some(verb) = w.path.first().map(String::as_str) else {
        return judge("kubectl", &w);
    };
    if verb == "exec" {
        // Deprecated form: kubectl exec POD CMD…
        let split = w.operand_index.get(1).copied().unwrap_or(cmd.args.len());
        let head = cmd.args.get(..split).unwrap_or_default();
        let inner = cmd.args.get(split..).unwrap_or_default();
        return kubectl_exec(cmd, &w, head, inner);
    }
    let v = judge("kubectl", &w);
    let second = w.path.get(1).map(String::as_str);
    if v.is_write() {
        return match verb {
            "run" if w.has("stdin") || w.has("tty") => v.unbounded(UnboundedCategory::Tty, None),
            "port-forward" | "proxy" => v
                .because(format!("kubectl {verb} opens a listener"))
                .unbounded(UnboundedCategory::Stream, None),
            "attach" | "debug" | "edit" => v
                .because(format!("kubectl {verb} is interactive"))
                .unbounded(UnboundedCategory::Tty, None),
            _ => v,
        };
    }
    match (verb, second) {
        ("get" | "events", _) if w.has("watch") || w.has("watch-only") => {
            let rewrite = cmd.rebuilt_without("w", &["watch", "watch-only"], true, &[]);
            v.because("kubectl --watch streams forever")
                .unbounded(UnboundedCategory::Stream, Some(rewrite))
        }
        ("logs" | "log", _) if w.has("follow") => {
            let mut extra: Vec<&str> = Vec::new();
            if !w.has("tail") {
                extra.push("--tail=200");
            }
            if !w.has("since") && !w.has("since-time") {
                extra.push("--since=10m");
            }
            let rewrite = cmd.rebuilt_without("f", &["follow"], true, &[]);
            let rewrite = insert_after_verb(&rewrite, verb, &extra);
            v.because("kubectl logs -f follows forever")
                .unbounded(UnboundedCategory::Stream, Some(rewrite))
        }
        ("rollout", Some("status")) => {
            let ends = w.all("watch").any(|o| o.fixed() == Some("false")) || w.has("timeout");
            if ends {
                v
            } else {
                let rewrite = cmd.rebuilt(|_| false, &[]) + " --watch=false";
                v.unbounded(UnboundedCategory::Stream, Some(rewrite))
            }
        }
        _ => v,
    }
}

fn insert_after_verb(src: &str, verb: &str, extra: &[&str]) -> String {
    if extra.is_empty() {
        return src.to_owned();
    }
    let needle = format!(" {verb}");
    match src.find(&needle) {
        Some(i) => {
            let at = i + needle.len();
            format!("{} {}{}", &src[..at], extra.join(" "), &src[at..])
        }
        None => format!("{src} {}", extra.join(" ")),
    }
}

/// `kubectl exec [opts] POD [-c C] -- CMD…`: the options (`head`, already walked with
/// the table) and the inner command, classified on its own.
fn kubectl_exec(cmd: &Cmd<'_>, w: &Walk<'_, '_>, head: &[Word], inner: &[Word]) -> Verdict {
    let v = judge("kubectl", w);
    if v.is_write() {
        return v;
    }
    if inner.is_empty() {
        return Verdict::unknown("kubectl exec without a command")
            .unbounded(UnboundedCategory::Tty, None);
    }
    let mut v = cmd.ctx.argv(inner);
    let kept: Vec<String> = head
        .iter()
        .filter(|w| !is_tty_flag(w) && !super::super::args::names_option(w, "", &["stdin"], true))
        .map(|w| w.src.clone())
        .collect();
    let prefix = format!("kubectl {} --", kept.join(" "));
    v = wrap_rewrite(v, |r| format!("{prefix} {r}"));
    if (w.has("tty") || w.has("stdin")) && v.unbounded.is_none() {
        let rewrite =
            (!v.is_write()).then(|| format!("{prefix} {}", super::super::word::join_src(inner)));
        v = v
            .because("kubectl exec -it needs a terminal")
            .unbounded(UnboundedCategory::Tty, rewrite);
    }
    v
}
