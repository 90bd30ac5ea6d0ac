//! Configuration test modes and version reports of daemons a self-hosting operator runs:
//! `sshd -t/-T`, BIND's `named-checkconf`/`named-checkzone`, `unbound-checkconf`,
//! `dnsmasq --test`, Samba's `testparm`, Prometheus' `promtool check`, Alertmanager's
//! `amtool check-config`, the LXC listing tools, and `-v`/`-V` of web servers and proxies.
//!
//! Each is a read only with the test (or report) option present and every other option on
//! an allow-list: a daemon binary without its test flag starts the daemon, and options that
//! write a log, a pid file or an output file (`sshd -E`, `named-checkzone -o`, `lxc-* -o`)
//! are left off. `nginx -t`, `apachectl -t` and `haproxy -c` stay writes: nginx opens (and
//! creates) its log files while testing, Debian's `apache2ctl` creates its run and lock
//! directories, and haproxy runs `lua-load` scripts while parsing (docs/classifier-coverage.md).

use super::super::args::Spec;
use super::super::types::Risk;
use super::super::verdict::Verdict;
use super::Cmd;

/// One tool's read form: it must carry one of `required` (short letters or long names),
/// and may carry only the listed options.
struct Form {
    /// Short options allowed.
    shorts: &'static str,
    /// Long options allowed (in full).
    longs: &'static [&'static str],
    /// Short options that take a value.
    short_values: &'static str,
    /// Long options that take a value when written apart.
    long_values: &'static [&'static str],
    /// At least one of these must be given (`'t'` or `"test"`); empty when none is needed.
    required: &'static [Req],
    /// What the form does, for the reason.
    what: &'static str,
}

/// An option that makes the command a test or a report.
#[derive(Clone, Copy)]
enum Req {
    Short(char),
    Long(&'static str),
}

const SSHD: Form = Form {
    shorts: "tTqfhC",
    longs: &[],
    short_values: "fhC",
    long_values: &[],
    required: &[Req::Short('t'), Req::Short('T')],
    what: "tests or prints its configuration",
};
const NAMED_CHECKCONF: Form = Form {
    shorts: "chjlvzpxt",
    longs: &[],
    short_values: "t",
    long_values: &[],
    required: &[],
    what: "checks the configuration",
};
// Everything but `-o FILE` (write the zone to a file).
const NAMED_CHECKZONE: Form = Form {
    shorts: "dhjqvDcfFJikmMnlLrsStTwW",
    longs: &[],
    short_values: "cfFJikmMnlLrsStTwW",
    long_values: &[],
    required: &[],
    what: "checks a zone file",
};
const UNBOUND_CHECKCONF: Form = Form {
    shorts: "hfqo",
    longs: &[],
    short_values: "o",
    long_values: &[],
    required: &[],
    what: "checks the configuration",
};
const DNSMASQ: Form = Form {
    shorts: "C",
    longs: &["test", "conf-file", "conf-dir"],
    short_values: "C",
    long_values: &["conf-file", "conf-dir"],
    required: &[Req::Long("test")],
    what: "tests its configuration",
};
const TESTPARM: Form = Form {
    shorts: "sv",
    longs: &[
        "suppress-prompt",
        "verbose",
        "section-name",
        "parameter-name",
        "show-all-parameters",
    ],
    short_values: "",
    long_values: &["section-name", "parameter-name"],
    required: &[],
    what: "checks the Samba configuration",
};
// `-o/--logfile` writes a log and `--rcfile` loads a container configuration: left off.
const LXC_LS: Form = Form {
    shorts: "1fFgPq",
    longs: &[
        "line",
        "fancy",
        "fancy-format",
        "groups",
        "lxcpath",
        "quiet",
        "active",
        "running",
        "frozen",
        "stopped",
        "defined",
        "nesting",
        "filter",
    ],
    short_values: "FgP",
    long_values: &["fancy-format", "groups", "lxcpath", "nesting", "filter"],
    required: &[],
    what: "lists containers",
};
const LXC_INFO: Form = Form {
    shorts: "ncspiSHPq",
    longs: &[
        "name",
        "config",
        "state",
        "pid",
        "ips",
        "stats",
        "no-humanize",
        "lxcpath",
        "quiet",
    ],
    short_values: "ncP",
    long_values: &["name", "config", "lxcpath"],
    required: &[],
    what: "reports a container",
};
/// `-v`/`-V` only: any other option may start the daemon or parse its configuration.
const VERSION_ONLY: Form = Form {
    shorts: "vV",
    longs: &[],
    short_values: "",
    long_values: &[],
    required: &[Req::Short('v'), Req::Short('V')],
    what: "prints its version",
};

/// Subcommand pairs of the Go tools (exact long options, any option of the form).
const PROMTOOL_CHECKS: &[&str] = &[
    "config",
    "rules",
    "web-config",
    "metrics",
    "healthy",
    "ready",
];

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "sshd" => by_form(cmd, &SSHD),
        "named-checkconf" => by_form(cmd, &NAMED_CHECKCONF),
        "named-checkzone" => by_form(cmd, &NAMED_CHECKZONE),
        "unbound-checkconf" => by_form(cmd, &UNBOUND_CHECKCONF),
        "dnsmasq" => by_form(cmd, &DNSMASQ),
        "testparm" => by_form(cmd, &TESTPARM),
        "lxc-ls" => by_form(cmd, &LXC_LS),
        "lxc-info" => by_form(cmd, &LXC_INFO),
        "nginx" | "haproxy" | "httpd" | "apache2" => by_form(cmd, &VERSION_ONLY),
        "promtool" => go_check(cmd, "check", PROMTOOL_CHECKS),
        "amtool" => go_check(cmd, "check-config", &[]),
        _ => return None,
    };
    Some(v)
}

fn by_form(cmd: &Cmd<'_>, form: &Form) -> Verdict {
    let p = cmd.parse(Spec {
        short_values: form.short_values,
        long_values: form.long_values,
        ..Spec::default()
    });
    if let Some(option) = p.unlisted(form.shorts, form.longs) {
        return Verdict::write(
            Risk::Medium,
            format!("{} {option} is not part of a read form", cmd.name),
        );
    }
    let tested = form.required.is_empty()
        || form.required.iter().any(|req| match *req {
            Req::Short(c) => p.short(c),
            Req::Long(name) => p.long(name),
        });
    if !tested {
        return Verdict::write(
            Risk::High,
            format!("{} without its test option starts the program", cmd.name),
        );
    }
    Verdict::read(format!("{} {}", cmd.name, form.what))
}

/// `TOOL SUB [WORD]`: a read when the first operand is `sub` and, if `seconds` is not
/// empty, the second is one of them.
fn go_check(cmd: &Cmd<'_>, sub: &str, seconds: &[&str]) -> Verdict {
    let p = cmd.parse(Spec {
        exact_long: true,
        ..Spec::default()
    });
    let first = p.first();
    let second = p.nth(1);
    let ok =
        first == Some(sub) && (seconds.is_empty() || second.is_some_and(|s| seconds.contains(&s)));
    if ok {
        Verdict::read(format!("{} {sub} only checks", cmd.name))
    } else {
        Verdict::write(
            Risk::Medium,
            format!(
                "{} {} is not a known read form",
                cmd.name,
                first.unwrap_or("(no subcommand)")
            ),
        )
    }
}
