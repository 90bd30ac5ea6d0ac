//! Text and file-tree tools with dual uses: find, sed, awk, tar (GNU tar, with its table).

use super::super::options;
use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::super::word::Word;
use super::{Cmd, awk, sed};

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "find" => find(cmd),
        "sed" | "gsed" => sed::classify(cmd),
        "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => awk::classify(cmd),
        "tar" => tar(cmd),
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

/// GNU tar: `rules/tar.toml` decides, after the old form (`tar tvf A`) is expanded. An
/// extraction is a read only to standard output (`-O`), a creation only when every `-f`
/// is `-`; an archive name with a colon is on another host, reached through rsh.
fn tar(cmd: &Cmd<'_>) -> Verdict {
    let expanded = match options::table("tar") {
        Some(Ok(t)) => options::old_style(t, cmd.args),
        _ => None,
    };
    let w = match cmd.walk_args(expanded.as_deref().unwrap_or(cmd.args), "tar") {
        Ok(w) => w,
        Err(v) => return v,
    };
    let v = options::judge("tar", &w);
    if v.is_write() {
        return v;
    }
    if w.has("extract") && !w.has("to-stdout") {
        return Verdict::write(Risk::High, "tar -x extracts files");
    }
    let files: Vec<Option<&str>> = w.all("file").map(|o| o.fixed()).collect();
    if w.has("create") && (files.is_empty() || files.iter().any(|f| *f != Some("-"))) {
        return Verdict::write(Risk::Medium, "tar -c writes an archive");
    }
    if !w.has("force-local") && files.iter().flatten().any(|f| f.contains(':')) {
        return Verdict::write(
            Risk::High,
            "tar archive on a remote host runs a remote shell",
        );
    }
    v
}
