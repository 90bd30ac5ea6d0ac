//! The host source: the agent's own machine as the resource `host:<agent-id>`, read from
//! `/proc`, `/sys` and `getifaddrs` (no process is started). Volatile numbers (uptime,
//! load) travel in `HostFacts`; the resource keeps what changes slowly, so rescans of an
//! idle host send nothing.

use super::host::{cpu_count, host_root, hostname, mem_total, pretty_name, read_host_file};
use super::{BoxFuture, Scan, ScanError, Source, SourceCtx};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use vigil_shared::ids::ExecTarget;
use vigil_shared::resource::{ExecPath, Facts, Resource, ResourceId, ResourceKind, Via};

/// Filesystem types that are not storage.
const PSEUDO_FS: &[&str] = &[
    "proc",
    "sysfs",
    "devtmpfs",
    "devpts",
    "tmpfs",
    "cgroup",
    "cgroup2",
    "securityfs",
    "pstore",
    "bpf",
    "debugfs",
    "tracefs",
    "mqueue",
    "hugetlbfs",
    "configfs",
    "fusectl",
    "autofs",
    "binfmt_misc",
    "nsfs",
    "overlay",
    "squashfs",
    "rpc_pipefs",
    "efivarfs",
    "ramfs",
    "fuse.lxcfs",
    "shm",
];

/// The agent's host.
#[derive(Debug, Clone, Copy, Default)]
pub struct HostSource;

impl Source for HostSource {
    fn name(&self) -> &'static str {
        "host"
    }

    fn scan<'a>(&'a self, ctx: &'a SourceCtx) -> BoxFuture<'a, Result<Scan, ScanError>> {
        Box::pin(async move {
            let resource = tokio::task::spawn_blocking({
                let ctx = ctx.clone();
                move || host_resource(&ctx)
            })
            .await
            .map_err(|e| ScanError::Unusable(format!("host scan failed: {e}")))?;
            Ok(Scan {
                resources: vec![resource],
                capped: Vec::new(),
            })
        })
    }
}

fn read(path: &str) -> String {
    fs::read_to_string(path).unwrap_or_default()
}

/// The `host:<agent-id>` resource as this machine looks now.
pub fn host_resource(ctx: &SourceCtx) -> Resource {
    let name = hostname();
    let mut details = BTreeMap::new();
    let mut put = |k: &str, v: String| {
        if !v.is_empty() {
            details.insert(k.to_owned(), v);
        }
    };
    put(
        "os",
        pretty_name(&read_host_file("/etc/os-release")).unwrap_or_default(),
    );
    put(
        "kernel",
        read("/proc/sys/kernel/osrelease").trim().to_owned(),
    );
    put(
        "cpus",
        cpu_count(&read("/proc/cpuinfo"))
            .map(|n| n.to_string())
            .unwrap_or_default(),
    );
    put(
        "memory_bytes",
        mem_total(&read("/proc/meminfo"))
            .map(|n| n.to_string())
            .unwrap_or_default(),
    );
    put(
        "boot_time",
        boot_time(&read("/proc/stat"))
            .map(|n| n.to_string())
            .unwrap_or_default(),
    );
    put("disks", disks().join(", "));
    let root = host_root().map(|r| r.dir());
    put(
        "filesystems",
        filesystems(&read("/proc/mounts"), root).join(", "),
    );
    let mut ports = listening_ports(&read("/proc/net/tcp"));
    ports.extend(listening_ports(&read("/proc/net/tcp6")));
    let (ips, macs) = addresses();
    let mut aliases = vec![name.clone()];
    if let Some(short) = name.split('.').next().filter(|s| *s != name) {
        aliases.push(short.to_owned());
    }
    Resource {
        id: ResourceId::Host(ctx.agent_id.clone()),
        kind: ResourceKind::Host,
        name,
        aliases,
        parent: None,
        status: "running".to_owned(),
        paths: vec![ExecPath {
            agent: ctx.agent_id.clone(),
            target: ExecTarget::Host,
            via: Via::Direct,
        }],
        facts: Facts {
            ports: ports
                .into_iter()
                .map(|p| format!("{p}/tcp"))
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect(),
            ips,
            macs,
            details,
            ..Facts::default()
        },
    }
}

/// `btime` of `/proc/stat`: when the machine booted, in Unix seconds.
pub fn boot_time(stat: &str) -> Option<u64> {
    stat.lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())
}

/// Ports in state LISTEN (`0A`) of a `/proc/net/tcp{,6}` table, sorted, once each.
pub fn listening_ports(table: &str) -> BTreeSet<u16> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let mut cols = line.split_whitespace();
            let local = cols.nth(1)?;
            let state = cols.nth(1)?;
            (state == "0A").then_some(())?;
            let port = local.rsplit_once(':')?.1;
            u16::from_str_radix(port, 16).ok()
        })
        .collect()
}

/// Storage filesystems of a `/proc/mounts` text: `MOUNTPOINT TYPE SIZE used N%`. With a
/// host `root` (`--host-root`), only the mounts beneath it, named as the host names them
/// (the container's view of `root/boot` is the host's `/boot`).
pub fn filesystems(mounts: &str, root: Option<&std::path::Path>) -> Vec<String> {
    let mut seen = BTreeSet::new();
    mounts
        .lines()
        .filter_map(|line| {
            let mut cols = line.split_whitespace();
            let device = cols.next()?;
            let here = cols.next()?.replace("\\040", " ");
            let fstype = cols.next()?;
            let point = match root {
                Some(root) => {
                    let inside = std::path::Path::new(&here).strip_prefix(root).ok()?;
                    format!("/{}", inside.display())
                }
                None => here.clone(),
            };
            if PSEUDO_FS.contains(&fstype) || !seen.insert(point.clone()) {
                return None;
            }
            let usage = nix::sys::statvfs::statvfs(here.as_str())
                .ok()
                .and_then(|s| {
                    let total = s.blocks().checked_mul(s.fragment_size())?;
                    let free = s.blocks_free().checked_mul(s.fragment_size())?;
                    (total > 0).then(|| (total, (total - free) * 100 / total))
                });
            Some(match usage {
                Some((total, used)) => {
                    format!("{point} {fstype} {device} {} used {used}%", human(total))
                }
                None => format!("{point} {fstype} {device}"),
            })
        })
        .collect()
}

/// Whole block devices under `/sys/block` with their sizes, skipping loop and ram disks.
fn disks() -> Vec<String> {
    let Ok(entries) = fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    let mut disks: Vec<String> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            if name.starts_with("loop") || name.starts_with("ram") || name.starts_with("zram") {
                return None;
            }
            let sectors: u64 = read(&format!("/sys/block/{name}/size"))
                .trim()
                .parse()
                .ok()?;
            (sectors > 0).then(|| format!("{name} {}", human(sectors * 512)))
        })
        .collect();
    disks.sort();
    disks
}

/// IP addresses (without loopback) and MAC addresses (lower case, without all-zero ones).
fn addresses() -> (Vec<String>, Vec<String>) {
    let mut ips = BTreeSet::new();
    let mut macs = BTreeSet::new();
    if let Ok(addrs) = nix::ifaddrs::getifaddrs() {
        for ifa in addrs {
            let Some(address) = ifa.address else { continue };
            if let Some(v4) = address.as_sockaddr_in() {
                let ip = v4.ip();
                if !ip.is_loopback() {
                    ips.insert(ip.to_string());
                }
            } else if let Some(v6) = address.as_sockaddr_in6() {
                let ip = v6.ip();
                if !ip.is_loopback() && (ip.segments()[0] & 0xffc0) != 0xfe80 {
                    ips.insert(ip.to_string());
                }
            } else if let Some(link) = address.as_link_addr()
                && let Some(mac) = link.addr()
                && mac != [0; 6]
            {
                macs.insert(
                    mac.iter()
                        .map(|b| format!("{b:02x}"))
                        .collect::<Vec<_>>()
                        .join(":"),
                );
            }
        }
    }
    (ips.into_iter().collect(), macs.into_iter().collect())
}

/// Bytes as `12.3G`.
fn human(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "K", "M", "G", "T", "P"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes}B")
    } else {
        format!("{value:.1}{}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_listening_sockets_and_boot_time() {
        let tcp = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0\n   1: 0100007F:0277 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0\n   2: 0100007F:D2F0 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0\n";
        assert_eq!(
            listening_ports(tcp).into_iter().collect::<Vec<_>>(),
            [631, 8080]
        );
        assert!(listening_ports("").is_empty());
        assert!(listening_ports("header\ngarbage line\n").is_empty());
        assert_eq!(
            boot_time("cpu 1 2\nbtime 1700000000\n"),
            Some(1_700_000_000)
        );
        assert_eq!(boot_time("cpu 1\n"), None);
    }

    #[test]
    fn filesystems_skip_pseudo_and_repeated_mounts() {
        let mounts = "proc /proc proc rw 0 0\n/dev/sda1 / ext4 rw 0 0\n/dev/sda1 / ext4 rw 0 0\ntmpfs /run tmpfs rw 0 0\n";
        let fs = filesystems(mounts, None);
        assert_eq!(fs.len(), 1, "{fs:?}");
        assert!(fs[0].starts_with("/ ext4 /dev/sda1"), "{fs:?}");
        assert_eq!(human(1536), "1.5K");
        assert_eq!(human(10), "10B");
    }

    /// In a container with the host's root at /host, the host's file systems are the
    /// mounts beneath /host, by the host's names; the container's own are not the host's.
    #[test]
    fn filesystems_in_a_host_root_are_the_hosts() {
        let mounts = "overlay / overlay rw 0 0
/dev/sda1 /host ext4 ro 0 0
                      /dev/sda2 /host/boot ext4 rw 0 0
/dev/sdb1 /hostile xfs rw 0 0
                      /dev/sda1 /etc/hosts ext4 rw 0 0
proc /host/proc proc rw 0 0
";
        let fs = filesystems(mounts, Some(std::path::Path::new("/host")));
        let points: Vec<&str> = fs.iter().map(|f| f.split(' ').next().unwrap()).collect();
        assert_eq!(points, ["/", "/boot"], "{fs:?}");
        assert!(fs[1].starts_with("/boot ext4 /dev/sda2"), "{fs:?}");
    }

    #[test]
    fn this_host_is_a_host_resource_with_a_direct_path() {
        let ctx = SourceCtx {
            agent_id: "0f6c6d8e-58a4-4a6a-9f0c-3b1a0c2d9e11".into(),
            hostname: hostname(),
        };
        let r = host_resource(&ctx);
        assert_eq!(r.id.to_string(), format!("host:{}", ctx.agent_id));
        assert_eq!(r.paths[0].target, ExecTarget::Host);
        assert_eq!(r.paths[0].via, Via::Direct);
        assert!(r.aliases.contains(&r.name));
        assert!(
            r.facts
                .macs
                .iter()
                .all(|m| m.len() == 17 && m == &m.to_lowercase())
        );
        // The same machine twice is the same resource: rescans of an idle host send nothing.
        let again = host_resource(&ctx);
        assert_eq!(r.id, again.id);
        assert_eq!(
            r.facts.details.get("boot_time"),
            again.facts.details.get("boot_time")
        );
    }
}
