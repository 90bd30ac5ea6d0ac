//! Configuration test modes and version reports of daemons a self-hosting operator runs:
//! `sshd -t/-T`, BIND's `named-checkconf`/`named-checkzone`, `unbound-checkconf`,
//! `dnsmasq --test`, Samba's `testparm`, Prometheus' `promtool check`, Alertmanager's
//! `amtool check-config`, the LXC listing tools, and `-v`/`-V` of web servers and proxies.
//!
//! Each is read with its option table (`rules/TOOL.toml`): a daemon binary needs its test
//! (or report) option, and options that write a log, a pid file or an output file
//! (`sshd -E`, `named-checkzone -o`, `lxc-* -o`) carry that effect. `nginx -t`,
//! `apachectl -t` and `haproxy -c` stay writes: nginx opens (and creates) its log files
//! while testing, Debian's `apache2ctl` creates its run and lock directories, and haproxy
//! runs `lua-load` scripts while parsing (docs/classifier-coverage.md).

use super::super::verdict::Verdict;
use super::Cmd;

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "sshd" | "named-checkconf" | "named-checkzone" | "unbound-checkconf" | "dnsmasq"
        | "testparm" | "lxc-ls" | "lxc-info" | "promtool" | "amtool" | "nginx" | "haproxy"
        | "httpd" | "apache2" => cmd.by_table(cmd.name),
        _ => return None,
    };
    Some(v)
}
