//! Wrappers are classified by what they run: `timeout`, `nice`, `ionice`, `stdbuf`, `env`,
//! `time`, `xargs`, `nsenter`, `chroot`, `watch` and `ssh host cmd`.

use super::super::engine::wrap_rewrite;
use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::super::word::{Word, join_src, quote};
use super::Cmd;
use crate::policy::options::{Walk, judge};

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "timeout" => timeout(cmd),
        "nice" | "stdbuf" | "time" => simple_wrapper(cmd),
        "ionice" => ionice(cmd),
        "env" => env(cmd),
        "xargs" => xargs(cmd),
        "nsenter" => nsenter(cmd),
        "chroot" => chroot(cmd),
        "watch" => watch(cmd),
        "ssh" => ssh(cmd),
        _ => return None,
    };
    Some(v)
}

/// Split at the first operand with a tool's option table (`rules/TOOL.toml`): every
/// option must be declared and only read; the wrapped argv follows.
fn table_payload<'a>(
    cmd: &Cmd<'a>,
    tool: &str,
) -> Result<(Walk<'a, 'static>, &'a [Word]), Verdict> {
    let w = cmd.walk(tool)?;
    if w.deny.is_some() {
        return Err(judge(tool, &w));
    }
    let start = w.operand_index.first().copied().unwrap_or(cmd.args.len());
    let head = cmd.args.get(..start).unwrap_or_default();
    if head.iter().any(Word::is_dynamic) {
        return Err(cmd.dynamic_write());
    }
    let v = judge(tool, &w);
    if v.is_write() {
        return Err(v);
    }
    Ok((w, cmd.args.get(start..).unwrap_or_default()))
}

fn prefix_of(cmd: &Cmd<'_>, payload: &[Word]) -> String {
    let n = cmd.args.len() - payload.len();
    let mut parts = vec![cmd.name.to_owned()];
    parts.extend(cmd.args[..n].iter().map(|w| w.src.clone()));
    parts.join(" ")
}

/// nice, stdbuf, time: the options (`rules/nice.toml`, `stdbuf.toml`, `time.toml`; `time
/// -o` writes a file) and the command they run.
fn simple_wrapper(cmd: &Cmd<'_>) -> Verdict {
    let (_, inner) = match table_payload(cmd, cmd.name) {
        Ok(x) => x,
        Err(v) => return v,
    };
    if inner.is_empty() {
        return Verdict::read(format!("{} with nothing to run only reports", cmd.name));
    }
    let prefix = prefix_of(cmd, inner);
    wrap_rewrite(cmd.ctx.argv(inner), |r| format!("{prefix} {r}"))
}

/// `timeout DURATION CMD…` runs CMD and bounds it.
fn timeout(cmd: &Cmd<'_>) -> Verdict {
    let (_, rest) = match table_payload(cmd, "timeout") {
        Ok(x) => x,
        Err(v) => return v,
    };
    let Some((duration, inner)) = rest.split_first() else {
        return Verdict::unknown("timeout without a duration");
    };
    let bounded = duration.fixed().is_some_and(|d| {
        d.trim_end_matches(['s', 'm', 'h', 'd'])
            .parse::<f64>()
            .is_ok_and(|n| n > 0.0)
    });
    if inner.is_empty() {
        return Verdict::unknown("timeout with nothing to run");
    }
    let mut v = cmd.ctx.argv(inner);
    if bounded
        && let Some(u) = &v.unbounded
        && u.category != UnboundedCategory::Tty
    {
        v.unbounded = None;
        v.reasons
            .push(format!("bounded by timeout {}", duration.src));
    }
    let prefix = prefix_of(cmd, inner);
    wrap_rewrite(v, |r| format!("{prefix} {r}"))
}

/// ionice (`rules/ionice.toml`): with `-p`/`-P`/`-u` it reports (or, with `-c`/`-n`,
/// sets) other processes' I/O priority; otherwise it runs its command.
fn ionice(cmd: &Cmd<'_>) -> Verdict {
    let (w, inner) = match table_payload(cmd, "ionice") {
        Ok(x) => x,
        Err(v) => return v,
    };
    if w.has("pid") || w.has("pgid") || w.has("uid") {
        if w.has("class") || w.has("classdata") {
            return Verdict::write(Risk::Low, "ionice changes another process's I/O priority");
        }
        return Verdict::read("ionice -p only reports");
    }
    if inner.is_empty() {
        return Verdict::read("ionice only reports");
    }
    let prefix = prefix_of(cmd, inner);
    wrap_rewrite(cmd.ctx.argv(inner), |r| format!("{prefix} {r}"))
}

/// `env` (`rules/env.toml`) without assignments runs its payload; with assignments it
/// changes the environment.
fn env(cmd: &Cmd<'_>) -> Verdict {
    let (_, mut inner) = match table_payload(cmd, "env") {
        Ok(x) => x,
        Err(v) => return v,
    };
    // A lone `-` after the options is `-i`.
    if let Some((first, rest)) = inner.split_first()
        && first.lit() == Some("-")
    {
        inner = rest;
    }
    if let Some(assign) = inner
        .first()
        .and_then(|w| w.fixed())
        .filter(|t| t.contains('='))
    {
        return Verdict::write(
            Risk::Medium,
            format!("env {assign} changes the command's environment"),
        );
    }
    if inner.first().is_some_and(|w| w.fixed().is_none()) {
        return cmd.dynamic_write();
    }
    if inner.is_empty() {
        return Verdict::read("env prints the environment");
    }
    let prefix = prefix_of(cmd, inner);
    wrap_rewrite(cmd.ctx.argv(inner), |r| format!("{prefix} {r}"))
}

/// `xargs CMD ARGS…`: CMD with extra arguments nobody can see in advance.
fn xargs(cmd: &Cmd<'_>) -> Verdict {
    let (p, inner) = match table_payload(cmd, "xargs") {
        Ok(x) => x,
        Err(v) => return v,
    };
    let mut argv: Vec<Word> = if inner.is_empty() {
        vec![Word::literal("echo")]
    } else {
        inner.to_vec()
    };
    // Words from a file (-a) or an unknown producer may be options; a known producer's
    // are names (see `producer`).
    let known = cmd.ctx.stdin_operands && !p.has("arg-file");
    let input = |src: &str| {
        if known {
            Word::operand(src)
        } else {
            Word::dynamic(src)
        }
    };
    // -I R, or -i with an optional R (`{}` when none): the last one given wins.
    let replace = p
        .occs
        .iter()
        .rev()
        .find(|o| matches!(o.opt.id.as_str(), "I" | "replace"))
        .map(|o| o.fixed().unwrap_or(""));
    match replace {
        Some(r) => {
            // With -I each input line replaces the string inside a word: the word is
            // an operand when fixed text that is not `-` comes first.
            let r = if r.is_empty() { "{}" } else { r };
            for w in argv.iter_mut().skip(1) {
                if w.text.contains(r) {
                    *w = if w.text.starts_with(r) {
                        input(&w.src)
                    } else if w.text.starts_with('-') {
                        Word::dynamic(&w.src)
                    } else {
                        Word::operand(&w.src)
                    };
                }
            }
        }
        None => argv.push(input("{input}")),
    }
    cmd.ctx.argv(&argv)
}

fn nsenter(cmd: &Cmd<'_>) -> Verdict {
    let (_, inner) = match table_payload(cmd, "nsenter") {
        Ok(x) => x,
        Err(v) => return v,
    };
    if inner.is_empty() {
        return Verdict::write(Risk::High, "nsenter without a command opens a shell")
            .unbounded(UnboundedCategory::Repl, None);
    }
    let prefix = prefix_of(cmd, inner);
    wrap_rewrite(cmd.ctx.argv(inner), |r| format!("{prefix} {r}"))
}

fn chroot(cmd: &Cmd<'_>) -> Verdict {
    let (_, rest) = match table_payload(cmd, "chroot") {
        Ok(x) => x,
        Err(v) => return v,
    };
    match rest.split_first() {
        Some((root, inner)) if !inner.is_empty() => Verdict::write(
            Risk::High,
            format!(
                "chroot runs {} from {}, not the system's program",
                inner[0].src, root.src
            ),
        ),
        _ => Verdict::write(Risk::High, "chroot without a command opens a shell")
            .unbounded(UnboundedCategory::Repl, None),
    }
}

/// `watch CMD` repeats forever; the bounded rewrite runs CMD once.
fn watch(cmd: &Cmd<'_>) -> Verdict {
    let (p, inner) = match table_payload(cmd, "watch") {
        Ok(x) => x,
        Err(v) => return v,
    };
    if inner.is_empty() {
        return Verdict::unknown("watch with nothing to run");
    }
    let exec = p.has("exec");
    let body = if exec {
        None
    } else {
        inner
            .iter()
            .map(|w| w.lit())
            .collect::<Option<Vec<_>>>()
            .map(|t| t.join(" "))
    };
    let v = match &body {
        Some(b) => cmd.ctx.script(b),
        None if exec => cmd.ctx.argv(inner),
        None => return cmd.dynamic_write(),
    };
    let rewrite = body.unwrap_or_else(|| join_src(inner));
    let mut v = v;
    if v.unbounded.is_none() {
        v = v.unbounded(UnboundedCategory::Stream, Some(rewrite));
    }
    v.because("watch repeats the command forever")
}

const SSH_SAFE_OPTIONS: &[&str] = &[
    "batchmode",
    "connecttimeout",
    "stricthostkeychecking",
    "userknownhostsfile",
    "port",
    "user",
    "identityfile",
    "loglevel",
    "serveraliveinterval",
    "serveralivecountmax",
    "passwordauthentication",
    "pubkeyauthentication",
    "identitiesonly",
    "hostkeyalias",
    "connectionattempts",
    "addressfamily",
    "compression",
    "checkhostip",
    "globalknownhostsfile",
    "hostkeyalgorithms",
    "kexalgorithms",
    "ciphers",
    "macs",
    "requesttty",
    "numberofpasswordprompts",
    "preferredauthentications",
    "updatehostkeys",
    "visualhostkey",
    "hashknownhosts",
    "loglevel",
    "tcpkeepalive",
];

/// `ssh [opts] host [opts] CMD…` (`rules/ssh.toml`): ssh reads options before the
/// destination and once more after it (unless `--` came first); the remote command is
/// parsed as a shell string.
fn ssh(cmd: &Cmd<'_>) -> Verdict {
    let first = match cmd.walk("ssh") {
        Ok(w) => w,
        Err(v) => return v,
    };
    let host_at = first.operand_index.first().copied();
    let terminated = cmd
        .args
        .get(..host_at.unwrap_or(cmd.args.len()))
        .unwrap_or_default()
        .iter()
        .any(|w| w.lit() == Some("--"));
    // The second round of options, between the destination and the command.
    let after = host_at
        .filter(|_| !terminated)
        .map(|h| cmd.args.get(h + 1..).unwrap_or_default());
    let second = match after {
        Some(rest) => match cmd.walk_args(rest, "ssh") {
            Ok(w) => Some(w),
            Err(v) => return v,
        },
        None => None,
    };
    // Index in `cmd.args` of the remote command's first word.
    let remote_at = match (host_at, &second) {
        (Some(h), Some(s)) => s
            .operand_index
            .first()
            .map_or(cmd.args.len(), |i| h + 1 + i),
        (Some(h), None) => h + 1,
        (None, _) => cmd.args.len(),
    };
    if cmd
        .args
        .get(..remote_at)
        .unwrap_or_default()
        .iter()
        .any(Word::is_dynamic)
    {
        return cmd.dynamic_write();
    }
    for w in std::iter::once(&first).chain(second.as_ref()) {
        let v = judge("ssh", w);
        if v.is_write() {
            return v;
        }
    }
    let occs: Vec<_> = first
        .occs
        .iter()
        .chain(second.iter().flat_map(|w| w.occs.iter()))
        .collect();
    let has = |id: &str| occs.iter().any(|o| o.opt.id == id);
    // A jump host's spec goes into the ProxyCommand that ssh runs through a local shell
    // (`ssh -J 'x$(…)'` runs the substitution here): only plain host specs pass.
    let plain_host = |v: &str| {
        // Not empty, and not a leading dash that the inner ssh could take as an option.
        v.bytes().next().is_some_and(|b| b != b'-')
            && v.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-@:,[]".contains(&b))
    };
    if occs
        .iter()
        .filter(|o| o.opt.id == "J")
        .any(|o| !o.fixed().is_some_and(plain_host))
    {
        return Verdict::write(
            Risk::High,
            "ssh -J with a jump host spec a local shell would interpret",
        );
    }
    // The destination, user and port reach the `%h`, `%r` and `%p` tokens of any
    // ProxyCommand or `Match exec` in the host's configuration, which a shell runs (older
    // OpenSSH does not refuse shell characters in them): only plain values pass.
    let destination = host_at.and_then(|h| cmd.args.get(h)).and_then(Word::fixed);
    let plain_destination =
        |v: &str| plain_host(v.strip_prefix("ssh://").unwrap_or(v).trim_end_matches('/'));
    let bad_value = occs.iter().any(|o| match o.opt.id.as_str() {
        "l" => !o.fixed().is_some_and(plain_host),
        "p" => !o
            .fixed()
            .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric())),
        _ => false,
    });
    if bad_value || destination.is_some_and(|d| !plain_destination(d)) {
        return Verdict::write(
            Risk::High,
            "ssh with a destination, user or port a local shell would interpret (through a \
             ProxyCommand or Match exec of the host's configuration)",
        );
    }
    if let Some(key) = occs.iter().filter(|o| o.opt.id == "o").find_map(|o| {
        let key = o
            .fixed()
            .unwrap_or("")
            .split(['=', ' '])
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        (!SSH_SAFE_OPTIONS.contains(&key.as_str())).then_some(key)
    }) {
        return Verdict::write(
            Risk::High,
            format!("ssh -o {key} may run local commands or change state"),
        );
    }
    if has("G") || has("V") || has("Q") {
        return Verdict::read("ssh -G/-V/-Q only prints configuration");
    }
    if host_at.is_none() {
        return Verdict::unknown("ssh without a host");
    }
    let remote = cmd.args.get(remote_at..).unwrap_or_default();
    if has("N") {
        return Verdict::read("ssh -N only holds a connection open")
            .unbounded(UnboundedCategory::Stream, None);
    }
    if remote.is_empty() {
        return Verdict::write(
            Risk::High,
            "ssh without a command runs whatever its input says on the remote host",
        )
        .unbounded(UnboundedCategory::Repl, None);
    }
    let Some(text) = remote.iter().map(|w| w.lit()).collect::<Option<Vec<_>>>() else {
        return Verdict::write(Risk::High, "ssh runs a computed remote command");
    };
    let remote_src = text.join(" ");
    let v = cmd.ctx.script(&remote_src);
    let head = prefix_of(cmd, remote);
    let mut v = wrap_rewrite(v, |r| format!("{head} {}", quote(r)));
    if has("t") && v.unbounded.is_none() {
        let rewrite = cmd.rebuilt(|w| matches!(w.text.as_str(), "-t" | "-tt"), &[]);
        v = v.unbounded(UnboundedCategory::Tty, Some(rewrite));
    }
    v
}
