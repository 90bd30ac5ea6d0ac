//! The engine: reads every word of a command with a tool's table, as the tool's parser
//! would, and records every option occurrence, the subcommand path and the operands.
//! It never decides a class (that is [`super::judge`]) and never panics: a word it cannot
//! place is a denial with a reason.

use super::table::{Arity, Effect, Node, OptSpec, Table};
use crate::policy::word::Word;

/// An option's value as the tool receives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    /// Fixed text.
    Fixed(String),
    /// Decided by the shell at run time (its source).
    Dynamic(String),
}

/// One option occurrence.
#[derive(Debug, Clone)]
pub(crate) struct Occ<'t> {
    pub opt: &'t OptSpec,
    /// As written (`-o`, `--outp`), for reasons.
    pub written: String,
    pub value: Option<Value>,
    /// The request it belongs to (curl `--next` starts a new one).
    pub section: usize,
}

impl Occ<'_> {
    /// The fixed value, if any.
    pub fn fixed(&self) -> Option<&str> {
        match &self.value {
            Some(Value::Fixed(v)) => Some(v),
            _ => None,
        }
    }
}

/// What the engine found.
#[derive(Debug)]
pub(crate) struct Walk<'a, 't> {
    pub occs: Vec<Occ<'t>>,
    /// Operands after the subcommand path, with their request section.
    pub operands: Vec<(usize, &'a Word)>,
    /// Index in the arguments of each operand.
    pub operand_index: Vec<usize>,
    /// The subcommand path (`["rollout", "status"]`).
    pub path: Vec<String>,
    /// The deepest node reached.
    pub node: &'t Node,
    /// Index in the arguments just after the last subcommand word (for `delegate`).
    pub after_sub: usize,
    /// The first reason the words are not what the table allows: an undeclared or
    /// ambiguous option, a missing value, an unknown or computed subcommand.
    pub deny: Option<String>,
    /// The first expansion that could be an option (for the expansion gate).
    pub dynamic_src: Option<String>,
}

impl<'t> Walk<'_, 't> {
    /// True when the option `id` was given (anywhere, any request).
    pub fn has(&self, id: &str) -> bool {
        self.occs.iter().any(|o| o.opt.id == id)
    }

    /// Every occurrence of the option `id`.
    pub fn all<'s>(&'s self, id: &'s str) -> impl Iterator<Item = &'s Occ<'t>> + 's {
        self.occs.iter().filter(move |o| o.opt.id == id)
    }

    fn refuse(&mut self, why: String) {
        self.deny.get_or_insert(why);
    }

    fn mark_dynamic(&mut self, w: &Word) {
        self.dynamic_src.get_or_insert_with(|| w.src.clone());
    }
}

/// Walk `args` (without the program name) with `table`.
pub(crate) fn walk<'a, 't>(args: &'a [Word], table: &'t Table) -> Walk<'a, 't> {
    let mut w = Walk {
        occs: Vec::new(),
        operands: Vec::new(),
        operand_index: Vec::new(),
        path: Vec::new(),
        node: &table.root,
        after_sub: 0,
        deny: None,
        dynamic_src: None,
    };
    let mut scope: Vec<&'t Node> = vec![&table.root];
    let mut only_operands = false;
    let mut section = 0;
    let mut i = 0;
    while i < args.len() {
        let word = &args[i];
        let node = w.node;
        let text = match word.fixed() {
            Some(t) if !only_operands && t.len() > 1 && t.starts_with('-') => t,
            _ => {
                let operand = match word.fixed() {
                    Some(_) => true,
                    None if only_operands => !word.may_split(),
                    None => !word.may_be_option(),
                };
                if !operand {
                    w.mark_dynamic(word);
                }
                // An optional subcommand is only the first word after its parent; a
                // computed word there may name one.
                if node.subcommand_optional && i == w.after_sub && word.fixed().is_none() {
                    w.refuse(format!(
                        "the subcommand {} is computed at run time",
                        word.src
                    ));
                    return w;
                }
                let optional_miss =
                    node.subcommand_optional && (i != w.after_sub || sub_of(node, word).is_none());
                if !node.subs.is_empty() && !optional_miss {
                    match sub_of(node, word) {
                        Some(sub) => {
                            w.path.push(word.fixed().unwrap_or_default().to_owned());
                            w.node = sub;
                            w.after_sub = i + 1;
                            if !sub.inherit {
                                // A subcommand with its own parser (git) reads its own
                                // options again, even after the parent's `--`.
                                scope.clear();
                                only_operands = false;
                            }
                            scope.push(sub);
                        }
                        None => {
                            let what = word.fixed().map_or_else(
                                || format!("{} is computed at run time", word.src),
                                |t| format!("{t} is not in its table"),
                            );
                            w.refuse(format!("the subcommand {what}"));
                            return w;
                        }
                    }
                    if w.node.class == super::Class::Delegate {
                        return w;
                    }
                } else {
                    w.operands.push((section, word));
                    w.operand_index.push(i);
                    if node.stop_at_operand {
                        only_operands = true;
                    }
                }
                i += 1;
                continue;
            }
        };
        if text == "--" {
            only_operands = true;
            i += 1;
            continue;
        }
        let found = if let Some(long) = text.strip_prefix("--") {
            long_option(&mut w, &scope, long, "--", args, &mut i)
        } else if long_only_first(&scope, &text[1..]) {
            long_option(&mut w, &scope, &text[1..], "-", args, &mut i)
        } else {
            short_options(&mut w, &scope, &text[1..], args, &mut i)
        };
        for occ in found {
            let next = occ.opt.effect == Effect::Next;
            w.occs.push(Occ { section, ..occ });
            if next {
                section += 1;
            }
        }
        i += 1;
    }
    w
}

/// The subcommand `word` names under `node`, if any.
fn sub_of<'t>(node: &'t Node, word: &Word) -> Option<&'t Node> {
    word.fixed().and_then(|t| node.subs.get(t))
}

/// Every option visible in `scope`, innermost first.
fn visible<'s, 't>(scope: &'s [&'t Node]) -> impl Iterator<Item = &'t OptSpec> + 's {
    scope.iter().rev().flat_map(|n| n.opts.iter())
}

/// The value after an option: attached, or (for a required one) the next word.
fn value_of(w: &mut Walk<'_, '_>, args: &[Word], i: &mut usize) -> Option<Value> {
    *i += 1;
    let word = args.get(*i)?;
    if word.may_split() {
        w.mark_dynamic(word);
    }
    Some(match word.fixed() {
        Some(t) => Value::Fixed(t.to_owned()),
        None => Value::Dynamic(word.src.clone()),
    })
}

/// How a long name resolves: an exact name wins, else a unique prefix (when the node
/// abbreviates).
enum Long<'t> {
    Found(&'t OptSpec),
    Unknown,
    Ambiguous,
}

fn lookup_long<'t>(scope: &[&'t Node], name: &str) -> Long<'t> {
    let abbreviate = scope.last().is_some_and(|n| n.abbreviate);
    if let Some(o) = visible(scope).find(|o| o.longs.iter().any(|l| l == name)) {
        return Long::Found(o);
    }
    if !abbreviate {
        return Long::Unknown;
    }
    let mut hits: Vec<&'t OptSpec> = visible(scope)
        .filter(|o| o.longs.iter().any(|l| l.starts_with(name)))
        .collect();
    hits.dedup_by(|a, b| a.id == b.id);
    match hits.as_slice() {
        [one] => Long::Found(one),
        [] => Long::Unknown,
        _ => Long::Ambiguous,
    }
}

/// For a getopt_long_only node, whether a one-dash word (`body` without its dash) is read
/// as a long option: always, unless it is one declared short letter alone, or no long
/// option matches it and its first letter is a short option (glibc's fallback). An
/// ambiguous prefix is read as a long option, which the walk then denies.
fn long_only_first(scope: &[&Node], body: &str) -> bool {
    if !scope.last().is_some_and(|n| n.long_only) {
        return false;
    }
    let short = |c: char| visible(scope).any(|o| o.shorts.contains(&c));
    let mut cs = body.chars();
    let first = cs.next();
    if cs.next().is_none() && first.is_some_and(short) {
        return false;
    }
    let name = body.split_once('=').map_or(body, |(n, _)| n);
    match lookup_long(scope, name) {
        Long::Found(_) | Long::Ambiguous => true,
        Long::Unknown => !first.is_some_and(short),
    }
}

fn long_option<'t>(
    w: &mut Walk<'_, 't>,
    scope: &[&'t Node],
    long: &str,
    dash: &str,
    args: &[Word],
    i: &mut usize,
) -> Vec<Occ<'t>> {
    let (name, attached) = match long.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (long, None),
    };
    let opt = match lookup_long(scope, name) {
        Long::Found(o) => o,
        Long::Unknown => {
            w.refuse(format!("{dash}{name} is not an option in its table"));
            return Vec::new();
        }
        Long::Ambiguous => {
            w.refuse(format!(
                "{dash}{name} is ambiguous: it abbreviates several options"
            ));
            return Vec::new();
        }
    };
    let value = match (opt.arity, attached) {
        (Arity::None, Some(_)) => {
            // getopt_long refuses `--flag=value`; a tool that does not split at `=`
            // (sqlite3) sees an unknown option. Either way it is not this flag.
            w.refuse(format!("{dash}{name} takes no value"));
            return Vec::new();
        }
        (_, Some(v)) => Some(Value::Fixed(v.to_owned())),
        (Arity::Required, None) => {
            let v = value_of(w, args, i);
            if v.is_none() {
                w.refuse(format!("{dash}{name} needs a value"));
            }
            v
        }
        (Arity::OptionalNumeric, None) if next_numeric(args, *i) => value_of(w, args, i),
        _ => None,
    };
    vec![Occ {
        opt,
        written: format!("{dash}{name}"),
        value,
        section: 0,
    }]
}

fn short_options<'t>(
    w: &mut Walk<'_, 't>,
    scope: &[&'t Node],
    cluster: &str,
    args: &[Word],
    i: &mut usize,
) -> Vec<Occ<'t>> {
    let bundle = scope.last().is_some_and(|n| n.bundle);
    let mut out = Vec::new();
    for (at, c) in cluster.char_indices() {
        let Some(opt) = visible(scope).find(|o| o.shorts.contains(&c)) else {
            w.refuse(format!("-{c} is not an option in its table"));
            return out;
        };
        let rest = &cluster[at + c.len_utf8()..];
        let value = match opt.arity {
            Arity::None if !rest.is_empty() && !bundle => {
                w.refuse(format!("-{cluster} is not an option in its table"));
                return out;
            }
            Arity::None => None,
            Arity::Required if rest.is_empty() => {
                let v = value_of(w, args, i);
                if v.is_none() {
                    w.refuse(format!("-{c} needs a value"));
                }
                v
            }
            Arity::Required | Arity::Optional | Arity::OptionalNumeric if !rest.is_empty() => {
                Some(Value::Fixed(rest.to_owned()))
            }
            Arity::OptionalNumeric if next_numeric(args, *i) => value_of(w, args, i),
            Arity::Optional | Arity::OptionalNumeric | Arity::Required => None,
        };
        let takes = opt.arity != Arity::None;
        out.push(Occ {
            opt,
            written: format!("-{c}"),
            value,
            section: 0,
        });
        if takes {
            break;
        }
    }
    out
}

/// True when the word after `i` is a count or a boot for an `OptionalNumeric` option.
/// Such a word can never be an option of the tools that use this arity (none has digit
/// options), so taking it cannot hide one.
fn next_numeric(args: &[Word], i: usize) -> bool {
    let Some(t) = args.get(i + 1).and_then(|w| w.lit()) else {
        return false;
    };
    let signed = |s: &str| {
        let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
    };
    let id = |s: &str| s.len() == 32 && s.bytes().all(|b| b.is_ascii_hexdigit());
    t == "all"
        || signed(t)
        || id(t)
        || t.get(..32)
            .is_some_and(|head| id(head) && signed(t.get(32..).unwrap_or("")))
}
