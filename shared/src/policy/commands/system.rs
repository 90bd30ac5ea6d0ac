//! System tools: dmesg, sysctl, hostname, date, openssl, kill, top-style monitors,
//! crontab, modprobe, passwd and friends, each read with its option table
//! (`rules/*.toml`); the rules here add what a table cannot say (operands that set a
//! value, streams and their rewrites). visudo, tmux and screen are still on `args.rs`.

use super::super::args::Spec;
use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
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
        "visudo" if visudo_checks(cmd) => Verdict::read("visudo -c only checks the sudoers syntax"),
        "udevadm" => udevadm(cmd),
        "inotifywait" | "inotifywatch" => inotify(cmd),
        "strace" | "ltrace" => tracer(cmd),
        "perf" => perf(cmd),
        // The tmux server formats `-F` strings and runs `#(…)` in them itself, outside any
        // sandbox of the read; and screen creates its socket directory on a first run.
        // Neither server is reachable from a read (their sockets are masked).
        "tmux" if tmux_version(cmd) => Verdict::read("tmux -V prints its version"),
        "screen" if screen_version(cmd) => Verdict::read("screen -v prints its version"),
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
    let w = match cmd.walk("dmesg") {
        Ok(w) => w,
        Err(v) => return v,
    };
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
    let w = match cmd.walk("sysctl") {
        Ok(w) => w,
        Err(v) => return v,
    };
    let v = judge("sysctl", &w);
    if v.is_write() {
        return v;
    }
    operand_write(cmd, &w, |t| t.contains('='), "changes a kernel parameter").unwrap_or(v)
}

/// hostname: `rules/hostname.toml` decides; any operand is a name to set.
fn hostname(cmd: &Cmd<'_>) -> Verdict {
    let w = match cmd.walk("hostname") {
        Ok(w) => w,
        Err(v) => return v,
    };
    let v = judge("hostname", &w);
    if v.is_write() {
        return v;
    }
    operand_write(cmd, &w, |_| true, "sets the host name").unwrap_or(v)
}

/// date: `rules/date.toml` decides; an operand that is not a +FORMAT sets the clock.
fn date(cmd: &Cmd<'_>) -> Verdict {
    let w = match cmd.walk("date") {
        Ok(w) => w,
        Err(v) => return v,
    };
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
    let w = match cmd.walk("openssl") {
        Ok(w) => w,
        Err(v) => return v,
    };
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
    let w = match cmd.walk("kill") {
        Ok(w) => w,
        Err(v) => return v,
    };
    let check = w.occs.len() == 1 && w.has("0") && !w.operands.is_empty();
    if w.deny.is_none() && (w.has("list") || w.has("table") || check) {
        return Verdict::read("kill -l/-0 only checks");
    }
    Verdict::write(Risk::High, "kill sends a signal to processes")
}

/// udevadm: `rules/udevadm.toml` decides; `monitor` follows events forever.
fn udevadm(cmd: &Cmd<'_>) -> Verdict {
    let w = match cmd.walk("udevadm") {
        Ok(w) => w,
        Err(v) => return v,
    };
    let v = judge("udevadm", &w);
    if !v.is_write() && w.path.first().map(String::as_str) == Some("monitor") {
        return v.unbounded(UnboundedCategory::Stream, None);
    }
    v
}

/// inotifywait/inotifywatch: `rules/inotifywait.toml` decides; they wait forever unless a
/// non-zero timeout is given without -m.
fn inotify(cmd: &Cmd<'_>) -> Verdict {
    let w = match cmd.walk(cmd.name) {
        Ok(w) => w,
        Err(v) => return v,
    };
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
    let w = match cmd.walk(cmd.name) {
        Ok(w) => w,
        Err(v) => return v,
    };
    let v = judge(cmd.name, &w);
    let attach = if cmd.name == "strace" { "attach" } else { "p" };
    if w.has(attach) {
        return v.unbounded(UnboundedCategory::Stream, None);
    }
    v
}

/// perf: `rules/perf.toml` decides; `perf top` samples forever on a terminal.
fn perf(cmd: &Cmd<'_>) -> Verdict {
    let w = match cmd.walk("perf") {
        Ok(w) => w,
        Err(v) => return v,
    };
    let v = judge("perf", &w);
    if !v.is_write() && w.path.first().map(String::as_str) == Some("top") {
        return v.unbounded(UnboundedCategory::Tty, None);
    }
    v
}

/// iperf/iperf3: `rules/iperf*.toml` decide; a server (-s, -D) listens until stopped.
fn iperf(cmd: &Cmd<'_>) -> Verdict {
    let w = match cmd.walk(cmd.name) {
        Ok(w) => w,
        Err(v) => return v,
    };
    let v = judge(cmd.name, &w);
    if w.has("server") || w.has("daemon") {
        return v.unbounded(UnboundedCategory::Stream, None);
    }
    v
}

/// iotop/iotop-c: `rules/iotop.toml` decides; without -b and -n it refreshes forever.
/// iotop-c is never a read: it creates its configuration directory.
fn iotop(cmd: &Cmd<'_>) -> Verdict {
    let w = match cmd.walk(cmd.name) {
        Ok(w) => w,
        Err(v) => return v,
    };
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
    let w = match cmd.walk("killall") {
        Ok(w) => w,
        Err(v) => return v,
    };
    let v = judge("killall", &w);
    if w.has("list") && !v.is_write() {
        return Verdict::read("killall -l lists signals");
    }
    Verdict::write(Risk::High, "killall signals processes")
}

/// nvidia-smi: `rules/nvidia-smi.toml` decides; -l/--loop repeats until stopped.
fn nvidia_smi(cmd: &Cmd<'_>) -> Verdict {
    let w = match cmd.walk("nvidia-smi") {
        Ok(w) => w,
        Err(v) => return v,
    };
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
    let w = match cmd.walk("chronyc") {
        Ok(w) => w,
        Err(v) => return v,
    };
    let v = judge("chronyc", &w);
    if !v.is_write() && w.path.is_empty() && !(w.has("version") || w.has("help")) {
        return Verdict::unknown("bare chronyc is interactive")
            .unbounded(UnboundedCategory::Repl, None);
    }
    v
}

/// `visudo -c` without a file of its choosing or an export.
fn visudo_checks(cmd: &Cmd<'_>) -> bool {
    let p = cmd.parse(Spec {
        short_values: "fx",
        long_values: &["file", "export"],
        ..Spec::default()
    });
    p.flag('c', "check") && !p.flag('f', "file") && !p.flag('x', "export")
}

/// `tmux -V` alone.
fn tmux_version(cmd: &Cmd<'_>) -> bool {
    let p = cmd.parse(Spec::default());
    p.opts.len() == 1 && p.positionals.is_empty() && p.short('V')
}

/// `screen -v` alone: screen's options are single-dash words.
fn screen_version(cmd: &Cmd<'_>) -> bool {
    let p = cmd.parse(Spec {
        long_only: true,
        exact_long: true,
        ..Spec::default()
    });
    p.opts.len() == 1 && p.positionals.is_empty() && p.long("v")
}

/// top: `rules/top.toml` decides; without both -b and -n it refreshes forever (rewritten
/// in batch mode for one iteration).
fn top(cmd: &Cmd<'_>) -> Verdict {
    let w = match cmd.walk("top") {
        Ok(w) => w,
        Err(v) => return v,
    };
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
    let w = match cmd.walk("crontab") {
        Ok(w) => w,
        Err(v) => return v,
    };
    if w.has("r") {
        return Verdict::write(Risk::High, "crontab -r removes the crontab");
    }
    if w.has("e") {
        return Verdict::write(Risk::Medium, "crontab -e edits the crontab")
            .unbounded(UnboundedCategory::Pager, Some("crontab -l".into()));
    }
    judge("crontab", &w)
}
