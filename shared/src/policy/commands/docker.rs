//! docker (and nerdctl): `rules/docker.toml` finds the verb and checks every option; here
//! are what the table cannot say: `-H ssh://` runs ssh, `exec`'s inner command, `compose`,
//! and the follow and stream forms (bounded rewrites).

use super::Cmd;
use super::containers::{compose, is_tty_flag};
use crate::policy::engine::wrap_rewrite;
use crate::policy::options::{Effect, Walk, judge, table, walk};
use crate::policy::types::{Risk, UnboundedCategory};
use crate::policy::verdict::Verdict;
use crate::policy::word::{Word, join_src};

/// podman: its own table (`rules/podman.toml`, global options persistent) finds the
/// verb and the options that write or run programs. But podman itself is the engine: every
/// command opens its storage, lock files and state database read-write, and creates them
/// on first use (the write oracle saw `/var/lib/containers/storage/…`, `bolt_state.db`
/// and `/etc/cni/net.d/cni.lock` appear for `podman images`), so no form is a read.
pub(super) fn podman(cmd: &Cmd<'_>) -> Verdict {
    let v = docker(cmd);
    if v.is_write() {
        return v;
    }
    Verdict::unknown(format!(
        "{}: podman opens (and on first use creates) its storage, locks and state \
         database read-write, so even a listing writes",
        cmd.name
    ))
}

/// docker, nerdctl and podman, each with its table.
pub(super) fn docker(cmd: &Cmd<'_>) -> Verdict {
    let name = cmd.name;
    let w = walk!(cmd, name);
    for host in w.all("host") {
        // pflag drops the `=` of `-H=ssh://…`; Go lowercases the scheme.
        match host
            .fixed()
            .map(|h| h.trim_start_matches('=').to_ascii_lowercase())
        {
            Some(h) if h.starts_with("unix:") => {}
            Some(h) if h.starts_with("ssh:") => {
                return Verdict::write(Risk::High, format!("{name} -H ssh:// runs ssh"));
            }
            // A read reaches the engine only through the agent's read-only door on its
            // local socket; an engine over TCP would take any request.
            Some(_) => {
                return Verdict::write(
                    Risk::High,
                    format!(
                        "{name} -H to an engine over the network bypasses the read-only door \
                         (only unix:// sockets are read)"
                    ),
                );
            }
            None => {
                return Verdict::write(
                    Risk::High,
                    format!("{name} -H is computed at run time and may be ssh://, which runs ssh"),
                );
            }
        }
    }
    let v = judge(name, &w);
    let path: Vec<&str> = w.path.iter().map(String::as_str).collect();
    let verb = path.last().copied().unwrap_or("");
    if v.is_write() {
        return match verb {
            "run" | "create" if tty_requested(cmd.args.get(w.after_sub..).unwrap_or_default()) => {
                v.unbounded(UnboundedCategory::Tty, None)
            }
            "attach" => v
                .because(format!("{name} attach connects to a container's input"))
                .unbounded(UnboundedCategory::Tty, None),
            _ => v,
        };
    }
    let at = w.after_sub;
    match (path.first().copied(), verb) {
        (Some("compose"), _) => compose(
            cmd,
            cmd.args.get(at..).unwrap_or_default(),
            format!("{name} compose"),
        ),
        (_, "exec") => exec(cmd),
        (_, "logs") if w.has("follow") => {
            let extra: &[&str] = if w.has("tail") { &[] } else { &["--tail=200"] };
            let rewrite = rebuilt(cmd, at, |w| is_option(w, 'f', "follow"), extra);
            v.because(format!("{name} logs -f follows forever"))
                .unbounded(UnboundedCategory::Stream, Some(rewrite))
        }
        (_, "stats") if !w.has("no-stream") => {
            let rewrite = rebuilt(cmd, at, |_| false, &["--no-stream"]);
            v.because(format!("{name} stats streams forever"))
                .unbounded(UnboundedCategory::Stream, Some(rewrite))
        }
        (_, "events") if !w.has("until") => {
            let rewrite = rebuilt(cmd, at, |_| false, &["--since", "10m", "--until", "0s"]);
            v.because(format!("{name} events streams forever"))
                .unbounded(UnboundedCategory::Stream, Some(rewrite))
        }
        (_, "ps") if w.has("watch") => v
            .because(format!("{name} ps --watch repeats forever"))
            .unbounded(UnboundedCategory::Stream, None),
        (_, "inspect" | "images" | "ls" | "list" | "port" | "diff" | "history" | "exists")
            if w.node.opts.iter().all(|o| o.effect == Effect::Read) =>
        {
            // Every option of these verbs only selects or formats, and none follows or
            // streams: an expansion (`xargs docker inspect`) is harmless anywhere.
            cmd.options_only_read();
            v
        }
        (_, "wait") => v
            .because(format!("{name} wait blocks until the container stops"))
            .unbounded(UnboundedCategory::Stream, None),
        _ => v,
    }
}

/// `-i`/`-t` among the words after `run`/`create`: the verb is a write already (its
/// options are not declared); this only says it also needs a terminal, so a `-it` of the
/// inner command counting too errs on the side of asking for one.
fn tty_requested(args: &[Word]) -> bool {
    args.iter().any(is_tty_flag)
}

/// A word that is the option `-c`/`--long` (with its value attached, if any).
fn is_option(w: &Word, short: char, long: &str) -> bool {
    crate::policy::args::names_option(w, &short.to_string(), &[long], true)
}

/// The command with `extra` inserted after the verb (`at` words in) and the words
/// `drop` rejects left out after it.
fn rebuilt(cmd: &Cmd<'_>, at: usize, drop: impl Fn(&Word) -> bool, extra: &[&str]) -> String {
    let (head, tail) = cmd.args.split_at(at.min(cmd.args.len()));
    let mut parts = vec![cmd.name.to_owned()];
    parts.extend(head.iter().map(|w| w.src.clone()));
    parts.extend(extra.iter().map(|s| (*s).to_owned()));
    parts.extend(tail.iter().filter(|w| !drop(w)).map(|w| w.src.clone()));
    parts.join(" ")
}

/// `docker [globals] [container] exec [opts] CONTAINER CMD…`: the options up to the
/// container were judged by the table (it stops at the container); CMD is classified on
/// its own.
fn exec(cmd: &Cmd<'_>) -> Verdict {
    let name = cmd.name;
    // Find the container without noting the inner command's words for the expansion
    // gate, then walk only the head so the gate sees where options could be.
    let Some(Ok(t)) = table(name) else {
        return Verdict::unknown(format!("{name}: no option table"));
    };
    let first: Walk<'_, '_> = walk(cmd.args, t);
    let Some(&ci) = first.operand_index.first() else {
        return Verdict::unknown(format!("{name} exec without a container"));
    };
    let head = cmd.args.get(..=ci).unwrap_or_default();
    let w = match cmd.walk_args(head, name) {
        Ok(w) => w,
        Err(v) => return v,
    };
    let v = judge(name, &w);
    if v.is_write() {
        return v;
    }
    let inner = cmd.args.get(ci + 1..).unwrap_or_default();
    if inner.is_empty() {
        return Verdict::unknown(format!("{name} exec without a command"));
    }
    let mut v = cmd.ctx.argv(inner);
    let kept: Vec<String> = head
        .iter()
        .filter(|w| !is_tty_flag(w))
        .map(|w| w.src.clone())
        .collect();
    let prefix = format!("{name} {}", kept.join(" "));
    v = wrap_rewrite(v, |r| format!("{prefix} {r}"));
    if (w.has("tty") || w.has("interactive")) && v.unbounded.is_none() {
        let rewrite = (!v.is_write()).then(|| format!("{prefix} {}", join_src(inner)));
        v = v
            .because(format!("{name} exec -it needs a terminal"))
            .unbounded(UnboundedCategory::Tty, rewrite);
    }
    v
}
