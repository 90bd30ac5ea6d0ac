//! What the agent knows about its host, read from `/proc` and `/etc/os-release`: the
//! `HostFacts` sent after every hello. Parsing is separate from reading so it can be
//! tested on fixed text. An agent in a container with `--host-root` reads the host's
//! files inside that root ([`set_host_root`]); `/proc` is the host's already (hostPID).

use crate::exec::sandbox::host_root::HostRoot;
use std::fs;
use std::sync::OnceLock;
use vigil_proto::agent::v1::HostFacts;

static HOST_ROOT: OnceLock<HostRoot> = OnceLock::new();

/// With `--host-root`: the host's own files (os-release, its mount table) describe it,
/// not the container's. Set once, at startup.
pub fn set_host_root(root: &HostRoot) {
    let _ = HOST_ROOT.set(root.clone());
}

/// The host's root, when the agent runs in a container that mounts it.
pub fn host_root() -> Option<&'static HostRoot> {
    HOST_ROOT.get()
}

/// A file of the host by the host's path (`/etc/os-release`), resolved inside the host's
/// root when there is one; empty when missing.
pub fn read_host_file(path: &str) -> String {
    let real = match host_root() {
        Some(root) => root.resolve(std::path::Path::new(path)),
        None => Some(std::path::PathBuf::from(path)),
    };
    real.and_then(|p| fs::read_to_string(p).ok())
        .unwrap_or_default()
}

/// The host name, or `unknown`.
pub fn hostname() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".to_owned())
}

/// Read the host's facts now. Missing sources leave their field empty or zero.
pub fn host_facts() -> HostFacts {
    let read = |path: &str| fs::read_to_string(path).unwrap_or_default();
    HostFacts {
        hostname: hostname(),
        os_release: pretty_name(&read_host_file("/etc/os-release"))
            .or_else(|| pretty_name(&read_host_file("/usr/lib/os-release")))
            .unwrap_or_default(),
        kernel: read("/proc/sys/kernel/osrelease").trim().to_owned(),
        cpus: cpu_count(&read("/proc/cpuinfo")).unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| u32::try_from(n.get()).unwrap_or(u32::MAX))
                .unwrap_or(0)
        }),
        memory_bytes: mem_total(&read("/proc/meminfo")).unwrap_or(0),
        uptime_s: uptime(&read("/proc/uptime")).unwrap_or(0),
        load1: load1(&read("/proc/loadavg")).unwrap_or(0.0),
        sandbox: None,
    }
}

/// `PRETTY_NAME` of an os-release file, unquoted.
pub fn pretty_name(os_release: &str) -> Option<String> {
    os_release.lines().find_map(|line| {
        let value = line.trim().strip_prefix("PRETTY_NAME=")?;
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .unwrap_or(value);
        Some(value.replace("\\\"", "\"")).filter(|v| !v.is_empty())
    })
}

/// The number of `processor` entries in `/proc/cpuinfo`.
pub fn cpu_count(cpuinfo: &str) -> Option<u32> {
    let n = cpuinfo
        .lines()
        .filter(|l| l.split(':').next().is_some_and(|k| k.trim() == "processor"))
        .count();
    u32::try_from(n).ok().filter(|n| *n > 0)
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
pub fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut parts = line.split_whitespace().skip(1);
    let value: u64 = parts.next()?.parse().ok()?;
    let factor = match parts.next() {
        Some("kB") | Some("KB") => 1024,
        None => 1,
        Some(_) => return None,
    };
    value.checked_mul(factor)
}

/// Whole seconds of uptime from `/proc/uptime`.
pub fn uptime(text: &str) -> Option<u64> {
    let secs: f64 = text.split_whitespace().next()?.parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then_some(secs as u64)
}

/// The one-minute load average from `/proc/loadavg`.
pub fn load1(text: &str) -> Option<f64> {
    text.split_whitespace()
        .next()?
        .parse()
        .ok()
        .filter(|l: &f64| l.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_and_os_release_text() {
        let os = "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n";
        assert_eq!(
            pretty_name(os).as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        assert_eq!(
            pretty_name("PRETTY_NAME=Alpine\n").as_deref(),
            Some("Alpine")
        );
        assert_eq!(pretty_name("NAME=x\n"), None);
        assert_eq!(
            cpu_count("processor\t: 0\nmodel\t: x\n\nprocessor\t: 1\n"),
            Some(2)
        );
        assert_eq!(cpu_count(""), None);
        assert_eq!(
            mem_total("MemTotal:       16318412 kB\nMemFree: 1 kB\n"),
            Some(16_318_412 * 1024)
        );
        assert_eq!(mem_total("MemFree: 1 kB\n"), None);
        assert_eq!(uptime("12345.67 54321.00\n"), Some(12345));
        assert_eq!(uptime("nan 1"), None);
        assert_eq!(load1("0.52 0.58 0.59 1/123 4567\n"), Some(0.52));
        assert_eq!(load1(""), None);
    }

    #[test]
    fn reads_this_host() {
        let facts = host_facts();
        assert!(!facts.hostname.is_empty());
        if std::path::Path::new("/proc/meminfo").exists() {
            assert!(facts.cpus >= 1 && facts.memory_bytes > 0 && !facts.kernel.is_empty());
        }
    }
}
