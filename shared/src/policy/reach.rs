//! What a read may reach beyond the files it reads: nothing, local sockets (a daemon's API
//! through the agent's read-only doors: Docker, D-Bus, a database's socket), or the
//! network. The agent's read sandbox lets a read create only the socket families its
//! [`Reach`] allows, so a read whose programs need no socket cannot talk to a daemon or
//! a server even when the classifier was wrong about what it does.
//!
//! The reach is found from the programs the script names: every command's program, and
//! every later word of a command whose program runs another one (`sudo`, `timeout`,
//! `xargs`, `find … -exec`), so `timeout 5 curl …` reaches the network. A program found
//! nowhere in the tables reaches nothing. Over-approximating is the safe side: a word
//! that only looks like a program (`echo curl`) gives the read a reach it does not use.

use super::syntax;
use serde::{Deserialize, Serialize};

/// What a read may connect to, from least to most.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Reach {
    /// Files only: no socket but netlink (for `ip` and `ss`).
    #[default]
    Local,
    /// UNIX sockets too (in the read's namespace: the doors and the sockets rules name).
    Sockets,
    /// UNIX sockets and the network (IPv4 and IPv6).
    Network,
}

impl Reach {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Reach::Local => "local",
            Reach::Sockets => "sockets",
            Reach::Network => "network",
        }
    }
}

/// Programs that talk to a local daemon over a UNIX socket.
const SOCKET_TOOLS: &[&str] = &[
    "docker",
    "docker-compose",
    // gpg talks to its own agent over a socket in its home directory.
    "gpg",
    "gpg2",
    "apt-key",
    "podman",
    "crictl",
    "ctr",
    "nerdctl",
    "systemctl",
    "loginctl",
    "hostnamectl",
    "timedatectl",
    "localectl",
    "busctl",
    "resolvectl",
    "networkctl",
    "machinectl",
    "coredumpctl",
    "systemd-analyze",
    "systemd-cgls",
    "systemd-cgtop",
    "virsh",
    "lxc",
    "lxc-ls",
    "lxc-info",
    "pct",
    "qm",
    "pvesh",
    "pvecm",
    "pveversion",
    "ha-manager",
    "pvesm",
    "chronyc",
    // tmux's listings read with `-S SOCKET`: the client connects to that server.
    "tmux",
    "zpool",
    "zfs",
    "supervisorctl",
    "snap",
    "service",
    // NetworkManager's and firewalld's clients ask their daemons over D-Bus.
    "nmcli",
    "firewall-cmd",
];

/// Programs that reach servers over the network (and often local sockets too).
const NETWORK_TOOLS: &[&str] = &[
    "curl",
    "wget",
    "http",
    "xh",
    "dig",
    "nslookup",
    "host",
    "drill",
    "delv",
    "getent",
    "ping",
    "ping6",
    "arping",
    "fping",
    "traceroute",
    "traceroute6",
    "tracepath",
    "tcptraceroute",
    "mtr",
    "nmap",
    "openssl",
    "ssh",
    "ssh-keyscan",
    // `nc -z` connects to test a port.
    "nc",
    "netcat",
    "ncat",
    // showmount asks a host's mount daemon over RPC.
    "showmount",
    "kubectl",
    "helm",
    "oc",
    "k9s",
    "psql",
    "pg_dump",
    "pg_dumpall",
    // Ceph's clients talk to the monitors over TCP.
    "ceph",
    "rados",
    "rbd",
    "radosgw-admin",
    "pg_isready",
    "mysql",
    "mariadb",
    "mysqladmin",
    "mariadb-admin",
    "mysqldump",
    "redis-cli",
    "mongosh",
    "mongo",
    "etcdctl",
    "consul",
    "vault",
    "nomad",
    "ntpq",
    "ntpdate",
    "iperf",
    "iperf3",
    "whois",
    "grpcurl",
    "promtool",
    "amtool",
    "step",
    "certbot",
    // tailscale asks tailscaled over its socket; netcheck probes the DERP servers itself.
    "tailscale",
    // ipmitool -I lan/lanplus -H talks to a BMC over UDP 623.
    "ipmitool",
];

/// Verbs with which a local tool asks a server elsewhere: git lists a remote's refs, the
/// container engines and pip ask a registry.
const NETWORK_VERBS: &[(&str, &str)] = &[
    ("git", "ls-remote"),
    ("docker", "manifest"),
    ("docker", "search"),
    ("podman", "manifest"),
    ("podman", "search"),
    ("helm", "search"),
    ("pip", "--outdated"),
    ("pip3", "--outdated"),
];

/// systemd tools whose `-H`/`--host` runs the query on another machine over ssh.
const REMOTE_HOST_TOOLS: &[&str] = &[
    "systemctl",
    "hostnamectl",
    "timedatectl",
    "localectl",
    "loginctl",
    "machinectl",
    "busctl",
    "networkctl",
    "coredumpctl",
    "systemd-analyze",
];

/// True when `word` is `-H`, `-HHOST`, `--host` or `--host=HOST`.
fn names_remote_host(word: &str) -> bool {
    word.starts_with("-H") || word == "--host" || word.starts_with("--host=")
}

/// Programs that run the program named by a later word.
const RUNNERS: &[&str] = &[
    "sudo",
    "doas",
    "runuser",
    "su",
    "timeout",
    "env",
    "nice",
    "ionice",
    "chrt",
    "taskset",
    "stdbuf",
    "time",
    "command",
    "builtin",
    "exec",
    "setsid",
    "nohup",
    "flock",
    "xargs",
    "watch",
    "find",
    "unbuffer",
    "numactl",
    "cgexec",
    "systemd-run",
    "nsenter",
    "chroot",
    "strace",
    "ltrace",
    "busybox",
    "sh",
    "bash",
    "dash",
];

/// The reach of one tool by its name (a path's last part).
fn tool_reach(word: &str) -> Reach {
    let name = word.rsplit('/').next().unwrap_or(word);
    if NETWORK_TOOLS.contains(&name) {
        Reach::Network
    } else if SOCKET_TOOLS.contains(&name) {
        Reach::Sockets
    } else {
        Reach::Local
    }
}

/// What a read of `command` may reach. Pure; a script that does not parse reaches nothing
/// (it is not a read either).
pub fn reach(command: &str) -> Reach {
    let script = syntax::parse(command);
    let mut most = Reach::Local;
    for cmd in &script.commands {
        let mut words = cmd.words.iter().filter_map(|w| w.fixed());
        let Some(program) = words.next() else {
            continue;
        };
        most = most.max(tool_reach(program));
        let name = program.rsplit('/').next().unwrap_or(program);
        let runner = RUNNERS.contains(&name);
        for word in words {
            if runner {
                most = most.max(tool_reach(word));
            }
            if NETWORK_VERBS
                .iter()
                .any(|(tool, verb)| word == *verb && (name == *tool || runner))
                || (REMOTE_HOST_TOOLS.contains(&name) && names_remote_host(word))
            {
                most = Reach::Network;
            }
        }
    }
    most
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reach_follows_the_programs_and_their_runners() {
        for (command, want) in [
            ("cat /etc/hosts", Reach::Local),
            ("ls -la /var/log | grep -c log", Reach::Local),
            ("ip addr; ss -tlnp", Reach::Local),
            ("docker ps -a", Reach::Sockets),
            ("systemctl status nginx --no-pager", Reach::Sockets),
            ("curl -s http://127.0.0.1:8080/health", Reach::Network),
            ("timeout 5 curl -s http://x", Reach::Network),
            ("sudo -u postgres psql -c 'SELECT 1'", Reach::Network),
            ("docker ps | xargs -r docker inspect", Reach::Sockets),
            ("/usr/bin/dig example.org", Reach::Network),
            ("echo ok; cat /proc/loadavg", Reach::Local),
            ("git -C /srv/app log -5", Reach::Local),
            ("git ls-remote https://example.org/r.git", Reach::Network),
            ("docker manifest inspect nginx:1", Reach::Network),
            ("docker-compose ps", Reach::Sockets),
            ("ceph status", Reach::Network),
            ("hostnamectl -H root@pve2 status", Reach::Network),
            ("systemctl --host=pve2 status nginx", Reach::Network),
            ("hostnamectl status", Reach::Sockets),
            ("pg_dumpall --globals-only", Reach::Network),
            ("nmcli con show", Reach::Sockets),
            ("firewall-cmd --list-all", Reach::Sockets),
            ("tailscale netcheck", Reach::Network),
            ("ipmitool -I lanplus -H bmc sdr list", Reach::Network),
            (
                "iptables -L -n; tc qdisc show; bridge link; iw dev",
                Reach::Local,
            ),
            (
                "find /etc -name '*.conf' -exec systemctl status {} ;",
                Reach::Sockets,
            ),
        ] {
            assert_eq!(reach(command), want, "{command}");
        }
    }
}
