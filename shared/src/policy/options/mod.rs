//! Per-tool option tables as data, and the one engine that applies them.
//!
//! A tool's table (`shared/src/policy/rules/TOOL.toml`, embedded with `include_str!` and
//! parsed once with serde) lists **every** option the tool accepts, with its exact arity
//! and what it does, and the tool's subcommands with their own options and class. The
//! engine ([`walk`]) reads every word of a command with that table, the way the tool's own
//! parser would, and [`judge`] turns what it found into a verdict. Anything the table does
//! not declare (an option, an ambiguous abbreviation, a subcommand) is not a read: the
//! tables deny by default, where the older getopt view (`args.rs`) let unknown options pass.
//!
//! Table format (`rules/*.toml`; see `docs/classifier-coverage.md`, "Option tables"):
//! - `tools`: the program names the table is for;
//! - parsing: `abbreviate` (getopt_long accepts unique prefixes of long options; `false`
//!   for Go/cobra and clap tools), `bundle` (`-qo F` is `-q -o F`), `stop_at_operand`
//!   (POSIX: options end at the first operand; otherwise GNU permutation), `long_only`
//!   (getopt_long_only: a one-dash word is a long option first, nmap's `-oN F`);
//! - options, by arity: `flags` (no value), `values` (a required value: `-oF`, `-o F`,
//!   `--output=F`, `--output F`), `optional` (a value only when attached: `-iR`,
//!   `--replace=R`). An entry is `"-o --output"` (the names of one option) or a table
//!   `{ names = "-o --output", effect = "write-file", why = "…" }`;
//! - effects: `read` (the default), `write`, `exec` (runs a program), `config` (reads
//!   options or commands from a file), `write-file` (the value is a file written;
//!   `/dev/null`, `/dev/stdout`, `/dev/stderr`, and `-` when `dash = true`, are not),
//!   `method` (an HTTP method: only GET, HEAD, OPTIONS read), `body` (sends a request
//!   body, unless the same request has a `get` option), `get`, and `next` (starts another
//!   request: curl's `--next`); `risk = "high"` marks a destructive one;
//! - subcommands: `reads`, `writes`, `destroys` (lists of names with no options of their
//!   own), and `[sub.NAME]` tables, each a node like the root with its own options and a
//!   `class` (`read`, `write`, or `delegate`: a Rust rule not yet converted decides);
//!   `inherit = false` when the parent's options may not follow the subcommand (git),
//!   `aliases` for its other names (kubectl `top pods`), `subcommand_optional` when only
//!   the first word after the node may name a subcommand and other operands are its own
//!   (`git config get NAME`, `git config NAME`);
//! - constraints on a read node: `needs_one_of` (one of these options must be given, e.g.
//!   mdadm's `--detail`), `max_operands` (more operands are outputs or arguments that
//!   change something; a glob or a splitting expansion may be many), `no_sub` (the class
//!   when a node with subcommands is given none).

mod judge;
mod table;
mod walk;

#[cfg(test)]
mod probe;
#[cfg(test)]
mod probe_list;
#[cfg(test)]
mod tests;

pub(crate) use judge::judge;
pub(crate) use table::{Class, Effect, Table};
pub(crate) use walk::{Value, Walk, walk};

use crate::policy::word::Word;
use std::sync::LazyLock;

/// Every table, by file name: the parts of one table (a long one is split into files of
/// `[sub.…]` sections, read as one text). A new table is one line here and its files in
/// `rules/`.
const SOURCES: &[(&str, &[&str])] = &[
    ("apt-mark", &[include_str!("../rules/apt-mark.toml")]),
    ("ceph", &[include_str!("../rules/ceph.toml")]),
    ("compose", &[include_str!("../rules/compose.toml")]),
    ("busctl", &[include_str!("../rules/busctl.toml")]),
    ("bzip2", &[include_str!("../rules/bzip2.toml")]),
    ("lz4", &[include_str!("../rules/lz4.toml")]),
    ("pigz", &[include_str!("../rules/pigz.toml")]),
    ("sort", &[include_str!("../rules/sort.toml")]),
    ("tar", &[include_str!("../rules/tar.toml")]),
    ("coredumpctl", &[include_str!("../rules/coredumpctl.toml")]),
    ("hostnamectl", &[include_str!("../rules/hostnamectl.toml")]),
    ("localectl", &[include_str!("../rules/localectl.toml")]),
    ("loginctl", &[include_str!("../rules/loginctl.toml")]),
    ("networkctl", &[include_str!("../rules/networkctl.toml")]),
    ("resolvectl", &[include_str!("../rules/resolvectl.toml")]),
    (
        "systemd-cgls",
        &[include_str!("../rules/systemd-cgls.toml")],
    ),
    (
        "systemd-cgtop",
        &[include_str!("../rules/systemd-cgtop.toml")],
    ),
    ("timedatectl", &[include_str!("../rules/timedatectl.toml")]),
    ("crictl", &[include_str!("../rules/crictl.toml")]),
    ("fdisk", &[include_str!("../rules/fdisk.toml")]),
    ("gdisk", &[include_str!("../rules/gdisk.toml")]),
    ("curl", &[include_str!("../rules/curl.toml")]),
    ("dumpcap", &[include_str!("../rules/dumpcap.toml")]),
    (
        "docker",
        &[
            include_str!("../rules/docker.toml"),
            include_str!("../rules/docker-objects.toml"),
        ],
    ),
    (
        "git",
        &[
            include_str!("../rules/git.toml"),
            include_str!("../rules/git-more.toml"),
            include_str!("../rules/git-history.toml"),
            include_str!("../rules/git-config.toml"),
        ],
    ),
    ("gzip", &[include_str!("../rules/gzip.toml")]),
    ("ha-manager", &[include_str!("../rules/ha-manager.toml")]),
    ("helm", &[include_str!("../rules/helm.toml")]),
    ("journalctl", &[include_str!("../rules/journalctl.toml")]),
    ("kubectl", &[include_str!("../rules/kubectl.toml")]),
    ("mdadm", &[include_str!("../rules/mdadm.toml")]),
    ("mysql", &[include_str!("../rules/mysql.toml")]),
    ("mysqladmin", &[include_str!("../rules/mysqladmin.toml")]),
    ("pct", &[include_str!("../rules/pct.toml")]),
    ("nmap", &[include_str!("../rules/nmap.toml")]),
    ("parted", &[include_str!("../rules/parted.toml")]),
    ("pg_dump", &[include_str!("../rules/pg_dump.toml")]),
    ("pg_dumpall", &[include_str!("../rules/pg_dumpall.toml")]),
    ("podman", &[include_str!("../rules/podman.toml")]),
    ("psql", &[include_str!("../rules/psql.toml")]),
    ("pvecm", &[include_str!("../rules/pvecm.toml")]),
    ("pvesh", &[include_str!("../rules/pvesh.toml")]),
    ("pvesm", &[include_str!("../rules/pvesm.toml")]),
    ("qm", &[include_str!("../rules/qm.toml")]),
    ("redis-cli", &[include_str!("../rules/redis-cli.toml")]),
    ("sfdisk", &[include_str!("../rules/sfdisk.toml")]),
    ("sgdisk", &[include_str!("../rules/sgdisk.toml")]),
    ("sqlite3", &[include_str!("../rules/sqlite3.toml")]),
    ("systemctl", &[include_str!("../rules/systemctl.toml")]),
    (
        "systemd-analyze",
        &[include_str!("../rules/systemd-analyze.toml")],
    ),
    ("tcpdump", &[include_str!("../rules/tcpdump.toml")]),
    ("tshark", &[include_str!("../rules/tshark.toml")]),
    ("uniq", &[include_str!("../rules/uniq.toml")]),
    ("watch", &[include_str!("../rules/watch.toml")]),
    ("wget", &[include_str!("../rules/wget.toml")]),
    ("xargs", &[include_str!("../rules/xargs.toml")]),
    ("xz", &[include_str!("../rules/xz.toml")]),
    ("zfs", &[include_str!("../rules/zfs.toml")]),
    ("zpool", &[include_str!("../rules/zpool.toml")]),
    ("zstd", &[include_str!("../rules/zstd.toml")]),
    ("ss", &[include_str!("../rules/ss.toml")]),
    ("netstat", &[include_str!("../rules/netstat.toml")]),
    ("ping", &[include_str!("../rules/ping.toml")]),
    ("arping", &[include_str!("../rules/arping.toml")]),
    ("fping", &[include_str!("../rules/fping.toml")]),
    ("traceroute", &[include_str!("../rules/traceroute.toml")]),
    ("tracepath", &[include_str!("../rules/tracepath.toml")]),
    (
        "tcptraceroute",
        &[include_str!("../rules/tcptraceroute.toml")],
    ),
    ("mtr", &[include_str!("../rules/mtr.toml")]),
    (
        "iptables-save",
        &[include_str!("../rules/iptables-save.toml")],
    ),
    ("nft", &[include_str!("../rules/nft.toml")]),
    ("arp", &[include_str!("../rules/arp.toml")]),
    ("route", &[include_str!("../rules/route.toml")]),
    ("conntrack", &[include_str!("../rules/conntrack.toml")]),
    ("ssh-keyscan", &[include_str!("../rules/ssh-keyscan.toml")]),
    ("showmount", &[include_str!("../rules/showmount.toml")]),
    ("nfsstat", &[include_str!("../rules/nfsstat.toml")]),
    ("exportfs", &[include_str!("../rules/exportfs.toml")]),
    ("ifconfig", &[include_str!("../rules/ifconfig.toml")]),
    ("iwconfig", &[include_str!("../rules/iwconfig.toml")]),
    ("wg", &[include_str!("../rules/wg.toml")]),
    ("ethtool", &[include_str!("../rules/ethtool.toml")]),
    ("nc", &[include_str!("../rules/nc.toml")]),
    ("ncat", &[include_str!("../rules/ncat.toml")]),
    ("socat", &[include_str!("../rules/socat.toml")]),
    ("telnet", &[include_str!("../rules/telnet.toml")]),
    ("ufw", &[include_str!("../rules/ufw.toml")]),
    // Fifth round, system tools.
    ("7z", &[include_str!("../rules/7z.toml")]),
    ("apt-key", &[include_str!("../rules/apt-key.toml")]),
    ("at", &[include_str!("../rules/at.toml")]),
    ("atq", &[include_str!("../rules/atq.toml")]),
    ("chage", &[include_str!("../rules/chage.toml")]),
    ("chronyc", &[include_str!("../rules/chronyc.toml")]),
    ("chrt", &[include_str!("../rules/chrt.toml")]),
    ("crontab", &[include_str!("../rules/crontab.toml")]),
    ("date", &[include_str!("../rules/date.toml")]),
    ("debsums", &[include_str!("../rules/debsums.toml")]),
    ("dmesg", &[include_str!("../rules/dmesg.toml")]),
    ("hostname", &[include_str!("../rules/hostname.toml")]),
    ("hwclock", &[include_str!("../rules/hwclock.toml")]),
    ("inotifywait", &[include_str!("../rules/inotifywait.toml")]),
    ("iotop", &[include_str!("../rules/iotop.toml")]),
    ("iperf", &[include_str!("../rules/iperf.toml")]),
    ("iperf3", &[include_str!("../rules/iperf3.toml")]),
    ("kill", &[include_str!("../rules/kill.toml")]),
    ("killall", &[include_str!("../rules/killall.toml")]),
    ("ldconfig", &[include_str!("../rules/ldconfig.toml")]),
    ("ltrace", &[include_str!("../rules/ltrace.toml")]),
    ("modprobe", &[include_str!("../rules/modprobe.toml")]),
    ("npm", &[include_str!("../rules/npm.toml")]),
    ("nvidia-smi", &[include_str!("../rules/nvidia-smi.toml")]),
    ("openssl", &[include_str!("../rules/openssl.toml")]),
    ("passwd", &[include_str!("../rules/passwd.toml")]),
    ("perf", &[include_str!("../rules/perf.toml")]),
    ("prlimit", &[include_str!("../rules/prlimit.toml")]),
    ("strace", &[include_str!("../rules/strace.toml")]),
    ("sysctl", &[include_str!("../rules/sysctl.toml")]),
    ("taskset", &[include_str!("../rules/taskset.toml")]),
    ("top", &[include_str!("../rules/top.toml")]),
    ("udevadm", &[include_str!("../rules/udevadm.toml")]),
    (
        "update-alternatives",
        &[include_str!("../rules/update-alternatives.toml")],
    ),
    ("wipefs", &[include_str!("../rules/wipefs.toml")]),
    ("yq", &[include_str!("../rules/yq.toml")]),
    ("apt", &[include_str!("../rules/apt.toml")]),
    ("apt-get", &[include_str!("../rules/apt-get.toml")]),
    ("apt-cache", &[include_str!("../rules/apt-cache.toml")]),
    ("apt-config", &[include_str!("../rules/apt-config.toml")]),
    ("dpkg", &[include_str!("../rules/dpkg.toml")]),
    ("dpkg-query", &[include_str!("../rules/dpkg-query.toml")]),
    ("rpm", &[include_str!("../rules/rpm.toml")]),
    ("dnf", &[include_str!("../rules/dnf.toml")]),
    ("zypper", &[include_str!("../rules/zypper.toml")]),
    ("pacman", &[include_str!("../rules/pacman.toml")]),
    ("apk", &[include_str!("../rules/apk.toml")]),
    ("brew", &[include_str!("../rules/brew.toml")]),
    ("pkg", &[include_str!("../rules/pkg.toml")]),
    ("snap", &[include_str!("../rules/snap.toml")]),
    ("flatpak", &[include_str!("../rules/flatpak.toml")]),
    ("pip", &[include_str!("../rules/pip.toml")]),
    ("pveam", &[include_str!("../rules/pveam.toml")]),
    (
        "pve-firewall",
        &[include_str!("../rules/pve-firewall.toml")],
    ),
    (
        "proxmox-boot-tool",
        &[include_str!("../rules/proxmox-boot-tool.toml")],
    ),
    (
        "proxmox-backup-manager",
        &[include_str!("../rules/proxmox-backup-manager.toml")],
    ),
    (
        "proxmox-backup-client",
        &[include_str!("../rules/proxmox-backup-client.toml")],
    ),
    ("pveum", &[include_str!("../rules/pveum.toml")]),
    ("pvenode", &[include_str!("../rules/pvenode.toml")]),
    ("pvesr", &[include_str!("../rules/pvesr.toml")]),
    (
        "pvesubscription",
        &[include_str!("../rules/pvesubscription.toml")],
    ),
    ("pvereport", &[include_str!("../rules/pvereport.toml")]),
    ("pveceph", &[include_str!("../rules/pveceph.toml")]),
    ("rbd", &[include_str!("../rules/rbd.toml")]),
    ("rados", &[include_str!("../rules/rados.toml")]),
    ("smartctl", &[include_str!("../rules/smartctl.toml")]),
    ("mount", &[include_str!("../rules/mount.toml")]),
    ("swapon", &[include_str!("../rules/swapon.toml")]),
    ("btrfs", &[include_str!("../rules/btrfs.toml")]),
    ("hdparm", &[include_str!("../rules/hdparm.toml")]),
    ("nvme", &[include_str!("../rules/nvme.toml")]),
    ("multipath", &[include_str!("../rules/multipath.toml")]),
    ("tune2fs", &[include_str!("../rules/tune2fs.toml")]),
    ("iostat", &[include_str!("../rules/iostat.toml")]),
    ("vmstat", &[include_str!("../rules/vmstat.toml")]),
    ("mpstat", &[include_str!("../rules/mpstat.toml")]),
    ("pidstat", &[include_str!("../rules/pidstat.toml")]),
    ("sar", &[include_str!("../rules/sar.toml")]),
    ("dstat", &[include_str!("../rules/dstat.toml")]),
    ("free", &[include_str!("../rules/free.toml")]),
    ("arcstat", &[include_str!("../rules/arcstat.toml")]),
    ("timeout", &[include_str!("../rules/timeout.toml")]),
    ("nice", &[include_str!("../rules/nice.toml")]),
    ("stdbuf", &[include_str!("../rules/stdbuf.toml")]),
    ("time", &[include_str!("../rules/time.toml")]),
    ("ionice", &[include_str!("../rules/ionice.toml")]),
    ("env", &[include_str!("../rules/env.toml")]),
    ("nsenter", &[include_str!("../rules/nsenter.toml")]),
    ("chroot", &[include_str!("../rules/chroot.toml")]),
    ("ssh", &[include_str!("../rules/ssh.toml")]),
    ("shuf", &[include_str!("../rules/shuf.toml")]),
    ("head", &[include_str!("../rules/head.toml")]),
    ("tail", &[include_str!("../rules/tail.toml")]),
    ("tee", &[include_str!("../rules/tee.toml")]),
    ("dd", &[include_str!("../rules/dd.toml")]),
    ("unzip", &[include_str!("../rules/unzip.toml")]),
    ("rg", &[include_str!("../rules/rg.toml")]),
    ("ack", &[include_str!("../rules/ack.toml")]),
    ("ag", &[include_str!("../rules/ag.toml")]),
    ("tree", &[include_str!("../rules/tree.toml")]),
    ("hwinfo", &[include_str!("../rules/hwinfo.toml")]),
    ("lshw", &[include_str!("../rules/lshw.toml")]),
    ("sensors", &[include_str!("../rules/sensors.toml")]),
    ("file", &[include_str!("../rules/file.toml")]),
    ("faillog", &[include_str!("../rules/faillog.toml")]),
    ("lastlog", &[include_str!("../rules/lastlog.toml")]),
    ("blkid", &[include_str!("../rules/blkid.toml")]),
    ("ntpq", &[include_str!("../rules/ntpq.toml")]),
    ("lsof", &[include_str!("../rules/lsof.toml")]),
    ("fuser", &[include_str!("../rules/fuser.toml")]),
    ("findmnt", &[include_str!("../rules/findmnt.toml")]),
    ("diff", &[include_str!("../rules/diff.toml")]),
    ("hexdump", &[include_str!("../rules/hexdump.toml")]),
    ("xxd", &[include_str!("../rules/xxd.toml")]),
    ("base64", &[include_str!("../rules/base64.toml")]),
    ("dmidecode", &[include_str!("../rules/dmidecode.toml")]),
    ("sshd", &[include_str!("../rules/sshd.toml")]),
    (
        "named-checkconf",
        &[include_str!("../rules/named-checkconf.toml")],
    ),
    (
        "named-checkzone",
        &[include_str!("../rules/named-checkzone.toml")],
    ),
    (
        "unbound-checkconf",
        &[include_str!("../rules/unbound-checkconf.toml")],
    ),
    ("dnsmasq", &[include_str!("../rules/dnsmasq.toml")]),
    ("testparm", &[include_str!("../rules/testparm.toml")]),
    ("lxc-ls", &[include_str!("../rules/lxc-ls.toml")]),
    ("lxc-info", &[include_str!("../rules/lxc-info.toml")]),
    (
        "webserver-version",
        &[include_str!("../rules/webserver-version.toml")],
    ),
    ("promtool", &[include_str!("../rules/promtool.toml")]),
    ("amtool", &[include_str!("../rules/amtool.toml")]),
    ("virsh", &[include_str!("../rules/virsh.toml")]),
    ("etcdctl", &[include_str!("../rules/etcdctl.toml")]),
    ("consul", &[include_str!("../rules/consul.toml")]),
    ("vault", &[include_str!("../rules/vault.toml")]),
    ("nomad", &[include_str!("../rules/nomad.toml")]),
    ("service", &[include_str!("../rules/service.toml")]),
    ("stern", &[include_str!("../rules/stern.toml")]),
    ("k3s", &[include_str!("../rules/k3s.toml")]),
    // Fifth round, system tools (second part) and the shell's builtins.
    ("screen", &[include_str!("../rules/screen.toml")]),
    ("tmux", &[include_str!("../rules/tmux.toml")]),
    ("visudo", &[include_str!("../rules/visudo.toml")]),
    ("builtin", &[include_str!("../rules/builtin.toml")]),
    ("command", &[include_str!("../rules/command.toml")]),
    ("printf", &[include_str!("../rules/printf.toml")]),
    ("wait", &[include_str!("../rules/wait.toml")]),
    ("iptables", &[include_str!("../rules/iptables.toml")]),
    ("ebtables", &[include_str!("../rules/ebtables.toml")]),
    ("arptables", &[include_str!("../rules/arptables.toml")]),
    (
        "firewall-cmd",
        &[include_str!("../rules/firewall-cmd.toml")],
    ),
    ("tailscale", &[include_str!("../rules/tailscale.toml")]),
    ("ipmitool", &[include_str!("../rules/ipmitool.toml")]),
];

/// The parsed tables, or the first error (a malformed table denies its tools).
static TABLES: LazyLock<Vec<Result<Table, String>>> = LazyLock::new(|| {
    SOURCES
        .iter()
        .map(|(file, parts)| {
            Table::parse(&parts.concat()).map_err(|e| format!("rules/{file}.toml: {e}"))
        })
        .collect()
});

/// The table for `program`. `None` when no table names it; `Some(Err)` when its table
/// is malformed (a unit test keeps that from shipping; the caller denies).
pub(crate) fn table(program: &str) -> Option<Result<&'static Table, &'static str>> {
    SOURCES
        .iter()
        .zip(TABLES.iter())
        .find_map(|((_, parts), t)| match t {
            Ok(t) if t.tools.iter().any(|n| n == program) => Some(Ok(t)),
            Err(e) if parts.first().is_some_and(|src| src_names(src, program)) => {
                Some(Err(e.as_str()))
            }
            _ => None,
        })
}

/// For a table that failed to parse: whether its source names `program` on the
/// `tools` line, so the failure still denies that program instead of falling through.
fn src_names(src: &str, program: &str) -> bool {
    src.lines()
        .filter(|l| l.trim_start().starts_with("tools"))
        .any(|l| l.contains(&format!("\"{program}\"")))
}

/// The old form of options (tar's `tar cfb A 20`): a first word without a dash is a
/// cluster of letters, each taking its value, if any, from the next words in turn. The
/// arguments are returned rewritten as the walk reads them (`-c -f A -b 20 …`); `None`
/// when the first word is not such a cluster. A letter the table does not declare stays
/// an option, which the walk then denies.
pub(crate) fn old_style(table: &Table, args: &[Word]) -> Option<Vec<Word>> {
    let (first, rest) = args.split_first()?;
    let cluster = first
        .lit()
        .filter(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphabetic()))?;
    let mut values = rest.iter();
    let mut out = Vec::new();
    for c in cluster.chars() {
        out.push(Word::literal(&format!("-{c}")));
        let takes = table
            .root
            .opts
            .iter()
            .find(|o| o.shorts.contains(&c))
            .is_some_and(|o| o.arity != table::Arity::None);
        if takes {
            match values.next() {
                Some(v) => out.push(v.clone()),
                None => break,
            }
        }
    }
    out.extend(values.cloned());
    Some(out)
}
