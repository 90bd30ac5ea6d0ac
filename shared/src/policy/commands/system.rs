//! System tools: dmesg, sysctl, hostname, date, openssl, kill, top-style monitors,
//! crontab, modprobe, passwd and friends, each read with its option table
//! (`rules/*.toml`); the rules here add what a table cannot say (operands that set a
//! value, streams and their rewrites), visudo, tmux and screen included.

use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::super::word::Word;
use super::Cmd;
use crate::policy::options::{Walk, judge};

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "dmesg" => dmesg(cmd),
        "sysctl" => sysctl(cmd),
        "hostname" => hostname(cmd),
        "date" => date(cmd),
        "openssl" => openssl(cmd),
        "kill" => kill(cmd),
        "top" => top(cmd),
        "visudo" => visudo(cmd),
        "udevadm" => udevadm(cmd),
        "inotifywait" | "inotifywatch" => inotify(cmd),
        "strace" | "ltrace" => tracer(cmd),
        "perf" => perf(cmd),
        "tmux" => terminal(cmd, tmux(cmd)),
        "screen" => terminal(cmd, screen(cmd)),
        "iperf" | "iperf3" => iperf(cmd),
        "iotop" | "iotop-c" => iotop(cmd),
        "crontab" => crontab(cmd),
        "modprobe" | "passwd" | "chage" => cmd.by_table(cmd.name),
        "killall" => killall(cmd),
        "nvidia-smi" => nvidia_smi(cmd),
        "chronyc" => chronyc(cmd),
        _ => return None,
    };
    Some(v)
}

/// dmesg: `rules/dmesg.toml` decides; -w/-W follow forever (rewritten to the last lines).
fn dmesg(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "dmesg");
    let v = judge("dmesg", &w);
    if v.is_write() || !(w.has("follow") || w.has("follow-new")) {
        return v;
    }
    let rewrite =
        cmd.rebuilt_without("wW", &["follow", "follow-new"], false, &[]) + " | tail -n 200";
    v.because("dmesg -w follows forever")
        .unbounded(UnboundedCategory::Stream, Some(rewrite))
}

/// The first operand that changes something (`changes` says which), or an expansion in
/// its place: a write, or `None` when every operand only names what is read.
fn operand_write(
    cmd: &Cmd<'_>,
    w: &Walk<'_, '_>,
    changes: impl Fn(&str) -> bool,
    why: &str,
) -> Option<Verdict> {
    for (_, word) in &w.operands {
        match word.fixed() {
            Some(t) if changes(t) => {
                return Some(Verdict::write(
                    Risk::High,
                    format!("{} {t} {why}", cmd.name),
                ));
            }
            Some(_) => {}
            None => return Some(cmd.dynamic_write()),
        }
    }
    None
}

/// sysctl: `rules/sysctl.toml` decides; an operand NAME=VALUE sets a parameter.
fn sysctl(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "sysctl");
    let v = judge("sysctl", &w);
    if v.is_write() {
        return v;
    }
    operand_write(cmd, &w, |t| t.contains('='), "changes a kernel parameter").unwrap_or(v)
}

/// hostname: `rules/hostname.toml` decides; any operand is a name to set.
fn hostname(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "hostname");
    let v = judge("hostname", &w);
    if v.is_write() {
        return v;
    }
    operand_write(cmd, &w, |_| true, "sets the host name").unwrap_or(v)
}

/// date: `rules/date.toml` decides; an operand that is not a +FORMAT sets the clock.
fn date(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "date");
    let v = judge("date", &w);
    if v.is_write() {
        return v;
    }
    operand_write(cmd, &w, |t| !t.starts_with('+'), "sets the clock").unwrap_or(v)
}

/// openssl: `rules/openssl.toml` decides (the inspection subcommands and their options);
/// s_server listens, and s_client sends a fed standard input to the server.
fn openssl(cmd: &Cmd<'_>) -> Verdict {
    if cmd.args.is_empty() {
        return Verdict::unknown("bare openssl is interactive")
            .unbounded(UnboundedCategory::Repl, None);
    }
    let w = walk!(cmd, "openssl");
    let sub = w.path.first().map(String::as_str);
    if sub == Some("s_server") {
        return Verdict::write(Risk::Medium, "openssl s_server opens a listener")
            .unbounded(UnboundedCategory::Stream, None);
    }
    let v = judge("openssl", &w);
    if !v.is_write() && sub == Some("s_client") {
        if cmd.ctx.stdin_fed {
            return Verdict::write(
                Risk::Medium,
                "openssl s_client sends its standard input to the server",
            );
        }
        return Verdict::read("openssl s_client only connects (stdin is closed)");
    }
    v
}

/// kill: only listing the signals and `kill -0 PID` (signal 0 checks that it exists) read;
/// a signal option the table does not declare (`-9`, `-HUP`) is a signal sent.
fn kill(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "kill");
    let check = w.occs.len() == 1 && w.has("0") && !w.operands.is_empty();
    if w.deny.is_none() && (w.has("list") || w.has("table") || check) {
        return Verdict::read("kill -l/-0 only checks");
    }
    Verdict::write(Risk::High, "kill sends a signal to processes")
}

/// udevadm: `rules/udevadm.toml` decides; `monitor` follows events forever.
fn udevadm(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "udevadm");
    let v = judge("udevadm", &w);
    if !v.is_write() && w.path.first().map(String::as_str) == Some("monitor") {
        return v.unbounded(UnboundedCategory::Stream, None);
    }
    v
}

/// inotifywait/inotifywatch: `rules/inotifywait.toml` decides; they wait forever unless a
/// non-zero timeout is given without -m.
fn inotify(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, cmd.name);
    let v = judge(cmd.name, &w);
    let timeout = w.all("timeout").last().is_some_and(|o| {
        o.fixed()
            .and_then(|t| t.parse::<f64>().ok())
            .is_some_and(|n| n.is_finite() && n > 0.0)
    });
    if v.is_write() || (timeout && !w.has("monitor")) {
        return v;
    }
    v.unbounded(UnboundedCategory::Stream, None)
}

/// strace/ltrace: never a read (their tables say so); attaching to a process is also a
/// stream until it ends.
fn tracer(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, cmd.name);
    let v = judge(cmd.name, &w);
    let attach = if cmd.name == "strace" { "attach" } else { "p" };
    if w.has(attach) {
        return v.unbounded(UnboundedCategory::Stream, None);
    }
    v
}

/// perf: `rules/perf.toml` decides; `perf top` samples forever on a terminal.
fn perf(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "perf");
    let v = judge("perf", &w);
    if !v.is_write() && w.path.first().map(String::as_str) == Some("top") {
        return v.unbounded(UnboundedCategory::Tty, None);
    }
    v
}

/// iperf/iperf3: `rules/iperf*.toml` decide; a server (-s, -D) listens until stopped.
fn iperf(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, cmd.name);
    let v = judge(cmd.name, &w);
    if w.has("server") || w.has("daemon") {
        return v.unbounded(UnboundedCategory::Stream, None);
    }
    v
}

/// iotop/iotop-c: `rules/iotop.toml` decides; without -b and -n it refreshes forever.
/// iotop-c is never a read: it creates its configuration directory.
fn iotop(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, cmd.name);
    let v = judge(cmd.name, &w);
    if cmd.name == "iotop-c" && !v.is_write() {
        // Seen by the write oracle: iotop-c creates ~/.config/iotop at start, even in
        // batch mode.
        return Verdict::write(
            Risk::Low,
            "iotop-c creates its configuration directory ~/.config/iotop at start",
        );
    }
    if v.is_write() || (w.has("batch") && w.has("iter")) {
        return v;
    }
    v.unbounded(UnboundedCategory::Tty, Some("iotop -b -n 3".into()))
}

/// killall: only `killall -l` reads; a signal option the table does not declare (`-9`)
/// is a signal sent.
fn killall(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "killall");
    let v = judge("killall", &w);
    if w.has("list") && !v.is_write() {
        return Verdict::read("killall -l lists signals");
    }
    Verdict::write(Risk::High, "killall signals processes")
}

/// nvidia-smi: `rules/nvidia-smi.toml` decides; -l/--loop repeats until stopped.
fn nvidia_smi(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "nvidia-smi");
    let v = judge("nvidia-smi", &w);
    if v.is_write() || !(w.has("loop") || w.has("loop-ms")) {
        return v;
    }
    v.unbounded(
        UnboundedCategory::Stream,
        Some(cmd.rebuilt_without("l", &["loop", "loop-ms"], false, &[])),
    )
}

/// chronyc: `rules/chronyc.toml` decides; without a command it is interactive.
fn chronyc(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "chronyc");
    let v = judge("chronyc", &w);
    if !v.is_write() && w.path.is_empty() && !(w.has("version") || w.has("help")) {
        return Verdict::unknown("bare chronyc is interactive")
            .unbounded(UnboundedCategory::Repl, None);
    }
    v
}

/// visudo: `rules/visudo.toml` decides; it reads only when it checks (`-c`), exports to
/// standard output (`-x -`) or prints its help or version. Any other form edits the
/// sudoers file in an editor.
fn visudo(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "visudo");
    let v = judge("visudo", &w);
    let mode = ["check", "export", "help", "version"];
    if v.is_write() || !mode.iter().any(|id| w.has(id)) {
        let edit = Verdict::write(
            Risk::Medium,
            "visudo without -c, -x -, -h or -V edits the sudoers file",
        );
        return terminal(cmd, if v.is_write() { v } else { edit });
    }
    v
}

/// A terminal program's form that is not a read: the table's reason first, then the
/// interactive program's verdict (it takes the terminal and may change files).
fn terminal(cmd: &Cmd<'_>, v: Verdict) -> Verdict {
    if !v.is_write() {
        return v;
    }
    let mut out = v;
    if let Some(i) = super::interactive(cmd) {
        out.merge(i);
    }
    out
}

/// screen: `rules/screen.toml` decides; only the version or the help option alone reads
/// (screen prints and exits while reading its options, but its letters take values the
/// table cannot place: `-t x -v` gives `-v` to -t and attaches with `x`).
fn screen(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "screen");
    let v = judge("screen", &w);
    let alone = w.occs.len() == 1 && w.operands.is_empty();
    if !v.is_write() && alone && (w.has("version") || w.has("help")) {
        return Verdict::read("screen only prints its version or usage");
    }
    if v.is_write() {
        return v;
    }
    Verdict::write(
        Risk::Medium,
        "screen starts, attaches to or lists sessions (a first run creates its socket directory)",
    )
}

/// A tmux format that runs a shell command in the server: `#(…)`, or an option's value
/// expanded again as a format by an `E:` or `T:` modifier (a status line option may hold
/// `#(…)`). Conservative: any `E` or `T` before the first `:` of a `#{…}`.
fn tmux_runs(text: &str) -> bool {
    text.contains("#(")
        || text.match_indices("#{").any(|(at, _)| {
            let head = text[at + 2..].split([':', '}']).next().unwrap_or("");
            head.contains(['E', 'T'])
        })
}

/// The tmux commands of a command line: a word ending in `;` ends one (the rest of the
/// word is its last argument; `\;` is a literal `;`), as cmd_parse_from_arguments splits
/// them. The first holds the global options.
fn tmux_commands(args: &[Word]) -> Vec<Vec<Word>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    for word in args {
        let text = word.lit().unwrap_or_default();
        if let Some(escaped) = text.strip_suffix("\\;") {
            cur.push(Word::literal(&format!("{escaped};")));
        } else if let Some(head) = text.strip_suffix(';') {
            if !head.is_empty() {
                cur.push(Word::literal(head));
            }
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push(word.clone());
        }
    }
    out.push(cur);
    out
}

/// The tmux read commands whose cmd_entry has CMD_STARTSERVER: with no server running the
/// client starts one, which loads the configuration files (the write oracle saw the socket
/// created), unless `-N` says not to.
const TMUX_STARTS_SERVER: &[&str] = &["list-keys", "lsk", "list-commands", "lscm"];

/// tmux: `rules/tmux.toml` decides each command of the line; every one must read. Only
/// with `-S SOCKET`: otherwise the client creates its socket directory on a first run.
fn tmux(cmd: &Cmd<'_>) -> Verdict {
    if let Some(w) = cmd.args.iter().find(|w| w.lit().is_none()) {
        return Verdict::unknown(format!(
            "tmux: {} is decided at run time (a word ending in ; starts another tmux \
             command, and a format may run one)",
            w.src
        ));
    }
    if let Some(w) = cmd.args.iter().find(|w| w.lit().is_some_and(tmux_runs)) {
        return Verdict::write(
            Risk::High,
            format!(
                "tmux: {} is a format that runs a shell command in the tmux server (#(…), \
                 or an option expanded again with E: or T:)",
                w.src
            ),
        );
    }
    let mut parts = Vec::new();
    let mut no_server = false;
    for (n, words) in tmux_commands(cmd.args).iter().enumerate() {
        if n > 0 && words.is_empty() {
            continue;
        }
        let w = match cmd.walk_args(words, "tmux") {
            Ok(w) => w,
            Err(v) => return v,
        };
        let v = judge("tmux", &w);
        if v.is_write() {
            return v;
        }
        if n == 0 && w.has("V") {
            return Verdict::read("tmux -V prints its version while reading its options");
        }
        if w.path.is_empty() {
            return Verdict::write(Risk::Medium, "tmux without a command starts a new session");
        }
        if n == 0 && !w.has("S") {
            return Verdict::write(
                Risk::Low,
                "tmux without -S SOCKET creates its socket directory ($TMUX_TMPDIR or \
                 /tmp)/tmux-UID on a first run (and the default server's socket is masked \
                 in a read)",
            );
        }
        if n > 0 && w.after_sub != 1 {
            return Verdict::unknown("tmux: a command after ; must start with its name");
        }
        no_server |= n == 0 && w.has("N");
        let sub = w.path.first().map_or("", String::as_str);
        if !no_server && TMUX_STARTS_SERVER.contains(&sub) {
            return Verdict::write(
                Risk::Medium,
                format!(
                    "tmux {sub} starts a server when none runs, which loads the configuration \
                     files and runs their commands (tmux -N does not)"
                ),
            );
        }
        parts.push(v);
    }
    Verdict::all(parts)
}

/// top: `rules/top.toml` decides; without both -b and -n it refreshes forever (rewritten
/// in batch mode for one iteration).
fn top(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "top");
    let v = judge("top", &w);
    let (batch, count) = (w.has("batch-mode"), w.has("iterations"));
    if v.is_write() || (batch && count) {
        return v;
    }
    let rewrite = if count {
        cmd.rebuilt(|_| false, &["-b"])
    } else if batch {
        cmd.rebuilt(|_| false, &["-n", "1"])
    } else {
        cmd.rebuilt(|_| false, &["-b", "-n", "1"])
    };
    v.because("top without -b -n runs forever")
        .unbounded(UnboundedCategory::Stream, Some(rewrite))
}

/// crontab: `rules/crontab.toml` decides; -r removes the crontab (whatever else is given)
/// and -e opens an editor.
fn crontab(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "crontab");
    if w.has("r") {
        return Verdict::write(Risk::High, "crontab -r removes the crontab");
    }
    if w.has("e") {
        return Verdict::write(Risk::Medium, "crontab -e edits the crontab")
            .unbounded(UnboundedCategory::Pager, Some("crontab -l".into()));
    }
    judge("crontab", &w)
}
