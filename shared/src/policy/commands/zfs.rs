//! ZFS: `zfs` and `zpool`, decided by `rules/zfs.toml` and `rules/zpool.toml`; here only
//! the streams: `zpool status|list|iostat INTERVAL` without a count and `zpool events -f`.

use super::super::types::UnboundedCategory;
use super::super::verdict::Verdict;
use super::Cmd;
use crate::policy::options::judge;

pub(super) fn zfs(cmd: &Cmd<'_>) -> Verdict {
    cmd.by_table("zfs")
}

pub(super) fn zpool(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "zpool");
    let v = judge("zpool", &w);
    if v.is_write() {
        return v;
    }
    match w.path.first().map(String::as_str) {
        Some(sub @ ("status" | "list" | "iostat")) => {
            // `[interval [count]]`: pool names start with a letter, so a trailing number
            // is an interval or a count.
            let numbers = w
                .operands
                .iter()
                .rev()
                .take_while(|(_, o)| o.fixed().is_some_and(|t| t.parse::<f64>().is_ok()))
                .count();
            if numbers == 1 {
                let count = if sub == "iostat" { "5" } else { "1" };
                v.because(format!(
                    "zpool {sub} with an interval and no count repeats forever"
                ))
                .unbounded(
                    UnboundedCategory::Stream,
                    Some(format!("{} {count}", cmd.src())),
                )
            } else {
                v
            }
        }
        Some("events") if w.has("f") => v.unbounded(
            UnboundedCategory::Stream,
            Some(cmd.rebuilt_without("f", &[], false, &[])),
        ),
        _ => v,
    }
}
