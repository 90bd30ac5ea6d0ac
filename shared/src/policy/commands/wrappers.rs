//! Wrappers are classified by what they run: `timeout`, `nice`, `ionice`, `stdbuf`, `env`,
//! `time`, `xargs`, `nsenter`, `chroot`, `watch` and `ssh host cmd`.

use super::super::args::Spec;
use super::super::engine::wrap_rewrite;
use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::super::word::{Word, join_src, quote};
use super::Cmd;
use crate::policy::options::{Walk, judge};

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "timeout" => timeout(cmd),
        "nice" => simple_wrapper(cmd, "n", &["adjustment"], "nice"),
        "stdbuf" => simple_wrapper(cmd, "ioe", &["input", "output", "error"], "stdbuf"),
        "time" => simple_wrapper(cmd, "fo", &["format", "output"], "time"),
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

/// Split at the first positional: options before, the wrapped argv after.
fn payload<'a>(
    cmd: &Cmd<'a>,
    short_values: &str,
    long_values: &[&str],
) -> Result<(super::super::args::Parsed<'a>, &'a [Word]), Verdict> {
    let p = cmd.parse(Spec {
        short_values,
        long_values,
        stop_at_positional: true,
        ..Spec::default()
    });
    let start = p
        .positional_index
        .first()
        .copied()
        .unwrap_or(cmd.args.len());
    if cmd.args[..start].iter().any(Word::is_dynamic) {
        return Err(cmd.dynamic_write());
    }
    Ok((p, &cmd.args[start..]))
}

/// [`payload`] with a tool's option table: the options must all be declared.
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

fn simple_wrapper(cmd: &Cmd<'_>, short_values: &str, long_values: &[&str], what: &str) -> Verdict {
    let (p, inner) = match payload(cmd, short_values, long_values) {
        Ok(x) => x,
        Err(v) => return v,
    };
    if what == "time" && p.flag('o', "output") {
        return Verdict::write(Risk::Low, "time -o writes a file");
    }
    if inner.is_empty() {
        return Verdict::read(format!("{what} with nothing to run only reports"));
    }
    let prefix = prefix_of(cmd, inner);
    wrap_rewrite(cmd.ctx.argv(inner), |r| format!("{prefix} {r}"))
}

/// `timeout DURATION CMD…` runs CMD and bounds it.
fn timeout(cmd: &Cmd<'_>) -> Verdict {
    let (_, rest) = match payload(cmd, "sk", &["signal", "kill-after"]) {
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

fn ionice(cmd: &Cmd<'_>) -> Verdict {
    let (p, inner) = match payload(cmd, "cnpPu", &["class", "classdata", "pid", "pgid", "uid"]) {
        Ok(x) => x,
        Err(v) => return v,
    };
    if p.flag('p', "pid") || p.flag('P', "pgid") || p.flag('u', "uid") {
        if p.short('c') || p.short('n') || p.long("class") || p.long("classdata") {
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

/// `env` without assignments runs its payload; with assignments it changes the environment.
fn env(cmd: &Cmd<'_>) -> Verdict {
    let mut i = 0;
    while i < cmd.args.len() {
        let Some(t) = cmd.args[i].fixed() else {
            return cmd.dynamic_write();
        };
        match t {
            "-i" | "--ignore-environment" | "-0" | "--null" | "-" => i += 1,
            "-C" | "--chdir" => i += 2,
            "-u" | "--unset" | "-S" | "--split-string" => {
                return Verdict::write(
                    Risk::Medium,
                    format!("env {t} changes how the command runs"),
                );
            }
            "--" => {
                i += 1;
                break;
            }
            t if t.starts_with("--chdir=") => i += 1,
            t if t.starts_with('-') => {
                return Verdict::unknown(format!("env {t} is not understood"));
            }
            _ => break,
        }
    }
    let inner = cmd.args.get(i..).unwrap_or(&[]);
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
    let (_, inner) = match payload(cmd, "tSG", &["target", "setuid", "setgid", "wdns"]) {
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
    let (_, rest) = match payload(cmd, "", &["userspec", "groups"]) {
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

const SSH_VALUE_OPTS: &str = "BbcDEeFIiJLlmOopQRSWw";
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

/// `ssh [opts] host CMD…`: the remote command is parsed as a shell string.
fn ssh(cmd: &Cmd<'_>) -> Verdict {
    let p = cmd.parse(Spec {
        short_values: SSH_VALUE_OPTS,
        long_values: &[],
        stop_at_positional: true,
        ..Spec::default()
    });
    if cmd
        .args
        .iter()
        .take(
            p.positional_index
                .first()
                .copied()
                .unwrap_or(cmd.args.len()),
        )
        .any(Word::is_dynamic)
    {
        return cmd.dynamic_write();
    }
    for (c, why) in [
        ('L', "local port forwarding"),
        ('R', "remote port forwarding"),
        ('D', "a SOCKS proxy"),
        ('W', "stdio forwarding"),
        ('w', "tunnel devices"),
        ('f', "going to the background"),
        ('M', "a control master"),
        ('S', "a control socket"),
        ('O', "a control command"),
        ('E', "a log file"),
        ('F', "a config file that may run commands"),
        ('I', "a PKCS#11 library that runs in ssh"),
        ('X', "X11 forwarding"),
        ('Y', "X11 forwarding"),
    ] {
        if p.short(c) {
            return Verdict::write(Risk::Medium, format!("ssh -{c} sets up {why}"));
        }
    }
    // A jump host's spec goes into the ProxyCommand that ssh runs through a local shell
    // (`ssh -J 'x$(…)'` runs the substitution here): only plain host specs pass.
    let plain_host = |v: &str| {
        // Not empty, and not a leading dash that the inner ssh could take as an option.
        v.bytes().next().is_some_and(|b| b != b'-')
            && v.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-@:,[]".contains(&b))
    };
    if p.short_values('J').any(|v| !plain_host(v)) {
        return Verdict::write(
            Risk::High,
            "ssh -J with a jump host spec a local shell would interpret",
        );
    }
    if let Some(opt) = p.opts.iter().find_map(|o| match o {
        super::super::args::Opt::Short('o', v) => {
            let key = v
                .as_deref()
                .unwrap_or("")
                .split(['=', ' '])
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            (!SSH_SAFE_OPTIONS.contains(&key.as_str())).then_some(key)
        }
        _ => None,
    }) {
        return Verdict::write(
            Risk::High,
            format!("ssh -o {opt} may run local commands or change state"),
        );
    }
    if p.short('G') || p.short('V') || p.short('Q') {
        return Verdict::read("ssh -G/-V/-Q only prints configuration");
    }
    let Some((_host, remote)) = p.positionals.split_first() else {
        return Verdict::unknown("ssh without a host");
    };
    let tty = p.short('t');
    if p.short('N') {
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
    let head = prefix_of(cmd, &cmd.args[p.positional_index[1]..]);
    let mut v = wrap_rewrite(v, |r| format!("{head} {}", quote(r)));
    if tty && v.unbounded.is_none() {
        let rewrite = cmd.rebuilt(|w| matches!(w.text.as_str(), "-t" | "-tt"), &[]);
        v = v.unbounded(UnboundedCategory::Tty, Some(rewrite));
    }
    v
}
