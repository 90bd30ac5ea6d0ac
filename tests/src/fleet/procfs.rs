//! A process's resident memory and CPU time from `/proc/<pid>/status` and `/proc/<pid>/stat`.

use std::time::Duration;

/// The simulator itself.
pub const SELF: &str = "self";

/// `VmRSS` of `pid` (a number or `self`), in KiB.
pub fn rss_kib(pid: &str) -> std::io::Result<u64> {
    status_kib(pid, "VmRSS:")
}

/// `VmHWM` (peak resident memory) of `pid`, in KiB.
pub fn peak_rss_kib(pid: &str) -> std::io::Result<u64> {
    status_kib(pid, "VmHWM:")
}

fn status_kib(pid: &str, field: &str) -> std::io::Result<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    text.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no {field} in /proc/{pid}/status")))
}

/// User plus system CPU time of `pid`, in clock ticks.
pub fn cpu_ticks(pid: &str) -> std::io::Result<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    parse_cpu_ticks(&text)
        .ok_or_else(|| std::io::Error::other(format!("unreadable /proc/{pid}/stat")))
}

/// utime + stime (fields 14 and 15) of a `/proc/<pid>/stat` line; the command name in
/// parentheses may hold spaces, so fields are counted after its closing parenthesis.
pub fn parse_cpu_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

/// Clock ticks per second (`sysconf(_SC_CLK_TCK)`, 100 on Linux).
pub fn ticks_per_second() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .and_then(|t| u64::try_from(t).ok())
        .filter(|t| *t > 0)
        .unwrap_or(100)
}

/// `ticks` of CPU over `wall` as a percentage of one core.
pub fn cpu_percent(ticks: u64, wall: Duration) -> f64 {
    let secs = wall.as_secs_f64();
    if secs <= 0.0 {
        return 0.0;
    }
    ticks as f64 / ticks_per_second() as f64 / secs * 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_fields_are_counted_after_the_name() {
        let stat = "4242 (tokio (worker) x) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 3 0";
        assert_eq!(parse_cpu_ticks(stat), Some(300));
        assert_eq!(parse_cpu_ticks("garbage"), None);
    }

    #[test]
    fn reads_this_process() {
        assert!(rss_kib(SELF).unwrap() > 0);
        assert!(peak_rss_kib(SELF).unwrap() >= rss_kib(SELF).unwrap() / 2);
        cpu_ticks(SELF).unwrap();
        assert!(rss_kib("999999999").is_err());
    }
}
