//! Package managers: apt, apt-get, apt-cache, apt-mark, dpkg, dpkg-query, rpm, dnf/yum,
//! snap, flatpak, pip.

use super::super::args::Spec;
use super::super::types::Risk;
use super::super::verdict::Verdict;
use super::{Cmd, by_subcommand};

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "apt" => apt(
            cmd,
            &[
                "list", "show", "search", "policy", "depends", "rdepends", "showsrc", "madison",
                "help",
            ],
        ),
        "apt-get" => apt(cmd, &["help"]),
        "apt-cache" => {
            let p = cmd.parse(Spec {
                short_values: "co",
                ..Spec::default()
            });
            if p.positionals.first().and_then(|w| w.fixed()) == Some("gencaches")
                || p.flag('p', "pkg-cache")
                || p.flag('s', "src-cache")
            {
                Verdict::write(Risk::Low, "apt-cache gencaches writes the cache")
            } else {
                Verdict::read("apt-cache only queries")
            }
        }
        "apt-mark" => cmd.by_table("apt-mark"),
        "apt-config" => by_subcommand(cmd, Spec::default(), &["dump", "shell"], false),
        "dpkg" => dpkg(cmd),
        "dpkg-query" => Verdict::read("dpkg-query only queries"),
        "rpm" => {
            let p = cmd.parse(Spec::default());
            if p.flag('q', "query")
                || p.flag('V', "verify")
                || p.long("querytags")
                || p.long("showrc")
                || p.long("version")
            {
                Verdict::read("rpm -q only queries")
            } else {
                Verdict::write(Risk::High, "rpm changes installed packages")
            }
        }
        "dnf" | "yum" | "zypper" | "pacman" | "apk" | "brew" | "pkg" => pkg_generic(cmd),
        "snap" if snap_refresh_list(cmd) => Verdict::read("snap refresh --list only lists updates"),
        "snap" => by_subcommand(
            cmd,
            Spec::default(),
            &[
                "list",
                "info",
                "find",
                "version",
                "services",
                "changes",
                "change",
                "connections",
                "interfaces",
                "warnings",
                "logs",
                "get",
                "model",
                "known",
                "help",
            ],
            false,
        ),
        "flatpak" => by_subcommand(
            cmd,
            Spec::default(),
            &[
                "list",
                "info",
                "search",
                "remotes",
                "remote-ls",
                "history",
                "ps",
                "documents",
            ],
            false,
        ),
        "pip" | "pip3" => by_subcommand(
            cmd,
            Spec::default(),
            &[
                "list", "show", "freeze", "check", "help", "debug", "inspect",
            ],
            false,
        ),
        _ => return None,
    };
    Some(v)
}

fn apt(cmd: &Cmd<'_>, reads: &[&str]) -> Verdict {
    let p = cmd.parse(Spec {
        short_values: "ocqt",
        long_values: &["option", "config-file", "target-release"],
        ..Spec::default()
    });
    if p.dynamic {
        return cmd.dynamic_write();
    }
    let Some(sub) = p.first() else {
        return Verdict::read(format!("{} with no subcommand prints help", cmd.name));
    };
    if reads.contains(&sub) {
        return Verdict::read(format!("{} {sub} only queries", cmd.name));
    }
    let simulate = p.flag('s', "simulate")
        || p.long("dry-run")
        || p.long("just-print")
        || p.long("recon")
        || p.long("no-act");
    if simulate
        && matches!(
            sub,
            "install"
                | "remove"
                | "purge"
                | "upgrade"
                | "dist-upgrade"
                | "full-upgrade"
                | "autoremove"
                | "build-dep"
        )
    {
        // Not a read: as root, planning the simulated action writes apt's planner log
        // (/var/log/apt/eipp.log.xz), as the write oracle (shared/tests/oracle) saw.
        return Verdict::write(
            Risk::Low,
            format!(
                "{} -s {sub} simulates, but writes apt's planner log /var/log/apt/eipp.log.xz",
                cmd.name
            ),
        );
    }
    let risk = if matches!(
        sub,
        "remove" | "purge" | "autoremove" | "dist-upgrade" | "full-upgrade"
    ) {
        Risk::High
    } else {
        Risk::Medium
    };
    Verdict::write(
        risk,
        format!("{} {sub} changes packages or package lists", cmd.name),
    )
}

fn dpkg(cmd: &Cmd<'_>) -> Verdict {
    const READS: &[&str] = &[
        "l",
        "L",
        "s",
        "S",
        "p",
        "c",
        "I",
        "V",
        "C",
        "list",
        "listfiles",
        "status",
        "search",
        "print-avail",
        "get-selections",
        "print-architecture",
        "print-foreign-architectures",
        "contents",
        "info",
        "verify",
        "audit",
        "compare-versions",
        "version",
        "help",
        "field",
        "fsys-tarfile",
    ];
    let p = cmd.parse(Spec::default());
    let actions: Vec<String> = p
        .opts
        .iter()
        .map(|o| match o {
            super::super::args::Opt::Short(c, _) => c.to_string(),
            super::super::args::Opt::Long(l, _) => l.clone(),
        })
        .filter(|a| !matches!(a.as_str(), "no-pager" | "admindir" | "root" | "instdir"))
        .collect();
    if !actions.is_empty() && actions.iter().all(|a| READS.contains(&a.as_str())) {
        Verdict::read("dpkg query only reads")
    } else {
        Verdict::write(Risk::High, "dpkg changes installed packages")
    }
}

/// `snap refresh --list` (snap's options are matched in full).
fn snap_refresh_list(cmd: &Cmd<'_>) -> bool {
    let p = cmd.parse(Spec {
        exact_long: true,
        ..Spec::default()
    });
    p.words() == ["refresh"] && p.positionals.len() == 1 && p.opts.len() == 1 && p.long("list")
}

fn pkg_generic(cmd: &Cmd<'_>) -> Verdict {
    const READS: &[&str] = &[
        "list",
        "info",
        "search",
        "repolist",
        "provides",
        "whatprovides",
        "deplist",
        "history",
        "repoquery",
        "version",
        "--version",
        "-V",
        "help",
        "se",
        "if",
        "pa",
        "lr",
        "-Q",
        "-Qi",
        "-Ql",
        "-Qs",
        "-Ss",
        "-Si",
        "-Qe",
        "-Qdt",
        "-Qk",
        "-Qo",
        "show",
        "policy",
        "stats",
        "-q",
        "--help",
    ];
    // `history` lists and shows, but `history undo|redo|rollback|replay|store` change
    // packages (or write a file): only its listing forms are reads.
    let history_reads = [None, Some("list"), Some("info"), Some("userinstalled")];
    match cmd.args.first().and_then(|w| w.fixed()) {
        Some("history")
            if !history_reads.contains(&cmd.args.get(1).map(|w| w.fixed().unwrap_or("?"))) =>
        {
            Verdict::write(
                Risk::High,
                format!("{} history in this form changes packages", cmd.name),
            )
        }
        Some(s) if READS.contains(&s) => Verdict::read(format!("{} {s} only queries", cmd.name)),
        Some(s) => Verdict::write(Risk::High, format!("{} {s} changes packages", cmd.name)),
        None => Verdict::read(format!("{} prints help", cmd.name)),
    }
}
