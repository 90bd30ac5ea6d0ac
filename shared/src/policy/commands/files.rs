//! Coreutils and friends: file writers, readers with write flags, follow forms.

use super::super::args::Spec;
use super::super::options;
use super::super::syntax::path_risk;
use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::Cmd;

/// Readers that turn into writers (or runners) with one of these options.
const READERS_EXCEPT: &[(&str, &[&str])] = &[
    ("dmidecode", &["--dump-bin"]),
    (
        "rg",
        &[
            "--pre",
            "--pre-glob",
            "--search-zip",
            "-z",
            "--hostname-bin",
        ],
    ),
    ("ack", &["--pager"]),
    ("ag", &["--pager"]),
    ("tree", &["-o"]),
    ("hwinfo", &["--log"]),
    // lshw's words are single-dash: -dump FILE (and -disable) start with d.
    ("lshw", &["-d"]),
    ("sensors", &["-s", "--set"]),
    ("file", &["-C", "--compile"]),
    (
        "faillog",
        &["-r", "--reset", "-l", "--lock-secs", "-m", "--maximum"],
    ),
    ("lastlog", &["-C", "--clear", "-S", "--set"]),
    ("blkid", &["-g", "--garbage-collect"]),
    // ntpq -c sends control commands, `:config` among them.
    ("ntpq", &["-c", "--command", "-i", "--interactive"]),
    ("lsof", &[]),
    ("fuser", &["-k", "--kill"]),
    ("findmnt", &["--poll", "-p"]),
    ("diff", &["--to-file", "--from-file"]),
    ("hexdump", &[]),
    ("xxd", &["-r", "--revert"]),
    ("base64", &[]),
];

/// Read-only when the last positional is not an output file.
pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    for (name, flags) in READERS_EXCEPT {
        if cmd.name == *name {
            return Some(reader_except(cmd, flags));
        }
    }
    let v = match cmd.name {
        "rm" | "rmdir" | "unlink" | "shred" | "truncate" => {
            let risk = if cmd.args.iter().any(|w| {
                w.fixed()
                    .is_none_or(|t| path_risk(t) == Risk::High || t.contains('*'))
            }) || cmd.name == "shred"
            {
                Risk::High
            } else {
                Risk::Medium
            };
            Verdict::write(risk, format!("{} deletes or destroys files", cmd.name))
        }
        "cp" | "mv" | "install" | "ln" | "link" | "mkdir" | "touch" | "chmod" | "chown"
        | "chgrp" | "split" | "csplit" => {
            let target = cmd.args.last().and_then(|w| w.fixed()).unwrap_or("");
            let risk = if path_risk(target) == Risk::High || matches!(cmd.name, "chmod" | "chown") {
                Risk::High
            } else {
                Risk::Low
            };
            Verdict::write(risk, format!("{} changes files", cmd.name))
        }
        "tee" => tee(cmd),
        "dd" => dd(cmd),
        "sort" => cmd.by_table("sort"),
        "uniq" => cmd.by_table("uniq"),
        "shuf" => {
            let p = cmd.parse(Spec {
                short_values: "noi",
                long_values: &["output"],
                ..Spec::default()
            });
            if p.flag('o', "output") {
                Verdict::write(Risk::Medium, "shuf -o writes a file")
            } else {
                Verdict::read("shuf only reads")
            }
        }
        "head" => Verdict::read("head only reads"),
        "cat" => {
            const ENDLESS: &[&str] = &[
                "/dev/zero",
                "/dev/urandom",
                "/dev/random",
                "/dev/kmsg",
                "/proc/kmsg",
                "/dev/stdin",
                "/dev/tty",
                "/dev/console",
            ];
            cmd.options_only_read();
            match cmd.args.iter().find(|w| {
                w.lit()
                    .is_some_and(|t| ENDLESS.contains(&t) || t.starts_with("/dev/tty"))
            }) {
                Some(w) => Verdict::read("cat only reads")
                    .because(format!("{} never ends", w.src))
                    .unbounded(UnboundedCategory::Stream, None),
                None => Verdict::read("cat only reads"),
            }
        }
        "tail" => tail(cmd),
        "gzip" | "gunzip" => cmd.by_table("gzip"),
        "xz" | "unxz" => cmd.by_table("xz"),
        "zstd" | "unzstd" => cmd.by_table("zstd"),
        "bzip2" | "bunzip2" => cmd.by_table("bzip2"),
        "pigz" | "unpigz" => cmd.by_table("pigz"),
        "lz4" => lz4(cmd),
        "unzip" => {
            let p = cmd.parse(Spec::default());
            if p.short('l') || p.short('p') || p.short('t') || p.short('v') && p.short('l') {
                Verdict::read("unzip -l/-p/-t only reads")
            } else {
                Verdict::write(Risk::Medium, "unzip extracts files")
            }
        }
        "zip" | "7z" | "rar" | "unrar" | "cpio" | "ar" => Verdict::write(
            Risk::Medium,
            format!("{} writes archives or files", cmd.name),
        ),
        "sleep" => match cmd.args.first().and_then(|w| w.fixed()) {
            Some("infinity" | "inf") => {
                Verdict::read("sleep only waits").unbounded(UnboundedCategory::Stream, None)
            }
            _ => Verdict::read("sleep only waits"),
        },
        "yes" => Verdict::read("yes only prints")
            .because("yes never ends")
            .unbounded(UnboundedCategory::Stream, Some("yes | head -n 200".into())),
        _ => return None,
    };
    Some(v)
}

fn reader_except(cmd: &Cmd<'_>, flags: &[&str]) -> Verdict {
    let p = cmd.parse(Spec::default());
    for f in flags {
        let hit = match f.strip_prefix("--") {
            Some(long) => p.long(long),
            None => f.chars().nth(1).is_some_and(|c| p.short(c)),
        };
        if hit {
            return Verdict::write(Risk::Medium, format!("{} {f} changes state", cmd.name));
        }
    }
    match cmd.name {
        "xxd"
            if cmd
                .parse(Spec {
                    short_values: "cgloOsnC",
                    long_values: &[],
                    ..Spec::default()
                })
                .positionals
                .len()
                >= 2 =>
        {
            Verdict::write(Risk::Medium, "xxd INPUT OUTPUT writes OUTPUT")
        }
        _ => Verdict::read(format!("{} only reads", cmd.name)),
    }
}

fn tee(cmd: &Cmd<'_>) -> Verdict {
    let p = cmd.parse(Spec::default());
    let files: Vec<_> = p
        .positionals
        .iter()
        .filter(|w| w.fixed() != Some("/dev/null"))
        .collect();
    if files.is_empty() && !p.dynamic {
        return Verdict::read("tee without files only copies its input");
    }
    let target = files.first().and_then(|w| w.fixed()).unwrap_or("");
    Verdict::write(
        path_risk(target),
        format!(
            "tee writes to {}",
            if target.is_empty() {
                "a computed file"
            } else {
                target
            }
        ),
    )
}

fn dd(cmd: &Cmd<'_>) -> Verdict {
    for w in cmd.args {
        match w.fixed() {
            None => return cmd.dynamic_write(),
            Some(t) if t.starts_with("of=") => {
                let target = &t[3..];
                if target == "/dev/null" {
                    continue;
                }
                return Verdict::write(Risk::High, format!("dd writes to {target}"));
            }
            Some(_) => {}
        }
    }
    Verdict::read("dd without of= writes only to standard output")
}

fn tail(cmd: &Cmd<'_>) -> Verdict {
    let p = cmd.parse(Spec {
        short_values: "ncs",
        long_values: &[
            "lines",
            "bytes",
            "sleep-interval",
            "pid",
            "max-unchanged-stats",
        ],
        ..Spec::default()
    });
    let follow =
        p.short('f') || p.short('F') || p.long("follow") || p.long("retry") && p.short('F');
    if !follow {
        return Verdict::read("tail only reads");
    }
    let mut kept = vec!["tail".to_owned(), "-n".to_owned(), "200".to_owned()];
    let mut skip_next = false;
    for w in cmd.args {
        let t = w.text.as_str();
        if skip_next {
            skip_next = false;
        } else if matches!(t, "-n" | "--lines") {
            skip_next = true;
        } else if !(matches!(t, "-f" | "-F" | "--follow" | "--retry")
            || t.starts_with("--follow=")
            || t.starts_with("--lines=")
            || (t.starts_with("-n") && t.len() > 2))
        {
            kept.push(w.src.clone());
        }
    }
    let rewrite = kept.join(" ");
    Verdict::read("tail only reads")
        .unbounded(UnboundedCategory::Stream, Some(rewrite))
        .because("tail -f follows the file forever")
}

/// lz4: `rules/lz4.toml` decides; `-B`, `-b`, `-e`, `-i` take attached digits (and `-B`
/// the letters D, I, X), after which lz4 reads the rest of the word as more flags.
fn lz4(cmd: &Cmd<'_>) -> Verdict {
    let w = match cmd.walk("lz4") {
        Ok(w) => w,
        Err(v) => return v,
    };
    for id in ["B", "b", "e", "i"] {
        for o in w.all(id) {
            let ok = o.fixed().is_some_and(|v| {
                v.chars()
                    .all(|c| c.is_ascii_digit() || (id == "B" && "DIX".contains(c)))
            }) || o.value.is_none();
            if !ok {
                return Verdict::unknown(format!(
                    "lz4 {}{}: lz4 reads what follows the digits as more flags",
                    o.written,
                    o.fixed().unwrap_or("…")
                ));
            }
        }
    }
    options::judge("lz4", &w)
}
