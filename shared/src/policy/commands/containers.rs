//! Container tools: docker/podman (and compose), kubectl, helm, crictl.

use super::super::args::Spec;
use super::super::engine::wrap_rewrite;
use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::super::word::Word;
use super::{Cmd, by_subcommand};

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "docker" | "podman" | "nerdctl" => docker(cmd),
        "docker-compose" | "podman-compose" => compose(cmd, cmd.args, cmd.name.to_owned()),
        "kubectl" | "oc" => super::kubernetes::kubectl(cmd),
        "k3s" | "microk8s" => match cmd.args.split_first() {
            Some((w, rest)) if w.fixed() == Some("kubectl") => {
                super::kubernetes::kubectl(&cmd.with_args("kubectl", rest))
            }
            _ => Verdict::unknown(format!("{} form not understood", cmd.name)),
        },
        "helm" if helm_runs(cmd) => Verdict::write(
            Risk::High,
            "helm --post-renderer or --kubeconfig runs a program (a renderer, exec plugins)",
        ),
        "helm" => super::misc::by_words(
            cmd,
            &[
                "list", "ls", "status", "get", "history", "show", "inspect", "version", "search",
                "env", "template", "lint", "verify",
            ],
            &[
                "install",
                "upgrade",
                "uninstall",
                "delete",
                "del",
                "rollback",
                "add",
                "remove",
                "rm",
                "update",
                "up",
                "push",
                "pull",
                "fetch",
                "package",
                "create",
                "build",
                "login",
                "logout",
                "test",
                "index",
            ],
            false,
        ),
        "crictl"
            if cmd.args.first().and_then(|w| w.fixed()) == Some("logs")
                && cmd
                    .parse_args(
                        &cmd.args[1..],
                        Spec {
                            exact_long: true,
                            ..Spec::default()
                        },
                    )
                    .flag('f', "follow") =>
        {
            Verdict::read("crictl logs only reads").unbounded(
                UnboundedCategory::Stream,
                Some(cmd.rebuilt_without("f", &["follow"], true, &[]).replacen(
                    "crictl logs",
                    "crictl logs --tail=200",
                    1,
                )),
            )
        }
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
        "crictl" => by_subcommand(
            cmd,
            Spec {
                exact_long: true,
                ..Spec::default()
            },
            &[
                "ps",
                "pods",
                "images",
                "img",
                "inspect",
                "inspecti",
                "inspectp",
                "logs",
                "stats",
                "statsp",
                "info",
                "version",
                "imagefsinfo",
            ],
            false,
        ),
        _ => return None,
    };
    Some(v)
}

/// helm (Go flags, written in full) options that run a program.
fn helm_runs(cmd: &Cmd<'_>) -> bool {
    let p = cmd.parse(Spec {
        long_values: &["post-renderer", "kubeconfig"],
        exact_long: true,
        ..Spec::default()
    });
    p.long("post-renderer") || p.long("kubeconfig")
}

/// docker's global `--config DIR` (credential helpers, CLI plugins) and `-H ssh://…`
/// (runs ssh) make docker run other programs.
fn docker_global_runs(cmd: &Cmd<'_>) -> Option<Verdict> {
    let p = cmd.parse(Spec {
        short_values: DOCKER_GLOBAL_VALUES,
        long_values: DOCKER_GLOBAL_LONG,
        stop_at_positional: true,
        exact_long: true,
        ..Spec::default()
    });
    if p.long("config") {
        return Some(Verdict::write(
            Risk::High,
            format!(
                "{} --config names a directory whose helpers and plugins run",
                cmd.name
            ),
        ));
    }
    p.value(Some('H'), "host")
        .filter(|h| h.starts_with("ssh://"))
        .map(|_| Verdict::write(Risk::High, format!("{} -H ssh:// runs ssh", cmd.name)))
}

const DOCKER_GLOBAL_VALUES: &str = "Hlc";
const DOCKER_GLOBAL_LONG: &[&str] = &[
    "host",
    "context",
    "config",
    "log-level",
    "tlscacert",
    "tlscert",
    "tlskey",
];

/// Split `docker [global opts] SUB rest…`.
fn docker_sub(args: &[Word]) -> Result<Option<(&str, &[Word])>, ()> {
    let mut i = 0;
    while i < args.len() {
        let t = args[i].fixed().ok_or(())?;
        if !t.starts_with('-') {
            return Ok(Some((t, &args[i + 1..])));
        }
        let takes = (t.len() == 2 && DOCKER_GLOBAL_VALUES.contains(&t[1..]))
            || t.strip_prefix("--")
                .is_some_and(|l| DOCKER_GLOBAL_LONG.contains(&l));
        i += if takes { 2 } else { 1 };
    }
    Ok(None)
}

fn docker(cmd: &Cmd<'_>) -> Verdict {
    if let Some(v) = docker_global_runs(cmd) {
        return v;
    }
    let Ok(split) = docker_sub(cmd.args) else {
        return cmd.dynamic_write();
    };
    let Some((sub, rest)) = split else {
        return Verdict::read("docker with no subcommand prints help");
    };
    let sub_cmd = cmd.with_args(cmd.name, rest);
    let name = cmd.name;
    // Management commands: `docker container ls` == `docker ps`, and so on.
    let (object, verb, vargs) = match sub {
        "container" | "image" | "network" | "volume" | "system" | "context" | "node"
        | "service" | "stack" | "plugin" | "secret" | "config" | "buildx" | "manifest"
        | "swarm" | "trust" | "builder" | "scout" | "pod" | "machine" => {
            let p = sub_cmd.parse(Spec {
                stop_at_positional: true,
                exact_long: true,
                ..Spec::default()
            });
            match p.positional_index.first() {
                Some(&i) => (sub, rest[i].fixed().unwrap_or("?"), &rest[i + 1..]),
                None => return Verdict::read(format!("{name} {sub} prints help")),
            }
        }
        _ => ("", sub, rest),
    };
    let vcmd = cmd.with_args(cmd.name, vargs);
    let p = vcmd.parse(Spec {
        short_values: "nuwe",
        long_values: &[
            "format",
            "filter",
            "tail",
            "since",
            "until",
            "user",
            "workdir",
            "env",
            "env-file",
            "last",
            "output",
            "type",
            "detach-keys",
            "time",
            "signal",
            "platform",
        ],
        exact_long: true,
        ..Spec::default()
    });
    let read = |what: &str| Verdict::read(format!("{name} {what} only reads"));
    match (object, verb) {
        ("compose", _) | ("", "compose") => compose(cmd, rest, format!("{name} compose")),
        (_, "exec") if matches!(object, "" | "container") => docker_exec(cmd, vargs),
        ("" | "container", "ps" | "ls" | "list" | "inspect" | "top" | "port" | "diff")
        | ("image", "ls" | "list" | "inspect" | "history")
        | ("", "images" | "info" | "version" | "history" | "search")
        | (
            "network" | "volume" | "context" | "node" | "secret" | "config" | "plugin" | "service"
            | "stack",
            "ls" | "list" | "inspect" | "ps" | "show" | "services",
        )
        | ("system", "df" | "info")
        | ("buildx", "ls" | "version" | "du")
        | ("manifest", "inspect")
        | ("pod", "ps" | "ls" | "inspect" | "top" | "stats") => {
            // Flags after the verb are the verb's own (cobra stops global flags at the
            // subcommand), and every flag of these listing verbs only formats or filters.
            cmd.options_only_read();
            read(verb)
        }
        (_, "logs") => {
            if p.flag('f', "follow") {
                let rewrite = Some(vcmd_rebuilt(
                    cmd,
                    sub,
                    object,
                    verb,
                    vargs,
                    |w| super::super::args::names_option(w, "f", &["follow"], true),
                    if p.long("tail") || p.short('n') {
                        &[]
                    } else {
                        &["--tail=200"]
                    },
                ));
                read("logs")
                    .because(format!("{name} logs -f follows forever"))
                    .unbounded(UnboundedCategory::Stream, rewrite)
            } else {
                read("logs")
            }
        }
        ("" | "container", "stats") => {
            if p.long("no-stream") {
                read("stats --no-stream")
            } else {
                let rewrite =
                    vcmd_rebuilt(cmd, sub, object, verb, vargs, |_| false, &["--no-stream"]);
                read("stats")
                    .because(format!("{name} stats streams forever"))
                    .unbounded(UnboundedCategory::Stream, Some(rewrite))
            }
        }
        ("" | "system", "events") => {
            if p.long("until") {
                read("events --until")
            } else {
                let rewrite = vcmd_rebuilt(
                    cmd,
                    sub,
                    object,
                    verb,
                    vargs,
                    |_| false,
                    &["--since", "10m", "--until", "0s"],
                );
                read("events")
                    .because(format!("{name} events streams forever"))
                    .unbounded(UnboundedCategory::Stream, Some(rewrite))
            }
        }
        ("" | "image", "save") | ("" | "container", "export") => {
            if p.flag('o', "output") {
                Verdict::write(Risk::Medium, format!("{name} {verb} -o writes a file"))
            } else {
                read(verb)
            }
        }
        ("swarm", "ca") if !p.long("rotate") => read("swarm ca"),
        ("" | "container", "wait") => read("wait")
            .because(format!("{name} wait blocks until the container stops"))
            .unbounded(UnboundedCategory::Stream, None),
        ("" | "container", "run" | "create")
            if p.flag('i', "interactive") || p.flag('t', "tty") =>
        {
            Verdict::write(Risk::Medium, format!("{name} run starts a container"))
                .unbounded(UnboundedCategory::Tty, None)
        }
        ("" | "container", "attach") => Verdict::write(
            Risk::Medium,
            format!("{name} attach connects to a container's input"),
        )
        .unbounded(UnboundedCategory::Tty, None),
        (_, v) => {
            let risk = match v {
                "rm" | "rmi" | "prune" | "kill" | "stop" | "down" | "leave" | "remove" => {
                    Risk::High
                }
                _ => Risk::Medium,
            };
            let obj = if object.is_empty() {
                String::new()
            } else {
                format!("{object} ")
            };
            Verdict::write(
                risk,
                format!("{name} {obj}{v} changes containers, images or the engine"),
            )
        }
    }
}

fn vcmd_rebuilt(
    cmd: &Cmd<'_>,
    sub: &str,
    object: &str,
    verb: &str,
    vargs: &[Word],
    drop: impl Fn(&Word) -> bool,
    extra: &[&str],
) -> String {
    let mut parts = vec![cmd.name.to_owned()];
    if object.is_empty() {
        parts.push(sub.to_owned());
    } else {
        parts.push(object.to_owned());
        parts.push(verb.to_owned());
    }
    parts.extend(extra.iter().map(|s| (*s).to_owned()));
    parts.extend(vargs.iter().filter(|w| !drop(w)).map(|w| w.src.clone()));
    parts.join(" ")
}

/// `docker exec [opts] CONTAINER CMD…`: classified by CMD.
fn docker_exec(cmd: &Cmd<'_>, args: &[Word]) -> Verdict {
    let ecmd = Cmd {
        name: cmd.name,
        args,
        ctx: cmd.ctx,
        scan: cmd.scan,
    };
    let p = ecmd.parse(Spec {
        short_values: "ewu",
        long_values: &["env", "env-file", "workdir", "user", "detach-keys"],
        stop_at_positional: true,
        exact_long: true,
        ..Spec::default()
    });
    if p.dynamic
        && p.positional_index
            .first()
            .is_none_or(|&i| args[..i].iter().any(Word::is_dynamic))
    {
        return ecmd.dynamic_write();
    }
    if p.flag('d', "detach") {
        return Verdict::write(
            Risk::Medium,
            format!("{} exec -d leaves a process running", cmd.name),
        );
    }
    if p.flag('e', "env") || p.long("env-file") {
        return Verdict::write(
            Risk::Medium,
            format!("{} exec -e changes the command's environment", cmd.name),
        );
    }
    if p.long("privileged") {
        return Verdict::write(Risk::High, format!("{} exec --privileged", cmd.name));
    }
    let Some(&ci) = p.positional_index.first() else {
        return Verdict::unknown("docker exec without a container");
    };
    let inner = &args[ci + 1..];
    if inner.is_empty() {
        return Verdict::unknown("docker exec without a command");
    }
    let tty = p.flag('t', "tty");
    let interactive = p.flag('i', "interactive");
    let mut v = cmd.ctx.argv(inner);
    let head: Vec<String> = args[..=ci]
        .iter()
        .filter(|w| !is_tty_flag(w))
        .map(|w| w.src.clone())
        .collect();
    let head = format!("{} exec {}", cmd.name, head.join(" "));
    v = wrap_rewrite(v, |r| format!("{head} {r}"));
    if (tty || interactive) && v.unbounded.is_none() {
        let rewrite =
            (!v.is_write()).then(|| format!("{head} {}", super::super::word::join_src(inner)));
        v = v
            .because(format!("{} exec -it needs a terminal", cmd.name))
            .unbounded(UnboundedCategory::Tty, rewrite);
    }
    v
}

pub(super) fn is_tty_flag(w: &Word) -> bool {
    matches!(
        w.text.as_str(),
        "-it" | "-ti" | "-t" | "-i" | "--tty" | "--interactive"
    )
}

/// docker compose / docker-compose.
fn compose(cmd: &Cmd<'_>, args: &[Word], prefix: String) -> Verdict {
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
