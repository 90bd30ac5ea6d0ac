//! Text and file-tree tools with dual uses: find, sed, awk, tar.

use super::super::args::Spec;
use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::super::word::Word;
use super::{Cmd, awk, sed};

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "find" => find(cmd),
        "sed" | "gsed" => sed::classify(cmd),
        "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => awk::classify(cmd),
        "tar" | "bsdtar" => tar(cmd),
        _ => return None,
    };
    Some(v)
}

fn find(cmd: &Cmd<'_>) -> Verdict {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cmd.args.len() {
        let w = &cmd.args[i];
        let Some(t) = w.fixed() else {
            // A computed word may be a path, but it may also be `-delete`.
            return cmd.dynamic_write();
        };
        match t {
            "-delete" => return Verdict::write(Risk::High, "find -delete removes files"),
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                return Verdict::write(Risk::Medium, format!("find {t} writes a file"));
            }
            "-ok" | "-okdir" => {
                return Verdict::unknown(format!("find {t} asks for confirmation on a terminal"))
                    .unbounded(UnboundedCategory::Tty, None);
            }
            "-exec" | "-execdir" => {
                let mut payload = Vec::new();
                i += 1;
                while i < cmd.args.len() && !matches!(cmd.args[i].text.as_str(), ";" | "+") {
                    let a = &cmd.args[i];
                    // find puts a path there that begins with a start path, never `-`.
                    payload.push(if a.text.contains("{}") {
                        if a.text.starts_with('-') {
                            Word::dynamic(&a.src)
                        } else {
                            Word::operand(&a.src)
                        }
                    } else {
                        a.clone()
                    });
                    i += 1;
                }
                if payload.is_empty() {
                    return Verdict::unknown(format!("find {t} without a command"));
                }
                let v = cmd.ctx.argv(&payload);
                if v.is_write() {
                    return v.because(format!("find {t} runs it for each file"));
                }
                parts.push(v);
            }
            _ => {}
        }
        i += 1;
    }
    let mut v = Verdict::read("find only lists files");
    for p in parts {
        v.merge(p);
    }
    v
}

fn tar(cmd: &Cmd<'_>) -> Verdict {
    const DANGEROUS: &[&str] = &[
        "to-command",
        "use-compress-program",
        "checkpoint-action",
        "info-script",
        "new-volume-script",
        "rsh-command",
        "rmt-command",
        "index-file",
        "listed-incremental",
        "remove-files",
        "backup",
        "overwrite",
        "unlink-first",
        "recursive-unlink",
        "volno-file",
    ];
    let mut args: Vec<Word> = cmd.args.to_vec();
    // Old style: the first word is a cluster of option letters without a dash.
    if let Some(first) = args.first().and_then(|w| w.lit()).filter(|t| {
        !t.starts_with('-') && !t.is_empty() && t.chars().all(|c| c.is_ascii_alphabetic())
    }) {
        args[0] = Word::literal(&format!("-{first}"));
    }
    let p = cmd.parse_args(
        &args,
        Spec {
            short_values: "fCbFgIKLNTVX",
            long_values: &[
                "file",
                "directory",
                "files-from",
                "exclude-from",
                "use-compress-program",
                "to-command",
                "checkpoint-action",
                "info-script",
                "new-volume-script",
                "rsh-command",
                "rmt-command",
                "index-file",
                "listed-incremental",
                "transform",
                "exclude",
                "owner",
                "group",
                "mode",
                "blocking-factor",
                "newer",
                "after-date",
                "format",
                "label",
                "volno-file",
            ],
            long_flags: &[
                "list",
                "extract",
                "get",
                "create",
                "diff",
                "compare",
                "append",
                "update",
                "catenate",
                "delete",
                "to-stdout",
                "verbose",
                "gzip",
                "bzip2",
                "xz",
                "zstd",
                "numeric-owner",
                "force-local",
                "test-label",
            ],
            ..Spec::default()
        },
    );
    if p.dynamic {
        return cmd.dynamic_write();
    }
    if let Some(d) = DANGEROUS.iter().find(|d| p.long(d)) {
        return Verdict::write(
            Risk::High,
            format!("tar --{d} runs programs or changes files"),
        );
    }
    for (c, why) in [
        ('I', "runs a compression program"),
        ('F', "runs a volume script"),
        ('g', "writes a snapshot file"),
        ('K', "starts extraction mid-archive"),
        ('U', "unlinks files"),
    ] {
        if p.short(c) {
            return Verdict::write(Risk::High, format!("tar -{c} {why}"));
        }
    }
    let archive = p.value(Some('f'), "file");
    if archive.is_some_and(|a| a.contains(':')) && !p.long("force-local") {
        return Verdict::write(
            Risk::High,
            "tar archive on a remote host runs a remote shell",
        );
    }
    let to_stdout = p.flag('O', "to-stdout");
    if p.flag('t', "list") || p.flag('d', "diff") || p.long("compare") || p.long("test-label") {
        return Verdict::read("tar lists or compares an archive");
    }
    if p.flag('x', "extract") || p.long("get") {
        return if to_stdout {
            Verdict::read("tar -x -O extracts to standard output only")
        } else {
            Verdict::write(Risk::High, "tar -x extracts files")
        };
    }
    if p.flag('c', "create") {
        return if archive == Some("-") {
            Verdict::read("tar -c to standard output only reads the files")
        } else {
            Verdict::write(Risk::Medium, "tar -c writes an archive")
        };
    }
    if p.flag('r', "append") || p.flag('u', "update") || p.flag('A', "catenate") || p.long("delete")
    {
        return Verdict::write(Risk::Medium, "tar changes an archive");
    }
    Verdict::unknown("tar without a recognised mode")
}
