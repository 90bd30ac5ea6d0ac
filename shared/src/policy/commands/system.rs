//! System tools: dmesg, sysctl, hostname, date, openssl, kill, top-style monitors,
//! crontab, modprobe, passwd and friends.

use super::super::args::{Opt, Spec};
use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::Cmd;

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "dmesg" => dmesg(cmd),
        "sysctl" => sysctl(cmd),
        "hostname" => hostname(cmd),
        "date" => date(cmd),
        "openssl" => openssl(cmd),
        "kill" => {
            let p = cmd.parse(Spec {
                short_values: "sn",
                ..Spec::default()
            });
            // `-0` alone checks that the processes exist; `-09` is signal 9.
            let check = p.opts == [Opt::Short('0', None)] && !p.positionals.is_empty();
            if p.flag('l', "list") || p.short('L') || check {
                Verdict::read("kill -l/-0 only checks")
            } else {
                Verdict::write(Risk::High, "kill sends a signal to processes")
            }
        }
        "top" => top(cmd),
        "visudo" if visudo_checks(cmd) => Verdict::read("visudo -c only checks the sudoers syntax"),
        "udevadm" => match cmd.args.first().and_then(|w| w.fixed()) {
            Some("info")
                if cmd
                    .parse_args(&cmd.args[1..], Spec::default())
                    .flag('c', "cleanup-db") =>
            {
                Verdict::write(
                    Risk::Medium,
                    "udevadm info --cleanup-db deletes the udev database",
                )
            }
            Some("info" | "--version" | "version" | "verify") => {
                Verdict::read("udevadm info only reads")
            }
            Some("monitor") => Verdict::read("udevadm monitor only reads")
                .unbounded(UnboundedCategory::Stream, None),
            Some("test" | "test-builtin") => Verdict::read("udevadm test only simulates"),
            _ => Verdict::write(
                Risk::Medium,
                "udevadm trigger/control/settle changes device handling",
            ),
        },
        "inotifywait" | "inotifywatch" => {
            let p = cmd.parse(Spec {
                short_values: "tefo",
                long_values: &[
                    "timeout", "event", "format", "outfile", "fromfile", "exclude", "include",
                    "timefmt",
                ],
                ..Spec::default()
            });
            if p.flag('o', "outfile") || p.flag('d', "daemon") {
                Verdict::write(Risk::Low, format!("{} -o writes a file", cmd.name))
            } else if p.flag('t', "timeout") && !p.flag('m', "monitor") {
                Verdict::read(format!("{} with a timeout only waits", cmd.name))
            } else {
                Verdict::read(format!("{} only watches", cmd.name))
                    .unbounded(UnboundedCategory::Stream, None)
            }
        }
        "strace" | "ltrace" => {
            let attach = cmd
                .parse(Spec {
                    short_values: "abeEIoOpPsSuUX",
                    long_values: &["attach", "output", "user"],
                    ..Spec::default()
                })
                .flag('p', "attach");
            let v = Verdict::write(
                Risk::Medium,
                format!(
                    "{} runs or attaches to a process and can change its behaviour",
                    cmd.name
                ),
            );
            if attach {
                v.unbounded(UnboundedCategory::Stream, None)
            } else {
                v
            }
        }
        "perf" => match cmd.args.first().and_then(|w| w.fixed()) {
            Some("top") => {
                Verdict::read("perf top only samples").unbounded(UnboundedCategory::Tty, None)
            }
            Some("list" | "version" | "--version" | "help") => {
                Verdict::read("perf list only reports")
            }
            Some(s) => Verdict::write(
                Risk::Medium,
                format!("perf {s} runs programs or writes perf.data"),
            ),
            None => Verdict::read("perf prints help"),
        },
        // The tmux server formats `-F` strings and runs `#(…)` in them itself, outside any
        // sandbox of the read; and screen creates its socket directory on a first run.
        // Neither server is reachable from a read (their sockets are masked).
        "tmux" if tmux_version(cmd) => Verdict::read("tmux -V prints its version"),
        "screen" if screen_version(cmd) => Verdict::read("screen -v prints its version"),
        "iperf" | "iperf3" => {
            let p = cmd.parse(Spec {
                short_values: "pfiFBcbtnklPwMSOTCLAIX",
                long_values: &[
                    "port",
                    "format",
                    "interval",
                    "file",
                    "bind",
                    "client",
                    "bitrate",
                    "bandwidth",
                    "time",
                    "bytes",
                    "blockcount",
                    "length",
                    "parallel",
                    "window",
                    "set-mss",
                    "tos",
                    "omit",
                    "title",
                    "congestion",
                    "logfile",
                    "pidfile",
                    "affinity",
                    "cport",
                ],
                ..Spec::default()
            });
            if p.flag('s', "server") || p.flag('D', "daemon") {
                Verdict::write(Risk::Medium, format!("{} -s opens a listener", cmd.name))
                    .unbounded(UnboundedCategory::Stream, None)
            } else if p.long("logfile") || p.flag('I', "pidfile") {
                Verdict::write(Risk::Low, format!("{} --logfile writes a file", cmd.name))
            } else {
                Verdict::read(format!("{} -c only measures throughput", cmd.name))
            }
        }
        "iotop" | "iotop-c" => {
            let p = cmd.parse(Spec {
                short_values: "ndpu",
                long_values: &["iter", "delay", "pid", "user"],
                ..Spec::default()
            });
            if p.flag('b', "batch") && p.flag('n', "iter") {
                Verdict::read("iotop -b -n only reports")
            } else {
                Verdict::read("iotop only reports")
                    .unbounded(UnboundedCategory::Tty, Some("iotop -b -n 3".into()))
            }
        }
        "crontab" => crontab(cmd),
        "modprobe" => {
            let p = cmd.parse(Spec::default());
            if p.flag('n', "dry-run")
                || p.long("show-depends")
                || p.flag('c', "showconfig")
                || p.short('D')
                || p.long("show-modversions")
                || p.long("dump-modversions")
            {
                Verdict::read("modprobe --dry-run only reports")
            } else {
                Verdict::write(Risk::High, "modprobe loads or unloads kernel modules")
            }
        }
        "passwd" => {
            let p = cmd.parse(Spec::default());
            if p.flag('S', "status")
                && !p.short('l')
                && !p.short('u')
                && !p.short('d')
                && !p.short('e')
            {
                Verdict::read("passwd -S only reports")
            } else {
                Verdict::write(Risk::High, "passwd changes credentials")
            }
        }
        "chage" => {
            let p = cmd.parse(Spec::default());
            if p.flag('l', "list") && p.opts.len() == 1 {
                Verdict::read("chage -l only lists")
            } else {
                Verdict::write(Risk::High, "chage changes password ageing")
            }
        }
        "killall" => {
            let p = cmd.parse(Spec::default());
            if p.opts.len() == 1 && p.flag('l', "list") && p.positionals.is_empty() {
                Verdict::read("killall -l lists signals")
            } else {
                Verdict::write(Risk::High, "killall signals processes")
            }
        }
        "nvidia-smi" => {
            let p = cmd.parse(Spec {
                short_values: "ilfdq",
                long_values: &["id", "loop", "filename", "display", "query-gpu", "format"],
                long_only: true,
                ..Spec::default()
            });
            let writes = [
                "pm",
                "pl",
                "r",
                "ac",
                "rac",
                "c",
                "e",
                "am",
                "caa",
                "lgc",
                "rgc",
                "lmc",
                "rmc",
                "mig",
                "gom",
                "persistence-mode",
                "power-limit",
                "gpu-reset",
                "applications-clocks",
                "compute-mode",
                "ecc-config",
            ];
            // Single-dash long options (`-pm 1`); `-r`, `-c`, `-e` alone are shorts.
            if writes.iter().any(|w| p.long(w))
                || p.short('r')
                || p.short('c')
                || p.short('e')
                || p.flag('f', "filename")
            {
                Verdict::write(Risk::High, "nvidia-smi changes GPU settings")
            } else if p.flag('l', "loop") || p.long("loop-ms") {
                Verdict::read("nvidia-smi only reports").unbounded(
                    UnboundedCategory::Stream,
                    Some(cmd.rebuilt_without("l", &["loop", "loop-ms"], false, &[])),
                )
            } else {
                Verdict::read("nvidia-smi only reports")
            }
        }
        "chronyc" => {
            let reads = [
                "tracking",
                "sources",
                "sourcestats",
                "activity",
                "ntpdata",
                "serverstats",
                "clients",
                "selectdata",
                "authdata",
                "rtcdata",
            ];
            let words = cmd
                .parse(Spec {
                    short_values: "hpf",
                    ..Spec::default()
                })
                .words();
            if words.len() == 1 && reads.contains(&words[0]) {
                Verdict::read("chronyc query only reads")
            } else if words.is_empty() {
                Verdict::unknown("bare chronyc is interactive")
                    .unbounded(UnboundedCategory::Repl, None)
            } else {
                Verdict::write(Risk::Medium, "chronyc changes time sources")
            }
        }
        _ => return None,
    };
    Some(v)
}

fn dmesg(cmd: &Cmd<'_>) -> Verdict {
    let p = cmd.parse(Spec {
        short_values: "flsFn",
        long_values: &[
            "facility",
            "level",
            "buffer-size",
            "file",
            "console-level",
            "since",
            "until",
        ],
        ..Spec::default()
    });
    if let Some((c, why)) = p.first_of(&[
        ('c', "read-clear", "clears the kernel ring buffer"),
        ('C', "clear", "clears the kernel ring buffer"),
        ('n', "console-level", "changes the console log level"),
        ('D', "console-off", "turns console logging off"),
        ('E', "console-on", "turns console logging on"),
    ]) {
        return Verdict::write(Risk::Medium, format!("dmesg -{c} {why}"));
    }
    if p.flag('w', "follow") || p.flag('W', "follow-new") {
        let rewrite =
            cmd.rebuilt_without("wW", &["follow", "follow-new"], false, &[]) + " | tail -n 200";
        return Verdict::read("dmesg only reads")
            .because("dmesg -w follows forever")
            .unbounded(UnboundedCategory::Stream, Some(rewrite));
    }
    Verdict::read("dmesg only reads")
}

fn sysctl(cmd: &Cmd<'_>) -> Verdict {
    let p = cmd.parse(Spec {
        short_values: "p",
        long_values: &["load", "pattern"],
        ..Spec::default()
    });
    if p.flag('w', "write") || p.flag('p', "load") || p.long("system") || p.short('f') {
        return Verdict::write(Risk::High, "sysctl -w/-p changes kernel parameters");
    }
    if p.dynamic {
        return cmd.dynamic_write();
    }
    if let Some(kv) = p
        .positionals
        .iter()
        .filter_map(|w| w.fixed())
        .find(|t| t.contains('='))
    {
        return Verdict::write(
            Risk::High,
            format!("sysctl {kv} changes a kernel parameter"),
        );
    }
    Verdict::read("sysctl only reads kernel parameters")
}

fn hostname(cmd: &Cmd<'_>) -> Verdict {
    let p = cmd.parse(Spec {
        short_values: "F",
        long_values: &["file"],
        ..Spec::default()
    });
    if p.flag('F', "file") || p.flag('b', "boot") {
        return Verdict::write(Risk::High, "hostname -F sets the host name");
    }
    if p.dynamic {
        return cmd.dynamic_write();
    }
    if let Some(name) = p.first() {
        return Verdict::write(Risk::High, format!("hostname {name} sets the host name"));
    }
    Verdict::read("hostname only reports")
}

fn date(cmd: &Cmd<'_>) -> Verdict {
    let p = cmd.parse(Spec {
        short_values: "dfrIR",
        long_values: &["date", "file", "reference", "set"],
        ..Spec::default()
    });
    if p.flag('s', "set") {
        return Verdict::write(Risk::High, "date -s sets the clock");
    }
    if p.dynamic {
        return cmd.dynamic_write();
    }
    if let Some(arg) = p
        .positionals
        .iter()
        .filter_map(|w| w.fixed())
        .find(|t| !t.starts_with('+'))
    {
        return Verdict::write(Risk::High, format!("date {arg} sets the clock"));
    }
    Verdict::read("date only reports")
}

fn openssl(cmd: &Cmd<'_>) -> Verdict {
    const READS: &[&str] = &[
        "x509",
        "s_client",
        "version",
        "ciphers",
        "verify",
        "crl",
        "rsa",
        "ec",
        "pkey",
        "asn1parse",
        "dgst",
        "list",
        "rand",
        "sha1",
        "sha256",
        "sha512",
        "md5",
        "base64",
        "enc",
        "req",
        "pkcs12",
        "pkcs7",
        "errstr",
        "speed",
        "prime",
        "storeutl",
        "ocsp",
        "s_time",
        "sess_id",
        "crl2pkcs7",
        "help",
        "passwd",
        "kdf",
        "mac",
    ];
    const OUT_FLAGS: &[&str] = &[
        "out",
        "keyout",
        "writerand",
        "sess_out",
        "CAcreateserial",
        "new",
        "genkey",
        "export",
        "engine",
        "msgfile",
        "keylogfile",
        "reqout",
        "respout",
        "index",
        "rsigner",
        "rkey",
        "port",
        "sign",
    ];
    let Some(sub) = cmd.args.first().and_then(|w| w.fixed()) else {
        return Verdict::unknown("bare openssl is interactive")
            .unbounded(UnboundedCategory::Repl, None);
    };
    if cmd.has_dynamic() {
        return cmd.dynamic_write();
    }
    if matches!(sub, "s_server") {
        return Verdict::write(Risk::Medium, "openssl s_server opens a listener")
            .unbounded(UnboundedCategory::Stream, None);
    }
    if !READS.contains(&sub) {
        return Verdict::write(
            Risk::Medium,
            format!("openssl {sub} creates keys, certificates or files"),
        );
    }
    // openssl's options are single-dash words matched in full.
    let p = cmd.parse_args(
        &cmd.args[1..],
        Spec {
            long_values: &["out", "keyout"],
            long_only: true,
            exact_long: true,
            ..Spec::default()
        },
    );
    let mut to_stdout = false;
    for o in &p.opts {
        let Opt::Long(f, value) = o else { continue };
        if !OUT_FLAGS.contains(&f.as_str()) {
            continue;
        }
        if matches!(f.as_str(), "out" | "keyout")
            && matches!(value.as_deref(), Some("/dev/null" | "/dev/stdout" | "-"))
        {
            to_stdout = true;
            continue;
        }
        return Verdict::write(
            Risk::Medium,
            format!("openssl {sub} -{f} writes a file or signs"),
        );
    }
    if to_stdout {
        return Verdict::read(format!("openssl {sub} writes to standard output"));
    }
    if sub == "req" && !(p.long("noout") || p.long("text") || p.long("verify")) {
        return Verdict::write(Risk::Medium, "openssl req creates a request");
    }
    if sub == "s_client" {
        if cmd.ctx.stdin_fed {
            return Verdict::write(
                Risk::Medium,
                "openssl s_client sends its standard input to the server",
            );
        }
        return Verdict::read("openssl s_client only connects (stdin is closed)");
    }
    Verdict::read(format!("openssl {sub} only reads"))
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

fn top(cmd: &Cmd<'_>) -> Verdict {
    let p = cmd.parse(Spec {
        short_values: "dnpuUoOswE",
        ..Spec::default()
    });
    if p.short('b') && p.short('n') {
        return Verdict::read("top -b -n only reports");
    }
    let rewrite = if p.short('n') {
        cmd.rebuilt(|_| false, &["-b"])
    } else if p.short('b') {
        cmd.rebuilt(|_| false, &["-n", "1"])
    } else {
        cmd.rebuilt(|_| false, &["-b", "-n", "1"])
    };
    Verdict::read("top only reports")
        .because("top without -b -n runs forever")
        .unbounded(UnboundedCategory::Stream, Some(rewrite))
}

fn crontab(cmd: &Cmd<'_>) -> Verdict {
    let p = cmd.parse(Spec {
        short_values: "u",
        ..Spec::default()
    });
    if p.short('r') {
        return Verdict::write(Risk::High, "crontab -r removes the crontab");
    }
    if p.short('e') {
        return Verdict::write(Risk::Medium, "crontab -e edits the crontab")
            .unbounded(UnboundedCategory::Pager, Some("crontab -l".into()));
    }
    if p.short('l') && p.positionals.is_empty() {
        return Verdict::read("crontab -l only lists");
    }
    Verdict::write(Risk::High, "crontab FILE replaces the crontab")
}
