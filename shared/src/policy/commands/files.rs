//! Coreutils and friends: file writers, readers with write flags, follow forms.

use super::super::options;
use super::super::options::Value;
use super::super::syntax::path_risk;
use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::super::word::{Word, quote};
use super::Cmd;

/// Readers that turn into writers (or runners) with some options: each has a table
/// (`rules/TOOL.toml`) whose write options carry their effect.
const READERS_EXCEPT: &[&str] = &[
    "dmidecode",
    "rg",
    "ack",
    "ag",
    "tree",
    "hwinfo",
    "lshw",
    "sensors",
    "file",
    "faillog",
    "lastlog",
    "blkid",
    "ntpq",
    "fuser",
    "findmnt",
    "diff",
    "hexdump",
    "hd",
    "xxd",
    "base64",
];

/// Read-only when the last positional is not an output file.
pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    if READERS_EXCEPT.contains(&cmd.name) {
        return Some(cmd.by_table(cmd.name));
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
        "lsof" => lsof(cmd),
        "dd" => dd(cmd),
        "sort" => cmd.by_table("sort"),
        "uniq" => cmd.by_table("uniq"),
        "shuf" => shuf(cmd),
        "head" => {
            // Every head option only reads and runs nothing (`rules/head.toml`).
            cmd.options_only_read();
            cmd.by_table("head")
        }
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
        "unzip" => unzip(cmd),
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

/// lsof: `rules/lsof.toml` for the `-` options; the `+` forms are operands for the
/// table and checked here; `-r` repeats forever.
fn lsof(cmd: &Cmd<'_>) -> Verdict {
    const PLUS: &[&str] = &["+c", "+d", "+D", "+E", "+e", "+f", "+fg", "+fG", "+L", "+w"];
    let w = walk!(cmd, "lsof");
    let v = options::judge("lsof", &w);
    if v.is_write() {
        return v;
    }
    if let Some(plus) = w
        .operands
        .iter()
        .filter_map(|(_, word)| word.fixed())
        .find(|t| t.starts_with('+') && !PLUS.contains(t))
    {
        return Verdict::unknown(format!(
            "lsof {plus}: only +c, +d, +D, +E, +e, +f, +L and +w are known to only read"
        ));
    }
    if w.has("r") {
        return v
            .because("lsof -r repeats forever")
            .unbounded(UnboundedCategory::Stream, None);
    }
    v
}

/// shuf: `rules/shuf.toml` decides (every `-o` counts); `-r` without `-n` repeats
/// forever.
fn shuf(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "shuf");
    let v = options::judge("shuf", &w);
    if v.is_write() || !w.has("repeat") || w.has("head-count") {
        return v;
    }
    v.because("shuf -r without -n repeats forever").unbounded(
        UnboundedCategory::Stream,
        Some(cmd.rebuilt(|_| false, &["-n", "200"])),
    )
}

/// unzip: `rules/unzip.toml` decides; `--` is a negation for unzip's own parser, not
/// the end of its options, so an option after it would be missed.
fn unzip(cmd: &Cmd<'_>) -> Verdict {
    if cmd.args.iter().any(|w| w.lit() == Some("--")) {
        return Verdict::unknown(
            "unzip: -- negates the next option for unzip's parser, it does not end the options",
        );
    }
    cmd.by_table("unzip")
}

/// tee: `rules/tee.toml` for the options; every operand but /dev/null is a file it writes.
fn tee(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "tee");
    let v = options::judge("tee", &w);
    if v.is_write() {
        return v;
    }
    let files: Vec<_> = w
        .operands
        .iter()
        .map(|(_, word)| *word)
        .filter(|word| word.fixed() != Some("/dev/null"))
        .collect();
    if files.is_empty() && w.dynamic_src.is_none() {
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

/// dd: `rules/dd.toml` (only --help and --version); `of=` writes unless /dev/null.
fn dd(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "dd");
    let v = options::judge("dd", &w);
    if v.is_write() {
        return v;
    }
    for (_, word) in &w.operands {
        match word.fixed() {
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

/// True for tail's obsolete `+N[bcl]f` (and `+f`), which follows: tail reads it as an
/// option only when it is the first of at most two words.
fn obsolete_follow(args: &[Word]) -> bool {
    args.len() <= 2
        && args.first().and_then(|w| w.lit()).is_some_and(|t| {
            t.strip_prefix('+').is_some_and(|rest| {
                rest.strip_suffix('f').is_some_and(|n| {
                    n.trim_end_matches(['b', 'c', 'l'])
                        .bytes()
                        .all(|b| b.is_ascii_digit())
                })
            })
        })
}

/// tail: `rules/tail.toml` decides; a follow form is a read that does not end, rewritten
/// from the walk as `tail -n 200` with the other options and the files.
fn tail(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "tail");
    let v = options::judge("tail", &w);
    let follow = w.has("f") || w.has("F") || w.has("follow") || obsolete_follow(cmd.args);
    if v.is_write() || !follow {
        return v;
    }
    const DROPPED: &[&str] = &[
        "f", "F", "follow", "retry", "lines", "bytes", "0", "1", "2", "3", "4", "5", "6", "7", "8",
        "9",
    ];
    let mut kept = vec!["tail".to_owned(), "-n".to_owned(), "200".to_owned()];
    for o in w
        .occs
        .iter()
        .filter(|o| !DROPPED.contains(&o.opt.id.as_str()))
    {
        let value = match &o.value {
            Some(Value::Fixed(t)) => Some(quote(t)),
            Some(Value::Dynamic(src)) => Some(src.clone()),
            None => None,
        };
        match value {
            Some(val) if o.written.starts_with("--") => kept.push(format!("{}={val}", o.written)),
            Some(val) => kept.push(format!("{}{val}", o.written)),
            None => kept.push(o.written.clone()),
        }
    }
    if cmd.args.iter().any(|a| a.lit() == Some("--")) {
        kept.push("--".to_owned());
    }
    kept.extend(
        w.operands
            .iter()
            .map(|(_, word)| word.src.clone())
            .filter(|_| !obsolete_follow(cmd.args)),
    );
    if obsolete_follow(cmd.args) {
        kept.extend(
            cmd.args
                .get(1..)
                .unwrap_or_default()
                .iter()
                .map(|a| a.src.clone()),
        );
    }
    Verdict::read("tail only reads")
        .unbounded(UnboundedCategory::Stream, Some(kept.join(" ")))
        .because("tail -f follows the file forever")
}

/// lz4: `rules/lz4.toml` decides; `-B`, `-b`, `-e`, `-i` take attached digits (and `-B`
/// the letters D, I, X), after which lz4 reads the rest of the word as more flags.
fn lz4(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "lz4");
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
