//! `nmcli` (NetworkManager 1.42) and `iw` (5.19): their own matchers, which a table cannot
//! express. nmcli compares each word with a list of names in order and takes the first
//! name the word is a prefix of (`matches()` in libnmc-base, `nmc_do_cmd` in
//! src/nmcli/common.c), so `nmcli d s` is `device status` but `nmcli d d` is `device
//! disconnect`; its global options are matched the same way (`-f` is `--fields`, one dash
//! or two), and `--ask`/`--show-secrets` are taken wherever `next_arg()` reads a word. iw
//! compares its sections and commands in full (`__handle_cmd` in iw.c), with the device or
//! phy name in the middle (`iw dev wlan0 link`, `iw phy0 info`). The lists are the
//! sources'; a word that matches nothing is refused.

use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::Cmd;

/// What a word resolves to.
#[derive(Clone, Copy)]
enum Act {
    /// Shows, lists or prints help; more words are its arguments.
    Read,
    /// Reads only without further words (`general hostname`, `radio wifi`); with them it
    /// sets what it shows.
    ReadBare,
    /// Changes NetworkManager's state or the network.
    Write,
    /// Prints events until stopped.
    Stream,
    /// A list of subcommands, and what runs without one.
    Sub(&'static [(&'static str, Act)], &'static Act),
    /// `device wifi list`: reads only with `--rescan no` (otherwise NetworkManager may ask
    /// the radio for a scan).
    WifiList,
}

use Act::{Read, ReadBare, Stream, Sub, WifiList, Write};

/// nmcli's global options (nmcli.c `process_command_line`), in order: (name, takes a
/// value). A value is attached with `=` or is the next word.
const NMCLI_OPTIONS: &[(&str, bool)] = &[
    ("overview", false),
    ("offline", false),
    ("terse", false),
    ("pretty", false),
    ("mode", true),
    ("colors", true),
    ("escape", true),
    ("fields", true),
    ("get-values", true),
    ("nocheck", false),
    ("wait", true),
    ("version", false),
    ("help", false),
];

const GENERAL: &[(&str, Act)] = &[
    ("status", Read),
    ("hostname", ReadBare),
    ("permissions", Read),
    ("logging", ReadBare),
    ("reload", Write),
];
const NETWORKING: &[(&str, Act)] = &[
    ("on", Write),
    ("off", Write),
    // `connectivity check` asks NetworkManager to probe the check URL again.
    ("connectivity", ReadBare),
];
const RADIO: &[(&str, Act)] = &[("all", ReadBare), ("wifi", ReadBare), ("wwan", ReadBare)];
const CONNECTION: &[(&str, Act)] = &[
    ("show", Read),
    ("up", Write),
    ("down", Write),
    ("add", Write),
    ("edit", Write),
    ("delete", Write),
    ("reload", Write),
    ("load", Write),
    ("modify", Write),
    ("clone", Write),
    ("import", Write),
    ("export", Write),
    ("migrate", Write),
    ("monitor", Stream),
];
const DEVICE_WIFI: &[(&str, Act)] = &[
    ("list", WifiList),
    ("connect", Write),
    ("hotspot", Write),
    ("rescan", Write),
    ("show-password", Read),
];
const DEVICE_LLDP: &[(&str, Act)] = &[("list", Read)];
const DEVICE: &[(&str, Act)] = &[
    ("checkpoint", Write),
    ("connect", Write),
    ("disconnect", Write),
    ("delete", Write),
    ("down", Write),
    ("lldp", Sub(DEVICE_LLDP, &Read)),
    ("monitor", Stream),
    ("modify", Write),
    ("reapply", Write),
    ("status", Read),
    ("set", Write),
    ("show", Read),
    ("up", Write),
    ("wifi", Sub(DEVICE_WIFI, &WifiList)),
];
const AGENT: &[(&str, Act)] = &[("secret", Write), ("polkit", Write), ("all", Write)];

/// nmcli.c `nmcli_cmds[]`, in order; with no object nmcli prints an overview.
const NMCLI_OBJECTS: &[(&str, Act)] = &[
    ("general", Sub(GENERAL, &Read)),
    ("monitor", Stream),
    ("networking", Sub(NETWORKING, &Read)),
    ("radio", Sub(RADIO, &Read)),
    ("connection", Sub(CONNECTION, &Read)),
    ("device", Sub(DEVICE, &Read)),
    // The agent registers with NetworkManager and answers its secret requests.
    ("agent", Sub(AGENT, &Write)),
];

/// nmcli's `matches(word, name)`: a non-empty word that is a prefix of the name.
fn matches(word: &str, name: &str) -> bool {
    !word.is_empty() && name.starts_with(word)
}

/// `nmc_arg_is_option(word, name)`: `-NAME` or `--NAME`, abbreviated.
fn is_option(word: &str, name: &str) -> bool {
    let Some(body) = word.strip_prefix('-') else {
        return false;
    };
    matches(body.strip_prefix('-').unwrap_or(body), name)
}

/// `nmc_arg_is_help`: `help`, `-help`, `--help`, abbreviated.
fn is_help(word: &str) -> bool {
    matches(word, "help")
        || word.strip_prefix('-').is_some_and(|w| matches(w, "help"))
        || word.strip_prefix("--").is_some_and(|w| matches(w, "help"))
}

/// The global arguments `next_arg()` takes wherever it reads a word: `--ask` (prompts for
/// passwords and secrets) and `--show-secrets`.
fn global_arg(word: &str) -> Option<&'static str> {
    if is_option(word, "ask") {
        Some("ask")
    } else if is_option(word, "show-secrets") {
        Some("show-secrets")
    } else {
        None
    }
}

pub(super) fn nmcli(cmd: &Cmd<'_>) -> Verdict {
    let mut words = Vec::with_capacity(cmd.args.len());
    for w in cmd.args {
        match w.fixed() {
            Some(t) => words.push(t),
            None => return cmd.dynamic_write(),
        }
    }
    let ask = || {
        Verdict::write(
            Risk::Medium,
            "nmcli --ask prompts for passwords and secrets to connect",
        )
    };
    let mut i = 0;
    // Options: each word after the program and after every option may be a global
    // argument first.
    loop {
        while let Some(g) = words.get(i).and_then(|w| global_arg(w)) {
            if g == "ask" {
                return ask();
            }
            i += 1;
        }
        let Some(&t) = words.get(i) else { break };
        if !t.starts_with('-') {
            break;
        }
        if t == "--" {
            i += 1;
            break;
        }
        let body = t.strip_prefix('-').unwrap_or(t);
        let body = body.strip_prefix('-').unwrap_or(body);
        let found = NMCLI_OPTIONS.iter().find_map(|&(name, value)| {
            let head = if value {
                body.split_once('=').map_or(body, |(h, _)| h)
            } else {
                body
            };
            matches(head, name).then_some((name, value && !body.contains('=')))
        });
        let Some((name, next)) = found else {
            return Verdict::unknown(format!(
                "nmcli: option {t} is not one nmcli accepts, so it is not known to only read"
            ));
        };
        if matches!(name, "version" | "help") {
            return Verdict::read(format!("nmcli --{name} only prints"));
        }
        if next {
            if words.get(i + 1).is_none() {
                return Verdict::unknown(format!("nmcli: {t} needs a value"));
            }
            i += 1;
        }
        i += 1;
    }
    // The remaining words: `--ask` anywhere makes nmcli prompt (and the forms that take
    // it connect).
    if words[i..].iter().any(|w| is_option(w, "ask")) {
        return ask();
    }
    let mut list = NMCLI_OBJECTS;
    let mut default = &Read;
    let mut path: Vec<&str> = Vec::new();
    let mut act = Read;
    let mut resolved = false;
    while !resolved {
        while words.get(i).is_some_and(|w| global_arg(w).is_some()) {
            i += 1;
        }
        let Some(&t) = words.get(i) else {
            act = *default;
            break;
        };
        match list.iter().find(|(name, _)| matches(t, name)) {
            Some((name, a)) => {
                path.push(name);
                i += 1;
                // `OBJECT VERB help`: the verb's usage (the `device wifi` and `device
                // lldp` verbs have none: a word `help` is their argument).
                if words.get(i).is_some_and(|w| is_help(w)) && path.len() == 2 {
                    return Verdict::read(format!("nmcli {} help only prints", path.join(" ")));
                }
                match a {
                    Sub(next, dflt) => {
                        list = next;
                        default = dflt;
                    }
                    other => {
                        act = *other;
                        resolved = true;
                    }
                }
            }
            None if is_help(t) => {
                return Verdict::read(format!("nmcli {} help only prints", path.join(" ")));
            }
            None => {
                return Verdict::unknown(format!(
                    "nmcli {}: {t} is not a command it knows, so it is not known to only read",
                    path.join(" ")
                ));
            }
        }
    }
    let what = format!("nmcli {}", path.join(" "));
    let what = what.trim_end();
    let rest: Vec<&str> = words[i.min(words.len())..]
        .iter()
        .copied()
        .filter(|w| global_arg(w).is_none())
        .collect();
    match act {
        Read => Verdict::read(format!("{what} only reads")),
        ReadBare if rest.is_empty() => Verdict::read(format!("{what} only reads")),
        ReadBare | Write | Sub(..) => {
            Verdict::write(Risk::High, format!("{what} changes network configuration"))
        }
        Stream => {
            Verdict::read(format!("{what} only reads")).unbounded(UnboundedCategory::Stream, None)
        }
        WifiList => {
            let no_rescan = rest
                .iter()
                .position(|w| is_option(w, "rescan"))
                .is_some_and(|at| rest.get(at + 1) == Some(&"no"));
            if no_rescan {
                Verdict::read(format!("{what} --rescan no only reads"))
            } else {
                Verdict::write(
                    Risk::Low,
                    format!("{what} may ask the radio for a scan (without --rescan no)"),
                )
            }
        }
    }
}

/// How iw names what a command acts on (`enum command_identify_by`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum By {
    None,
    Netdev,
    Phy,
}

/// iw's read commands: (identified by, section, command or "" for the section's own
/// handler, how many more words it takes, what it does). A section or command not listed
/// here changes wireless settings, joins or leaves a network, triggers a scan or a
/// measurement, or is not known.
const IW_READS: &[(By, &str, &str, usize, Act)] = &[
    (By::None, "list", "", 0, Read),
    (By::None, "phy", "", 0, Read),
    (By::None, "dev", "", 0, Read),
    (By::None, "features", "", 0, Read),
    (By::None, "commands", "", 0, Read),
    (By::None, "reg", "get", 0, Read),
    (By::None, "event", "", 3, Stream),
    (By::Netdev, "info", "", 0, Read),
    (By::Netdev, "link", "", 0, Read),
    (By::Netdev, "station", "dump", 1, Read),
    (By::Netdev, "station", "get", 1, Read),
    (By::Netdev, "survey", "dump", 1, Read),
    (By::Netdev, "scan", "dump", 1, Read),
    (By::Netdev, "mpath", "dump", 0, Read),
    (By::Netdev, "mpath", "get", 1, Read),
    (By::Netdev, "mpp", "dump", 0, Read),
    (By::Netdev, "mpp", "get", 1, Read),
    (By::Netdev, "get", "power_save", 0, Read),
    (By::Netdev, "get", "mesh_param", 1, Read),
    (By::Netdev, "mesh_param", "dump", 0, Read),
    (By::Netdev, "ftm", "get_stats", 0, Read),
    (By::Phy, "info", "", 0, Read),
    (By::Phy, "channels", "", 0, Read),
    (By::Phy, "get", "txq", 0, Read),
    (By::Phy, "wowlan", "show", 0, Read),
    (By::Phy, "coalesce", "show", 0, Read),
    (By::Phy, "reg", "get", 0, Read),
];

/// The top-level sections (iw.c, `TOPLEVEL` with no device) whose names a first word is
/// read as before a device name.
const IW_TOP: &[&str] = &[
    "list", "phy", "dev", "features", "commands", "reg", "event", "wdev",
];

/// The verdict of `words` (section, command, arguments) for a command identified `by`
/// (several: a name that may be an interface or a phy).
fn iw_lookup(by: &[By], what: &str, words: &[&str]) -> Verdict {
    let Some(&section) = words.first() else {
        return Verdict::read(format!("{what} prints its usage"));
    };
    let rest = &words[1..];
    let hit = IW_READS.iter().find(|(b, s, c, n, _)| {
        by.contains(b)
            && *s == section
            && if c.is_empty() {
                rest.len() <= *n
            } else {
                rest.first() == Some(c) && rest.len() - 1 <= *n
            }
    });
    match hit {
        Some((_, s, c, _, Read)) => Verdict::read(format!("{what} {s} {c} only reads")),
        Some((_, s, _, _, _)) => Verdict::read(format!("{what} {s} only reads"))
            .unbounded(UnboundedCategory::Stream, None),
        None => Verdict::write(
            Risk::Medium,
            format!("{what} {section} changes wireless settings (or is not a known read)"),
        ),
    }
}

pub(super) fn iw(cmd: &Cmd<'_>) -> Verdict {
    let mut words = Vec::with_capacity(cmd.args.len());
    for w in cmd.args {
        match w.fixed() {
            Some(t) => words.push(t),
            None => return cmd.dynamic_write(),
        }
    }
    let mut args: &[&str] = &words;
    if args.first() == Some(&"--debug") {
        args = &args[1..];
    }
    match args {
        [] | ["help", ..] => Verdict::read("iw help only prints"),
        ["--version", ..] => Verdict::read("iw --version only prints"),
        ["dev", name, rest @ ..] => iw_lookup(&[By::Netdev], &format!("iw dev {name}"), rest),
        ["wdev", idx, rest @ ..] => iw_lookup(&[By::Netdev], &format!("iw wdev {idx}"), rest),
        ["phy", name, rest @ ..] => iw_lookup(&[By::Phy], &format!("iw phy {name}"), rest),
        [first, rest @ ..] if first.starts_with("phy#") => {
            iw_lookup(&[By::Phy], &format!("iw {first}"), rest)
        }
        [first, ..] if IW_TOP.contains(first) => iw_lookup(&[By::None], "iw", args),
        // An interface or a phy name first (iw.c `detect`).
        [first, rest @ ..] if !first.starts_with('-') => {
            iw_lookup(&[By::Netdev, By::Phy], &format!("iw {first}"), rest)
        }
        [first, ..] => Verdict::unknown(format!(
            "iw: {first} is not an option iw accepts, so it is not known to only read"
        )),
    }
}
