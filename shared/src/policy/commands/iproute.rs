//! `ip`, `bridge` and `tc` (iproute2 6.1): their own matcher, which a table cannot express. iproute2 compares
//! each word with a list of names in order and takes the first name the word is a
//! prefix of (`matches()` in lib/utils.c), so one abbreviation means different things
//! under different objects: `ip addr s` is `show`, but `ip link s` is `set`, as
//! `do_iplink` tests `set` before `show`. The lists below are the source's, in its order
//! (ip/ip.c's options and `cmds[]`, each object's `do_*` function; bridge/bridge.c and
//! bridge/*.c; tc/tc.c and tc's `do_*`); a word that matches no name is refused, as the
//! tool refuses it.

use super::super::engine::wrap_rewrite;
use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::Cmd;

/// What a word resolves to.
#[derive(Clone, Copy)]
enum Act {
    /// Lists, shows, gets or prints help.
    Read,
    /// Changes network state (or reads commands that do).
    Write,
    /// Prints events until stopped.
    Stream,
    /// `netns exec NAME CMD…`, `vrf exec NAME CMD…`: runs a command.
    Exec,
    /// `tc exec bpf …`: loads and runs BPF programs, runs a command (`import … run CMD`).
    Runs,
    /// An object whose next word is looked up in another list (no word: a read).
    Sub(&'static [Name]),
}

/// A name in one of iproute2's ordered lists; `exact` when the source compares it with
/// `strcmp` instead of `matches`.
struct Name {
    name: &'static str,
    exact: bool,
    act: Act,
}

const fn p(name: &'static str, act: Act) -> Name {
    Name {
        name,
        exact: false,
        act,
    }
}

const fn x(name: &'static str, act: Act) -> Name {
    Name {
        name,
        exact: true,
        act,
    }
}

use Act::{Exec, Read, Runs, Stream, Sub, Write};

/// ip's options (ip.c `main`), in order: (name, compared exactly, takes the next word).
/// `-batch FILE` runs the commands of a file.
const OPTIONS: &[(&str, bool, bool)] = &[
    ("-loops", false, true),
    ("-family", false, true),
    ("-4", true, false),
    ("-6", true, false),
    ("-0", true, false),
    ("-M", true, false),
    ("-B", true, false),
    ("-human", false, false),
    ("-human-readable", false, false),
    ("-iec", false, false),
    ("-stats", false, false),
    ("-statistics", false, false),
    ("-details", false, false),
    ("-resolve", false, false),
    ("-oneline", false, false),
    ("-timestamp", false, false),
    ("-tshort", false, false),
    ("-Version", false, false),
    ("-force", false, false),
    ("-batch", false, true),
    ("-brief", false, false),
    ("-json", false, false),
    ("-pretty", false, false),
    ("-rcvbuf", false, true),
    ("-color", false, false),
    ("-help", false, false),
    ("-netns", false, true),
    ("-Numeric", false, false),
    ("-all", false, false),
    ("-echo", true, false),
];

const ADDRESS: &[Name] = &[
    p("add", Write),
    p("change", Write),
    x("chg", Write),
    p("replace", Write),
    p("delete", Write),
    p("list", Read),
    p("show", Read),
    p("lst", Read),
    p("flush", Write),
    p("save", Read),
    p("showdump", Read),
    p("restore", Write),
    p("help", Read),
];
const ADDRLABEL: &[Name] = &[
    p("list", Read),
    p("lst", Read),
    p("show", Read),
    p("add", Write),
    p("delete", Write),
    p("flush", Write),
    p("help", Read),
];
const MADDRESS: &[Name] = &[
    p("add", Write),
    p("delete", Write),
    p("list", Read),
    p("show", Read),
    p("lst", Read),
    p("help", Read),
];
const ROUTE: &[Name] = &[
    p("add", Write),
    p("change", Write),
    x("chg", Write),
    p("replace", Write),
    p("prepend", Write),
    p("append", Write),
    p("test", Write),
    p("delete", Write),
    p("list", Read),
    p("show", Read),
    p("lst", Read),
    p("get", Read),
    p("flush", Write),
    p("save", Read),
    p("restore", Write),
    p("showdump", Read),
    p("help", Read),
];
const RULE: &[Name] = &[
    p("list", Read),
    p("lst", Read),
    p("show", Read),
    p("save", Read),
    p("restore", Write),
    p("add", Write),
    p("delete", Write),
    p("flush", Write),
    p("help", Read),
];
const NEIGH: &[Name] = &[
    p("add", Write),
    p("change", Write),
    x("chg", Write),
    p("replace", Write),
    p("delete", Write),
    p("get", Read),
    p("show", Read),
    p("lst", Read),
    p("list", Read),
    p("flush", Write),
    p("help", Read),
];
const NTABLE: &[Name] = &[
    p("change", Write),
    p("chg", Write),
    p("show", Read),
    p("lst", Read),
    p("list", Read),
    p("help", Read),
];
const LINK: &[Name] = &[
    p("add", Write),
    p("set", Write),
    p("change", Write),
    p("replace", Write),
    p("delete", Write),
    p("show", Read),
    p("lst", Read),
    p("list", Read),
    p("xstats", Read),
    p("afstats", Read),
    p("property", Write),
    p("help", Read),
];
const L2TP: &[Name] = &[
    p("help", Read),
    p("add", Write),
    p("delete", Write),
    p("show", Read),
    p("lst", Read),
    p("list", Read),
];
const FOU: &[Name] = &[
    p("help", Read),
    p("add", Write),
    p("delete", Write),
    p("show", Read),
];
const ILA: &[Name] = &[
    p("help", Read),
    p("add", Write),
    p("delete", Write),
    p("list", Read),
];
const MACSEC: &[Name] = &[
    p("help", Read),
    p("show", Read),
    p("add", Write),
    p("set", Write),
    p("delete", Write),
    p("offload", Write),
];
const TUNNEL: &[Name] = &[
    p("add", Write),
    p("change", Write),
    p("delete", Write),
    p("show", Read),
    p("lst", Read),
    p("list", Read),
    p("prl", Write),
    p("6rd", Write),
    p("help", Read),
];
const TUNTAP: &[Name] = &[
    p("add", Write),
    p("delete", Write),
    p("show", Read),
    p("lst", Read),
    p("list", Read),
    p("help", Read),
];
const TOKEN: &[Name] = &[
    p("list", Read),
    p("lst", Read),
    p("show", Read),
    p("set", Write),
    p("add", Write),
    p("delete", Write),
    p("get", Read),
    p("help", Read),
];
const TCP_METRICS: &[Name] = &[
    p("list", Read),
    p("lst", Read),
    p("show", Read),
    p("delete", Write),
    p("remove", Write),
    p("flush", Write),
    p("help", Read),
];
const XFRM_STATE: &[Name] = &[
    p("add", Write),
    p("update", Write),
    p("allocspi", Write),
    p("delete", Write),
    p("deleteall", Write),
    p("delall", Write),
    p("list", Read),
    p("show", Read),
    p("lst", Read),
    p("get", Read),
    p("flush", Write),
    p("count", Read),
    p("help", Read),
];
const XFRM_POLICY: &[Name] = &[
    p("add", Write),
    p("update", Write),
    p("delete", Write),
    p("deleteall", Write),
    p("delall", Write),
    p("list", Read),
    p("show", Read),
    p("lst", Read),
    p("get", Read),
    p("flush", Write),
    p("count", Read),
    p("set", Write),
    p("setdefault", Write),
    p("getdefault", Read),
    p("help", Read),
];
const XFRM: &[Name] = &[
    p("state", Sub(XFRM_STATE)),
    p("sa", Sub(XFRM_STATE)),
    p("policy", Sub(XFRM_POLICY)),
    p("monitor", Stream),
    p("help", Read),
];
const MROUTE: &[Name] = &[
    p("list", Read),
    p("show", Read),
    p("lst", Read),
    p("help", Read),
];
const NETNS: &[Name] = &[
    p("list", Read),
    p("show", Read),
    p("lst", Read),
    p("list-id", Read),
    p("help", Read),
    p("add", Write),
    p("set", Write),
    p("delete", Write),
    p("identify", Read),
    p("pids", Read),
    p("exec", Exec),
    p("monitor", Stream),
    p("attach", Write),
];
const NETCONF: &[Name] = &[
    p("show", Read),
    p("lst", Read),
    p("list", Read),
    p("help", Read),
];
const VRF: &[Name] = &[
    p("identify", Read),
    p("pids", Read),
    p("exec", Exec),
    p("show", Read),
    p("lst", Read),
    p("list", Read),
    p("help", Read),
];
const SR_SET: &[Name] = &[p("show", Read), p("set", Write)];
const SR: &[Name] = &[
    p("help", Read),
    p("hmac", Sub(SR_SET)),
    p("tunsrc", Sub(SR_SET)),
];
const NEXTHOP_BUCKET: &[Name] = &[
    p("list", Read),
    p("show", Read),
    p("lst", Read),
    p("get", Read),
    p("help", Read),
];
const NEXTHOP: &[Name] = &[
    p("add", Write),
    p("replace", Write),
    p("delete", Write),
    p("list", Read),
    p("show", Read),
    p("lst", Read),
    p("get", Read),
    p("flush", Write),
    p("bucket", Sub(NEXTHOP_BUCKET)),
    p("help", Read),
];
const MPTCP_ENDPOINT: &[Name] = &[
    p("add", Write),
    p("change", Write),
    p("delete", Write),
    p("show", Read),
    p("flush", Write),
];
const MPTCP_LIMITS: &[Name] = &[p("set", Write), p("show", Read)];
const MPTCP: &[Name] = &[
    p("help", Read),
    p("endpoint", Sub(MPTCP_ENDPOINT)),
    p("limits", Sub(MPTCP_LIMITS)),
    p("monitor", Stream),
];
const IOAM_NAMESPACE: &[Name] = &[
    x("show", Read),
    x("add", Write),
    x("del", Write),
    x("set", Write),
];
const IOAM_SCHEMA: &[Name] = &[x("show", Read), x("add", Write), x("del", Write)];
const IOAM: &[Name] = &[
    x("help", Read),
    x("namespace", Sub(IOAM_NAMESPACE)),
    x("schema", Sub(IOAM_SCHEMA)),
];
const STATS: &[Name] = &[x("help", Read), x("show", Read), x("set", Write)];

/// ip.c `cmds[]`, in order.
const OBJECTS: &[Name] = &[
    p("address", Sub(ADDRESS)),
    p("addrlabel", Sub(ADDRLABEL)),
    p("maddress", Sub(MADDRESS)),
    p("route", Sub(ROUTE)),
    p("rule", Sub(RULE)),
    p("neighbor", Sub(NEIGH)),
    p("neighbour", Sub(NEIGH)),
    p("ntable", Sub(NTABLE)),
    p("ntbl", Sub(NTABLE)),
    p("link", Sub(LINK)),
    p("l2tp", Sub(L2TP)),
    p("fou", Sub(FOU)),
    p("ila", Sub(ILA)),
    p("macsec", Sub(MACSEC)),
    p("tunnel", Sub(TUNNEL)),
    p("tunl", Sub(TUNNEL)),
    p("tuntap", Sub(TUNTAP)),
    p("tap", Sub(TUNTAP)),
    p("token", Sub(TOKEN)),
    p("tcpmetrics", Sub(TCP_METRICS)),
    p("tcp_metrics", Sub(TCP_METRICS)),
    p("monitor", Stream),
    p("xfrm", Sub(XFRM)),
    p("mroute", Sub(MROUTE)),
    p("mrule", Sub(RULE)),
    p("netns", Sub(NETNS)),
    p("netconf", Sub(NETCONF)),
    p("vrf", Sub(VRF)),
    p("sr", Sub(SR)),
    p("nexthop", Sub(NEXTHOP)),
    p("mptcp", Sub(MPTCP)),
    p("ioam", Sub(IOAM)),
    p("help", Read),
    p("stats", Sub(STATS)),
];

/// bridge's options (bridge.c `main`), in order; `-c` is `-color` (matches_color comes
/// before `-compressvlans`).
const BRIDGE_OPTIONS: &[(&str, bool, bool)] = &[
    ("-help", false, false),
    ("-Version", false, false),
    ("-stats", false, false),
    ("-statistics", false, false),
    ("-details", false, false),
    ("-oneline", false, false),
    ("-timestamp", false, false),
    ("-family", false, true),
    ("-4", true, false),
    ("-6", true, false),
    ("-netns", false, true),
    ("-color", false, false),
    ("-compressvlans", false, false),
    ("-force", false, false),
    ("-json", false, false),
    ("-pretty", false, false),
    ("-batch", false, true),
];

const BR_LINK: &[Name] = &[
    p("set", Write),
    p("change", Write),
    p("show", Read),
    p("lst", Read),
    p("list", Read),
    p("help", Read),
];
const BR_FDB: &[Name] = &[
    p("add", Write),
    p("append", Write),
    p("replace", Write),
    p("delete", Write),
    p("get", Read),
    p("show", Read),
    p("lst", Read),
    p("list", Read),
    x("flush", Write),
    p("help", Read),
];
const BR_MDB: &[Name] = &[
    p("add", Write),
    p("delete", Write),
    p("show", Read),
    p("lst", Read),
    p("list", Read),
    p("help", Read),
];
const BR_VLAN_GLOBAL: &[Name] = &[
    x("show", Read),
    x("lst", Read),
    x("list", Read),
    x("set", Write),
];
const BR_VLAN: &[Name] = &[
    p("add", Write),
    p("delete", Write),
    p("show", Read),
    p("lst", Read),
    p("list", Read),
    p("tunnelshow", Read),
    p("set", Write),
    x("global", Sub(BR_VLAN_GLOBAL)),
    p("help", Read),
];
const BR_VNI: &[Name] = &[
    x("add", Write),
    x("delete", Write),
    x("show", Read),
    x("lst", Read),
    x("list", Read),
    x("help", Read),
];

/// bridge.c `cmds[]`, in order.
const BRIDGE_OBJECTS: &[Name] = &[
    p("link", Sub(BR_LINK)),
    p("fdb", Sub(BR_FDB)),
    p("mdb", Sub(BR_MDB)),
    p("vlan", Sub(BR_VLAN)),
    p("vni", Sub(BR_VNI)),
    p("monitor", Stream),
    p("help", Read),
];

/// tc's options (tc.c `main`), in order: one dash only, no `--`; `-c` is `-cf FILE` (the
/// class names file), `-n` is `-netns NAME`, `-b` is `-batch FILE`.
const TC_OPTIONS: &[(&str, bool, bool)] = &[
    ("-stats", false, false),
    ("-statistics", false, false),
    ("-details", false, false),
    ("-raw", false, false),
    ("-pretty", false, false),
    ("-graph", false, false),
    ("-Version", false, false),
    ("-iec", false, false),
    ("-help", false, false),
    ("-force", false, false),
    ("-batch", false, true),
    ("-netns", false, true),
    ("-Numeric", false, false),
    ("-names", false, false),
    ("-nm", false, false),
    ("-cf", false, true),
    ("-conf", false, true),
    ("-color", false, false),
    ("-timestamp", false, false),
    ("-tshort", false, false),
    ("-json", false, false),
    ("-oneline", false, false),
    ("-brief", false, false),
];

/// `tc qdisc`: `link` comes before `list`, so `tc qdisc l` links a qdisc.
const TC_QDISC: &[Name] = &[
    p("add", Write),
    p("change", Write),
    p("replace", Write),
    p("link", Write),
    p("delete", Write),
    p("list", Read),
    p("show", Read),
    p("lst", Read),
    p("help", Read),
];
const TC_CLASS: &[Name] = &[
    p("add", Write),
    p("change", Write),
    p("replace", Write),
    p("delete", Write),
    p("list", Read),
    p("show", Read),
    p("lst", Read),
    p("help", Read),
];
const TC_FILTER: &[Name] = &[
    p("add", Write),
    p("change", Write),
    p("replace", Write),
    p("delete", Write),
    p("get", Read),
    p("list", Read),
    p("show", Read),
    p("lst", Read),
    p("help", Read),
];
const TC_CHAIN: &[Name] = &[
    p("add", Write),
    p("delete", Write),
    p("get", Read),
    p("list", Read),
    p("show", Read),
    p("lst", Read),
    p("help", Read),
];
/// `tc actions`: do_action loops over its words, so after `get … ` another verb (`add`,
/// `delete`) runs in the same command: only `list`/`show`/`lst`, which return, read.
const TC_ACTIONS: &[Name] = &[
    p("add", Write),
    p("change", Write),
    p("replace", Write),
    p("delete", Write),
    p("get", Write),
    p("list", Read),
    p("show", Read),
    p("lst", Read),
    p("flush", Write),
    p("help", Read),
];

/// tc.c `do_cmd`, in order.
const TC_OBJECTS: &[Name] = &[
    p("qdisc", Sub(TC_QDISC)),
    p("class", Sub(TC_CLASS)),
    p("filter", Sub(TC_FILTER)),
    p("chain", Sub(TC_CHAIN)),
    p("actions", Sub(TC_ACTIONS)),
    p("monitor", Stream),
    p("exec", Runs),
    p("help", Read),
];

/// One iproute2 program: its options in `main`'s order, its objects, and whether `--opt`
/// is `-opt` with `--` ending the options (ip, bridge; tc compares the word as written).
struct Tool {
    name: &'static str,
    options: &'static [(&'static str, bool, bool)],
    double_dash: bool,
    objects: &'static [Name],
}

const IP: Tool = Tool {
    name: "ip",
    options: OPTIONS,
    double_dash: true,
    objects: OBJECTS,
};
const BRIDGE: Tool = Tool {
    name: "bridge",
    options: BRIDGE_OPTIONS,
    double_dash: true,
    objects: BRIDGE_OBJECTS,
};
const TC: Tool = Tool {
    name: "tc",
    options: TC_OPTIONS,
    double_dash: false,
    objects: TC_OBJECTS,
};

/// iproute2's `matches(word, name)`: a non-empty word that is a prefix of the name.
fn matches(word: &str, name: &str) -> bool {
    !word.is_empty() && name.starts_with(word)
}

/// The first name of `list` that `word` selects, as iproute2 looks it up.
fn lookup<'l>(list: &'l [Name], word: &str) -> Option<&'l Name> {
    list.iter().find(|n| {
        if n.exact {
            n.name == word
        } else {
            matches(word, n.name)
        }
    })
}

/// The option `opt` (one leading dash of `--` dropped, as ip does) names among `options`,
/// and whether it takes a value; `None` when the tool refuses it.
fn option(options: &[(&'static str, bool, bool)], opt: &str) -> Option<(&'static str, bool)> {
    // `-color[=always|auto|never]`: the only option with an attached value.
    let (head, when) = opt.split_once('=').unwrap_or((opt, ""));
    options.iter().find_map(|&(name, exact, value)| {
        let hit = if name == "-color" {
            matches(head, name) && matches!(when, "" | "always" | "auto" | "never")
        } else if exact {
            opt == name
        } else {
            matches(opt, name)
        };
        hit.then_some((name, value))
    })
}

pub(super) fn ip(cmd: &Cmd<'_>) -> Verdict {
    run(cmd, &IP)
}

pub(super) fn bridge(cmd: &Cmd<'_>) -> Verdict {
    run(cmd, &BRIDGE)
}

pub(super) fn tc(cmd: &Cmd<'_>) -> Verdict {
    run(cmd, &TC)
}

fn run(cmd: &Cmd<'_>, tool: &Tool) -> Verdict {
    let prog = tool.name;
    let mut i = 0;
    let mut all = false;
    while let Some(word) = cmd.args.get(i) {
        let Some(t) = word.fixed() else {
            return cmd.dynamic_write();
        };
        if t == "--" && tool.double_dash {
            i += 1;
            break;
        }
        let Some(rest) = t.strip_prefix('-') else {
            break;
        };
        let opt = if rest.starts_with('-') && tool.double_dash {
            rest
        } else {
            t
        };
        let Some((name, value)) = option(tool.options, opt) else {
            return Verdict::unknown(format!(
                "{prog}: option {t} is not one {prog} accepts, so it is not known to only read"
            ));
        };
        if name == "-batch" {
            return Verdict::write(
                Risk::High,
                format!("{prog} -batch runs the commands of a file"),
            );
        }
        all |= name == "-all";
        if value && cmd.args.get(i + 1).is_none() {
            return Verdict::unknown(format!("{prog}: {t} needs a value"));
        }
        i += if value { 2 } else { 1 };
    }
    let mut list = tool.objects;
    let mut path: Vec<&str> = Vec::new();
    let mut act = Read;
    while let Some(word) = cmd.args.get(i) {
        let Some(t) = word.fixed() else {
            return cmd.dynamic_write();
        };
        let Some(name) = lookup(list, t) else {
            let at = if path.is_empty() {
                prog.to_owned()
            } else {
                format!("{prog} {}", path.join(" "))
            };
            return Verdict::unknown(format!(
                "{at}: {t} is not a command it knows, so it is not known to only read"
            ));
        };
        path.push(name.name);
        i += 1;
        act = name.act;
        match name.act {
            Sub(next) => {
                list = next;
                act = Read;
            }
            _ => break,
        }
    }
    let what = format!("{prog} {}", path.join(" "));
    match act {
        Read | Sub(_) => Verdict::read(format!("{} only reads", what.trim_end())),
        Write => Verdict::write(Risk::High, format!("{what} changes network configuration")),
        Runs => Verdict::write(Risk::High, format!("{what} loads and runs programs")),
        Stream => {
            Verdict::read(format!("{what} only reads")).unbounded(UnboundedCategory::Stream, None)
        }
        Exec => {
            // `ip -all netns exec CMD` runs CMD in every namespace: no NAME.
            let named = !(all && path.first() == Some(&"netns"));
            let start = if named { i + 1 } else { i };
            let inner = cmd.args.get(start..).unwrap_or(&[]);
            if inner.is_empty() {
                return Verdict::unknown(format!("{what} without a command"));
            }
            let name = cmd.args.get(i).filter(|_| named);
            let head = format!("{what} {}", name.map(|w| w.src.as_str()).unwrap_or(""));
            wrap_rewrite(cmd.ctx.argv(inner), |r| format!("{head} {r}"))
        }
    }
}
