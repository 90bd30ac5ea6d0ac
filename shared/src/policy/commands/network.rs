//! Network tools: ip, ss, netstat, ping, tcpdump, mtr, curl, wget, nc, firewalls, ethtool.

use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::Cmd;
use crate::policy::options::judge;

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "ip" => super::iproute::ip(cmd),
        "ss" => {
            let w = walk!(cmd, "ss", Some);
            let v = judge("ss", &w);
            if v.is_write() || !w.has("events") {
                v
            } else {
                v.unbounded(
                    UnboundedCategory::Stream,
                    Some(cmd.rebuilt_without("E", &["events"], false, &[])),
                )
            }
        }
        "netstat" => {
            let w = walk!(cmd, "netstat", Some);
            let v = judge("netstat", &w);
            if v.is_write() || !w.has("continuous") {
                v
            } else {
                v.unbounded(
                    UnboundedCategory::Stream,
                    Some(cmd.rebuilt_without("c", &["continuous"], false, &[])),
                )
            }
        }
        "ping" | "ping6" | "arping" | "fping" => ping(cmd),
        "traceroute" | "traceroute6" => cmd.by_table("traceroute"),
        "tracepath" => cmd.by_table("tracepath"),
        "tcptraceroute" => cmd.by_table("tcptraceroute"),
        "mtr" => {
            let w = walk!(cmd, "mtr", Some);
            let v = judge("mtr", &w);
            let report = [
                "report",
                "report-wide",
                "json",
                "xml",
                "csv",
                "raw",
                "split",
            ];
            if v.is_write() || ["help", "version"].iter().any(|id| w.has(id)) {
                v
            } else if report.iter().any(|id| w.has(id)) {
                Verdict::read("mtr --report only probes")
            } else {
                let rewrite = format!(
                    "mtr --report -c 10 {}",
                    super::super::word::join_src(cmd.args)
                );
                v.unbounded(UnboundedCategory::Tty, Some(rewrite))
            }
        }
        "tcpdump" => tcpdump(cmd),
        "tshark" | "dumpcap" => capture(cmd),
        "curl" => super::http::curl(cmd),
        "wget" => super::http::wget(cmd),
        "nc" | "ncat" | "netcat" | "socat" | "telnet" => nc(cmd),
        "iptables" | "ip6tables" | "iptables-legacy" | "ip6tables-legacy" | "iptables-nft"
        | "ip6tables-nft" | "ebtables" | "ebtables-nft" | "ebtables-legacy" | "arptables"
        | "arptables-nft" | "arptables-legacy" => iptables(cmd),
        "iptables-save"
        | "ip6tables-save"
        | "iptables-legacy-save"
        | "ip6tables-legacy-save"
        | "iptables-nft-save"
        | "ip6tables-nft-save" => cmd.by_table("iptables-save"),
        "nft" => nft(cmd),
        "ufw" => {
            let w = walk!(cmd, "ufw", Some);
            let v = judge("ufw", &w);
            let exits = ["version", "help", "h"].iter().any(|id| w.has(id))
                || matches!(
                    w.path.first().map(String::as_str),
                    None | Some("version" | "help")
                );
            if v.is_write() || exits || w.has("dry-run") {
                v
            } else {
                // The write oracle saw it: ufw opens its lock file for writing before
                // any command but help and version, unless --dry-run.
                Verdict::write(
                    Risk::Low,
                    "ufw creates its lock file /run/ufw.lock unless --dry-run",
                )
            }
        }
        "firewall-cmd" => {
            let w = walk!(cmd, "firewall-cmd", Some);
            let v = judge("firewall-cmd", &w);
            if v.is_write() || !w.occs.is_empty() {
                v
            } else {
                Verdict::unknown("firewall-cmd without an option is not a known query")
            }
        }
        "ethtool" => {
            let w = walk!(cmd, "ethtool", Some);
            let v = judge("ethtool", &w);
            if v.is_write() || !w.has("monitor") {
                v
            } else {
                v.unbounded(UnboundedCategory::Stream, None)
            }
        }
        "arp" => cmd.by_table("arp"),
        "route" => cmd.by_table("route"),
        "ifconfig" | "iwconfig" => cmd.by_table(cmd.name),
        "iw" => super::netmgr::iw(cmd),
        "nmcli" => super::netmgr::nmcli(cmd),
        "bridge" => super::iproute::bridge(cmd),
        "tc" => super::iproute::tc(cmd),
        "conntrack" => {
            let w = walk!(cmd, "conntrack", Some);
            let v = judge("conntrack", &w);
            if v.is_write() || !(w.has("E") || w.has("event")) {
                v
            } else {
                v.unbounded(UnboundedCategory::Stream, None)
            }
        }
        _ => return None,
    };
    Some(v)
}

/// ping, ping6, arping and fping: their tables decide; without a count or a deadline
/// (fping: with `-l`) they run until stopped, rewritten with `-c 4`.
fn ping(cmd: &Cmd<'_>) -> Verdict {
    let tool = match cmd.name {
        "ping6" => "ping",
        name => name,
    };
    let w = walk!(cmd, tool);
    let v = judge(tool, &w);
    let ends = if tool == "fping" {
        !w.has("loop") || w.has("version") || w.has("help")
    } else {
        ["c", "w", "h", "?", "V"].iter().any(|id| w.has(id))
    };
    if v.is_write() {
        return if ends {
            v
        } else {
            v.unbounded(UnboundedCategory::Stream, None)
        };
    }
    if ends {
        if tool == "ping" {
            // No option of ping writes a file or runs a program, and the count bounds
            // it (an expanded `-f` floods at most that count): an expansion may stand
            // anywhere (`xargs -I{} ping -c1 {}`).
            cmd.options_only_read();
        }
        return v;
    }
    if tool == "fping" {
        return v
            .because("fping -l pings until stopped")
            .unbounded(UnboundedCategory::Stream, None);
    }
    let rewrite = format!(
        "{} -c 4 {}",
        cmd.name,
        super::super::word::join_src(cmd.args)
    );
    v.because(format!("{} without -c runs forever", cmd.name))
        .unbounded(UnboundedCategory::Stream, Some(rewrite))
}

/// tcpdump: `rules/tcpdump.toml` decides; without a count (or a file to read) it
/// captures forever, rewritten with `-c 100`.
fn tcpdump(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "tcpdump");
    let v = judge("tcpdump", &w);
    if v.is_write() || w.has("c") || w.has("r") || w.has("V") {
        return v;
    }
    let rewrite = format!("tcpdump -c 100 {}", super::super::word::join_src(cmd.args));
    v.because("tcpdump without -c captures forever")
        .unbounded(UnboundedCategory::Stream, Some(rewrite))
}

/// tshark and dumpcap (not yet converted to option tables).
/// tshark and dumpcap: their tables decide; a live capture without a count, an
/// autostop condition or a file to read runs until stopped (rewritten with `-c 100`).
fn capture(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, cmd.name);
    let v = judge(cmd.name, &w);
    let ends = [
        "c",
        "autostop",
        "read-file",
        "list-interfaces",
        "list-data-link-types",
        "list-time-stamp-types",
        "G",
        "d",
        "help",
        "version",
    ];
    if v.is_write() || ends.iter().any(|id| w.has(id)) {
        return v;
    }
    let rewrite = format!(
        "{} -c 100 {}",
        cmd.name,
        super::super::word::join_src(cmd.args)
    );
    v.because(format!("{} captures until stopped", cmd.name))
        .unbounded(UnboundedCategory::Stream, Some(rewrite))
}

/// nft: `rules/nft.toml` decides; the words after the options are one command text for
/// nft's grammar, where `;` and a newline start another command, so an operand holding
/// them (or computed at run time, which may) is not a read. `monitor` streams.
fn nft(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "nft");
    let v = judge("nft", &w);
    if v.is_write() {
        return v;
    }
    if let Some((_, word)) = w
        .operands
        .iter()
        .find(|(_, word)| word.fixed().is_none_or(|t| t.contains([';', '\n'])))
    {
        return Verdict::write(
            Risk::High,
            format!(
                "nft: {} may start another command in nft's command text",
                word.src
            ),
        );
    }
    if w.path.first().is_some_and(|p| p == "monitor") {
        return v.unbounded(UnboundedCategory::Stream, None);
    }
    v
}

/// nc, netcat, ncat, socat and telnet: their tables decide (`nc -z` reads; socat and
/// telnet only print their help or version); a listener or a session is unbounded.
fn nc(cmd: &Cmd<'_>) -> Verdict {
    let tool = match cmd.name {
        "netcat" => "nc",
        name => name,
    };
    let w = walk!(cmd, tool);
    let v = judge(tool, &w);
    if !v.is_write() {
        return v;
    }
    if w.has("l") || w.has("listen") {
        return Verdict::write(Risk::Medium, format!("{} -l opens a listener", cmd.name))
            .because(v.reasons.concat())
            .unbounded(UnboundedCategory::Stream, None);
    }
    v.unbounded(UnboundedCategory::Repl, None)
}

/// iptables, ip6tables (and their -nft/-legacy variants), ebtables and arptables: their
/// tables decide (only the list forms read). iptables-legacy takes the xtables lock before
/// any command, creating /run/xtables.lock when it is missing.
fn iptables(cmd: &Cmd<'_>) -> Verdict {
    let tool = match cmd.name {
        n if n.starts_with("ebtables") => "ebtables",
        n if n.starts_with("arptables") => "arptables",
        _ => "iptables",
    };
    let v = cmd.by_table(tool);
    if !v.is_write() && cmd.name.ends_with("-legacy") {
        return Verdict::write(
            Risk::Low,
            format!(
                "{} takes the xtables lock, creating /run/xtables.lock",
                cmd.name
            ),
        );
    }
    v
}
