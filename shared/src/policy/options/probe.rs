//! Checks the tables' arities against the real tools, where they are installed: each
//! tool's own help text is read, every option it shows with its argument form, and an
//! option the table declares with another arity fails the test (that is the class of
//! miss where a flag hides the next option, or a value shifts the subcommand). Options
//! the help shows but the table lacks are only listed: the engine denies them anyway.
//! A tool that is not installed is skipped with a note.

use super::probe_list::{COBRA, KNOWN, LONG_ONLY, PROBES, SINGLE_DASH, normalize};
use super::table;
use super::table::{Arity, Node, OptSpec, Table};
use std::process::Command;

/// An option's argument form as a help text shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shown {
    None,
    Required,
    Optional,
}

fn help(cmd: &[&str]) -> Option<String> {
    let (prog, args) = cmd.split_first()?;
    let out = Command::new(prog).args(args).output().ok()?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    Some(text)
}

/// An argument placeholder: `<file>`, `[=X]`, `NAME`, `FILE|-`, `#`.
fn is_placeholder(t: &str) -> bool {
    t.starts_with('<')
        || t.starts_with('[')
        || t.starts_with('{')
        || t == "#"
        || (t.chars().any(|c| c.is_ascii_uppercase())
            && t.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || "_-|:[]=.@".contains(c)))
}

/// Every option a help line shows: (short, long, argument form).
fn parse_help(
    text: &str,
    cobra: bool,
    single_dash: bool,
) -> Vec<(Option<char>, Option<String>, Shown)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        // Option lines are indented a little; a deeply indented one continues a
        // description (`-i to change the interval`).
        if !t.starts_with('-') || line.len() == t.len() || line.len() - t.len() > 12 {
            continue;
        }
        // kubectl (pflag): `-o, --output='':`, a flag when its default is a boolean.
        if let Some(flag) = t
            .strip_suffix(':')
            .filter(|f| f.contains("--") && f.contains('=') && !f.contains("  "))
        {
            let (names, default) = flag.split_once('=').unwrap_or((flag, ""));
            let mut short = None;
            let mut long = None;
            for n in names.split(", ") {
                match n.strip_prefix("--") {
                    Some(l) => long = Some(l.to_owned()),
                    None => short = n.strip_prefix('-').and_then(|c| c.chars().next()),
                }
            }
            let shown = if matches!(default, "true" | "false") {
                Shown::None
            } else {
                Shown::Required
            };
            out.push((short, long, shown));
            continue;
        }
        let head = t.split("  ").next().unwrap_or("").replace(", ", " ");
        let (mut short, mut long, mut shown) = (None, None, Shown::None);
        for tok in head.split_whitespace() {
            if let Some(l) = tok.strip_prefix("--") {
                // git 2.4x: `--[no-]cached` is `--cached` (and its negation).
                let l = l.strip_prefix("[no-]").unwrap_or(l);
                let (name, arg) = match l.find(['=', '[']) {
                    Some(i) => (&l[..i], &l[i..]),
                    None => (l, ""),
                };
                if name.is_empty() || long.is_some() {
                    break;
                }
                long = Some(name.to_owned());
                shown = if arg.starts_with('[') {
                    Shown::Optional
                } else if arg.starts_with('=') {
                    Shown::Required
                } else {
                    Shown::None
                };
            } else if let Some(l) = tok
                .strip_prefix('-')
                .map(|l| l.strip_prefix("[no]").unwrap_or(l))
                .filter(|l| single_dash && l.len() > 1 && long.is_none() && short.is_none())
            {
                // sqlite3: `-readonly`, `-[no]header`, `-cmd COMMAND`.
                long = Some(l.to_owned());
            } else if let Some(s) = tok.strip_prefix('-') {
                let mut cs = s.chars();
                match (cs.next(), cs.next()) {
                    (Some(c), None) if short.is_none() && long.is_none() => short = Some(c),
                    _ => break,
                }
            } else if (cobra || is_placeholder(tok)) && shown == Shown::None {
                shown = if tok.starts_with('[') {
                    Shown::Optional
                } else {
                    Shown::Required
                };
                break;
            } else {
                break;
            }
        }
        if short.is_some() || long.is_some() {
            out.push((short, long, shown));
        }
    }
    out
}

/// Every option a long-only help line shows: each name before the `:` that ends the
/// head, alternatives split on `/` and `;`, a `<…>` or `=` value required, `[…]` optional.
fn parse_long_only_help(text: &str) -> Vec<(Option<char>, Option<String>, Shown)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        if !t.starts_with('-') || line.len() - t.len() > 4 {
            continue;
        }
        let head = t.split(": ").next().unwrap_or("").trim_end_matches(':');
        let mut group: Vec<String> = Vec::new();
        let mut shown = Shown::None;
        let mut flush = |group: &mut Vec<String>, shown: Shown| {
            for n in group.drain(..) {
                let mut cs = n.chars();
                match (cs.next(), cs.next()) {
                    (Some(c), None) => out.push((Some(c), None, shown)),
                    _ => out.push((None, Some(n), shown)),
                }
            }
        };
        for tok in head.split_whitespace() {
            if tok.starts_with('-') {
                flush(&mut group, shown);
                shown = Shown::None;
                let (names, arg) = match tok.find(['<', '[', '=']) {
                    Some(i) => tok.split_at(i),
                    None => (tok, ""),
                };
                group = names
                    .split(['/', ';'])
                    .map(|n| n.trim_start_matches('-').to_owned())
                    .filter(|n| !n.is_empty())
                    .collect();
                if !arg.is_empty() {
                    shown = if arg.starts_with('[') {
                        Shown::Optional
                    } else {
                        Shown::Required
                    };
                }
            } else if shown == Shown::None && (tok.starts_with('<') || tok.starts_with('[')) {
                shown = if tok.starts_with('[') {
                    Shown::Optional
                } else {
                    Shown::Required
                };
            }
        }
        flush(&mut group, shown);
    }
    out
}

fn node<'t>(t: &'t Table, path: &[&str]) -> Option<&'t Node> {
    path.iter().try_fold(&t.root, |n, p| n.subs.get(*p))
}

fn find<'t>(n: &'t Node, short: Option<char>, long: Option<&str>) -> Option<&'t OptSpec> {
    n.opts.iter().find(|o| match long {
        Some(l) => o.longs.iter().any(|x| x == l),
        None => short.is_some_and(|c| o.shorts.contains(&c)),
    })
}

fn agrees(declared: Arity, shown: Shown) -> bool {
    matches!(
        (declared, shown),
        (Arity::None, Shown::None)
            | (Arity::Required, Shown::Required)
            | (Arity::Optional | Arity::OptionalNumeric, Shown::Optional)
    )
}

#[test]
fn arities_agree_with_the_installed_tools() {
    let mut failures = Vec::new();
    for (tool, path, cmd) in PROBES {
        let Some(Ok(t)) = table(tool) else {
            failures.push(format!("{tool}: no table"));
            continue;
        };
        let Some(text) = help(cmd) else {
            eprintln!("skipped {tool}: `{}` is not installed", cmd.join(" "));
            continue;
        };
        let Some(n) = node(t, path) else {
            failures.push(format!("{tool}: no node {path:?}"));
            continue;
        };
        let text = normalize(tool, &text);
        let shown = if LONG_ONLY.contains(tool) {
            parse_long_only_help(&text)
        } else {
            parse_help(&text, COBRA.contains(tool), SINGLE_DASH.contains(tool))
        };
        let (mut checked, mut missing) = (0, Vec::new());
        for (short, long, form) in &shown {
            let Some(o) = find(n, *short, long.as_deref()) else {
                let short = short.map_or(String::new(), |c| format!("-{c}"));
                missing.push(long.clone().map_or(short, |l| format!("--{l}")));
                continue;
            };
            checked += 1;
            if KNOWN
                .iter()
                .any(|(k, id, _)| k == tool && (*id == o.id || *id == "*"))
            {
                continue;
            }
            if !agrees(o.arity, *form) {
                failures.push(format!(
                    "{tool}: {} is declared {:?} but `{}` shows {form:?}",
                    o.id,
                    o.arity,
                    cmd.join(" ")
                ));
            }
        }
        eprintln!(
            "{tool}: {checked} options checked against `{}`; not in the table: {missing:?}",
            cmd.join(" ")
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
