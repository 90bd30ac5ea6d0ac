//! parted: the options from `rules/parted.toml`, the device and commands checked here.

use super::super::options;
use super::super::types::Risk;
use super::super::verdict::Verdict;
use super::Cmd;

/// parted: `rules/parted.toml` reads the options; a read is `-s` with `-l` alone, or `-s`
/// with a device and only print and display-unit commands.
pub(crate) fn parted(cmd: &Cmd<'_>) -> Verdict {
    const READS: &[&str] = &[
        "s", "B", "kB", "MB", "MiB", "GB", "GiB", "TB", "TiB", "%", "cyl", "chs", "compact",
        "unit", "print", "p", "free", "list", "all", "help",
    ];
    let w = walk!(cmd, "parted");
    let v = options::judge("parted", &w);
    if v.is_write() {
        return v;
    }
    if !w.has("script") {
        return Verdict::write(
            Risk::High,
            "parted without -s asks on standard input whether to fix a damaged partition \
             table, so a piped answer writes",
        );
    }
    let Some(words) = w
        .operands
        .iter()
        .map(|(_, o)| o.fixed())
        .collect::<Option<Vec<&str>>>()
    else {
        return Verdict::unknown("parted: a device or command is computed at run time");
    };
    match words.split_first() {
        None if w.has("list") => v,
        Some((_, commands))
            if commands.iter().any(|c| matches!(*c, "print" | "p"))
                && commands.iter().all(|c| READS.contains(c)) =>
        {
            v
        }
        _ => Verdict::write(Risk::High, "parted edits partition tables"),
    }
}
