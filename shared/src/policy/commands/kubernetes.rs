//! kubectl (and `oc`, `k3s kubectl`): verbs, watch and follow forms, and `kubectl exec`.

use super::super::args::{Parsed, Spec};
use super::super::engine::wrap_rewrite;
use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::Cmd;
use super::containers::is_tty_flag;

const KUBECTL_VALUES: &str = "nlocsL";
const KUBECTL_LONG: &[&str] = &[
    "namespace",
    "selector",
    "output",
    "context",
    "cluster",
    "kubeconfig",
    "server",
    "user",
    "token",
    "container",
    "since",
    "since-time",
    "tail",
    "field-selector",
    "sort-by",
    "template",
    "filename",
    "as",
    "as-group",
    "request-timeout",
    "limit-bytes",
    "timeout",
    "label-columns",
    "chunk-size",
    "raw",
    "pod-running-timeout",
    "subresource",
    "for",
    "revision",
    "cache-dir",
    "certificate-authority",
    "client-certificate",
    "client-key",
    "tls-server-name",
];

pub(super) fn kubectl(cmd: &Cmd<'_>) -> Verdict {
    let p = cmd.parse(Spec {
        short_values: KUBECTL_VALUES,
        long_values: KUBECTL_LONG,
        exact_long: true,
        ..Spec::default()
    });
    let Some(&vi) = p.positional_index.first() else {
        return Verdict::read("kubectl with no command prints help");
    };
    let Some(verb) = cmd.args[vi].fixed() else {
        return cmd.dynamic_write();
    };
    let second = p.nth(1);
    if p.long("kubeconfig") {
        return Verdict::write(
            Risk::High,
            "kubectl --kubeconfig names a config whose exec plugins run programs",
        );
    }
    if verb == "exec" {
        return kubectl_exec(cmd, vi);
    }
    if p.dynamic && !matches!(verb, "get" | "describe" | "logs" | "top") {
        return cmd.dynamic_write();
    }
    let read = |what: &str| Verdict::read(format!("kubectl {what} only reads"));
    let watch = p.flag('w', "watch") || p.long("watch-only");
    match verb {
        "get" | "events" if watch => {
            let rewrite = cmd.rebuilt_without("w", &["watch", "watch-only"], true, &[]);
            read(verb).because("kubectl --watch streams forever").unbounded(UnboundedCategory::Stream, Some(rewrite))
        }
        "get" | "describe" | "explain" | "version" | "api-resources" | "api-versions" | "events" | "wait" | "kustomize" => read(verb),
        "diff" => Verdict::write(Risk::Medium, "kubectl diff runs a server-side dry-run apply and an external diff program"),
        "top" => read("top"),
        "logs" | "log" => {
            if p.flag('f', "follow") {
                let mut extra: Vec<&str> = Vec::new();
                if !p.long("tail") {
                    extra.push("--tail=200");
                }
                if !p.long("since") && !p.long("since-time") {
                    extra.push("--since=10m");
                }
                let rewrite = cmd.rebuilt_without("f", &["follow"], true, &[]);
                let rewrite = insert_after_verb(&rewrite, verb, &extra);
                read("logs").because("kubectl logs -f follows forever").unbounded(UnboundedCategory::Stream, Some(rewrite))
            } else {
                read("logs")
            }
        }
        "cluster-info" => {
            if p.long("output-directory") { Verdict::write(Risk::Low, "kubectl cluster-info dump --output-directory writes files") } else { read("cluster-info") }
        }
        "config" => match second {
            Some("view" | "get-contexts" | "current-context" | "get-clusters" | "get-users") => read("config view"),
            _ => Verdict::write(Risk::Medium, "kubectl config changes the kubeconfig"),
        },
        "auth" => match second {
            Some("can-i" | "whoami") => read("auth can-i"),
            _ => Verdict::write(Risk::Medium, "kubectl auth reconcile changes RBAC"),
        },
        "rollout" => match second {
            Some("history") => read("rollout history"),
            Some("status") => {
                if p.opts.iter().any(|o| matches!(o, super::super::args::Opt::Long(l, Some(v)) if l == "watch" && v == "false")) || p.long("timeout") {
                    read("rollout status")
                } else {
                    let rewrite = cmd.rebuilt(|_| false, &[]) + " --watch=false";
                    read("rollout status").unbounded(UnboundedCategory::Stream, Some(rewrite))
                }
            }
            _ => Verdict::write(Risk::High, format!("kubectl rollout {} changes workloads", second.unwrap_or("?"))),
        },
        "run" if p.flag('i', "stdin") || p.flag('t', "tty") => Verdict::write(Risk::Medium, "kubectl run starts a pod").unbounded(UnboundedCategory::Tty, None),
        "port-forward" | "proxy" => Verdict::write(Risk::Medium, format!("kubectl {verb} opens a listener")).unbounded(UnboundedCategory::Stream, None),
        "attach" | "debug" | "edit" => Verdict::write(Risk::Medium, format!("kubectl {verb} is interactive")).unbounded(UnboundedCategory::Tty, None),
        "delete" | "drain" | "replace" | "scale" | "cordon" | "taint" => Verdict::write(Risk::High, format!("kubectl {verb} changes the cluster")),
        other => Verdict::write(Risk::Medium, format!("kubectl {other} changes the cluster")),
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

/// `kubectl exec [opts] POD [-c C] -- CMD…`.
fn kubectl_exec(cmd: &Cmd<'_>, vi: usize) -> Verdict {
    let args = cmd.args;
    let dash = args.iter().position(|w| w.fixed() == Some("--"));
    let (opts, inner) = match dash {
        Some(d) => (&args[..d], &args[d + 1..]),
        None => {
            // Deprecated form: kubectl exec POD CMD…
            let p = cmd.with_args("kubectl", &args[vi + 1..]).parse(Spec {
                short_values: KUBECTL_VALUES,
                long_values: KUBECTL_LONG,
                stop_at_positional: true,
                exact_long: true,
                ..Spec::default()
            });
            match p.positional_index.get(1) {
                Some(&i) => (&args[..vi + 1 + i], &args[vi + 1 + i..]),
                None => (args, &args[args.len()..]),
            }
        }
    };
    let oc = cmd.with_args("kubectl", opts);
    let p: Parsed<'_> = oc.parse(Spec {
        short_values: KUBECTL_VALUES,
        long_values: KUBECTL_LONG,
        exact_long: true,
        ..Spec::default()
    });
    if p.dynamic {
        return oc.dynamic_write();
    }
    if inner.is_empty() {
        return Verdict::unknown("kubectl exec without a command")
            .unbounded(UnboundedCategory::Tty, None);
    }
    let mut v = cmd.ctx.argv(inner);
    let head: Vec<String> = opts
        .iter()
        .filter(|w| !is_tty_flag(w) && !super::super::args::names_option(w, "", &["stdin"], true))
        .map(|w| w.src.clone())
        .collect();
    let head = format!("kubectl {} --", head.join(" "));
    v = wrap_rewrite(v, |r| format!("{head} {r}"));
    if (p.flag('t', "tty") || p.flag('i', "stdin")) && v.unbounded.is_none() {
        let rewrite =
            (!v.is_write()).then(|| format!("{head} {}", super::super::word::join_src(inner)));
        v = v
            .because("kubectl exec -it needs a terminal")
            .unbounded(UnboundedCategory::Tty, rewrite);
    }
    v
}
