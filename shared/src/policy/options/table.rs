//! The table types: the TOML shape (`Raw…`, read with serde) and the checked form the
//! engine walks (`Table`, `Node`, `OptSpec`), built once by [`Table::parse`].

use serde::Deserialize;
use std::collections::BTreeMap;

/// How many values an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arity {
    /// No value (`-v`, `--verbose`).
    None,
    /// Always a value: attached (`-oF`, `--output=F`) or the next word.
    Required,
    /// A value only when attached (`-iR`, `--replace=R`); the next word is never taken.
    Optional,
    /// A value when attached, or the next word when it is a count or a boot (a signed
    /// number, a 32-digit id with an optional offset, or `all`): journalctl `-n`, `-b`.
    OptionalNumeric,
}

/// What an option does to the command's class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Effect {
    /// Only changes what is read or how it is shown.
    #[default]
    Read,
    /// Makes the command a write.
    Write,
    /// Runs a program (a pager, a debugger, a command).
    Exec,
    /// Reads options or commands from a file nobody has seen.
    Config,
    /// Writes the file its value names.
    WriteFile,
    /// Sets the HTTP method.
    Method,
    /// Sends a request body.
    Body,
    /// Sends the request body as a query (curl `-G`), for its own request.
    Get,
    /// Starts another request with its own options (curl `--next`).
    Next,
}

/// A subcommand's class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Class {
    /// Only reads (subject to the node's constraints).
    #[default]
    Read,
    /// Changes state.
    Write,
    /// Found by the table; a Rust rule not yet converted decides from the remaining words.
    Delegate,
}

/// One option of a tool, checked.
#[derive(Debug, Clone)]
pub(crate) struct OptSpec {
    /// The name rules ask for: the first long name, or the short letter.
    pub id: String,
    pub shorts: Vec<char>,
    pub longs: Vec<String>,
    pub arity: Arity,
    pub effect: Effect,
    pub why: Option<String>,
    pub high: bool,
    /// `-` as the value means standard output (for `write-file`).
    pub dash: bool,
}

/// A tool or one of its subcommands.
#[derive(Debug, Clone, Default)]
pub(crate) struct Node {
    pub opts: Vec<OptSpec>,
    pub subs: BTreeMap<String, Node>,
    pub class: Class,
    pub high: bool,
    pub why: Option<String>,
    /// The parent's options may also follow this subcommand.
    pub inherit: bool,
    pub abbreviate: bool,
    pub bundle: bool,
    pub stop_at_operand: bool,
    /// The first word after this node may name a subcommand; any other operand is an
    /// operand of this node (git's PARSE_OPT_SUBCOMMAND_OPTIONAL: `git config get` and
    /// `git config user.name`).
    pub subcommand_optional: bool,
    /// getopt_long_only: a word with one dash is a long option first (`-oN F`, `-script`),
    /// a cluster of short options only when no long option matches it.
    pub long_only: bool,
    pub needs_one_of: Vec<String>,
    pub max_operands: Option<usize>,
    /// Operands are only read with one of these options (`git branch -l PATTERN`); without
    /// one they name something the command creates (`git branch NEW`).
    pub operands_need_one_of: Vec<String>,
    /// The class when this node has subcommands and none is given.
    pub no_sub: Class,
    /// A subcommand (path from the root) whose options this node also accepts.
    pub like: Option<String>,
}

/// A whole table: the program names and the root node.
#[derive(Debug, Clone)]
pub(crate) struct Table {
    pub tools: Vec<String>,
    pub root: Node,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawOpt {
    Names(String),
    Full(RawOptFull),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOptFull {
    names: String,
    #[serde(default)]
    effect: Effect,
    why: Option<String>,
    risk: Option<String>,
    #[serde(default)]
    dash: bool,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawNode {
    tools: Option<Vec<String>>,
    abbreviate: Option<bool>,
    bundle: Option<bool>,
    stop_at_operand: Option<bool>,
    subcommand_optional: Option<bool>,
    long_only: Option<bool>,
    inherit: Option<bool>,
    #[serde(default)]
    flags: Vec<RawOpt>,
    #[serde(default)]
    values: Vec<RawOpt>,
    #[serde(default)]
    optional: Vec<RawOpt>,
    #[serde(default)]
    optional_numeric: Vec<RawOpt>,
    #[serde(default)]
    reads: Vec<String>,
    #[serde(default)]
    writes: Vec<String>,
    #[serde(default)]
    destroys: Vec<String>,
    #[serde(default)]
    sub: BTreeMap<String, RawNode>,
    #[serde(default)]
    class: Class,
    risk: Option<String>,
    why: Option<String>,
    #[serde(default)]
    needs_one_of: Vec<String>,
    max_operands: Option<usize>,
    #[serde(default)]
    operands_need_one_of: Vec<String>,
    #[serde(default)]
    no_sub: Class,
    #[serde(default)]
    aliases: Vec<String>,
    like: Option<String>,
}

impl Table {
    /// Parse and check one table.
    pub fn parse(src: &str) -> Result<Table, String> {
        let raw: RawNode = toml::from_str(src).map_err(|e| e.to_string())?;
        let tools = raw.tools.clone().unwrap_or_default();
        if tools.is_empty() {
            return Err("`tools` names no program".into());
        }
        let defaults = Node {
            abbreviate: true,
            bundle: true,
            ..Node::default()
        };
        let mut root = compile(raw, &defaults, true)?;
        let lookup = root.clone();
        resolve_like(&mut root, &lookup)?;
        Ok(Table { tools, root })
    }
}

fn high(risk: Option<&str>) -> Result<bool, String> {
    match risk {
        None | Some("medium") => Ok(false),
        Some("high") => Ok(true),
        Some(other) => Err(format!("unknown risk {other:?}")),
    }
}

fn compile(raw: RawNode, parent: &Node, root: bool) -> Result<Node, String> {
    if root && !raw.aliases.is_empty() {
        return Err("`aliases` belongs to a subcommand".into());
    }
    if !root && raw.tools.is_some() {
        return Err("`tools` belongs at the top of a table".into());
    }
    let mut node = Node {
        opts: Vec::new(),
        subs: BTreeMap::new(),
        class: raw.class,
        high: high(raw.risk.as_deref())?,
        why: raw.why,
        inherit: raw.inherit.unwrap_or(true),
        abbreviate: raw.abbreviate.unwrap_or(parent.abbreviate),
        bundle: raw.bundle.unwrap_or(parent.bundle),
        stop_at_operand: raw.stop_at_operand.unwrap_or(false),
        subcommand_optional: raw.subcommand_optional.unwrap_or(false),
        long_only: raw.long_only.unwrap_or(parent.long_only),
        needs_one_of: raw.needs_one_of,
        max_operands: raw.max_operands,
        operands_need_one_of: raw.operands_need_one_of,
        no_sub: raw.no_sub,
        like: raw.like,
    };
    for (list, arity) in [
        (raw.flags, Arity::None),
        (raw.values, Arity::Required),
        (raw.optional, Arity::Optional),
        (raw.optional_numeric, Arity::OptionalNumeric),
    ] {
        for o in list {
            node.opts.push(option(o, arity)?);
        }
    }
    check_unique(&node.opts)?;
    for (names, class, high) in [
        (raw.reads, Class::Read, false),
        (raw.writes, Class::Write, false),
        (raw.destroys, Class::Write, true),
    ] {
        for name in names {
            let sub = Node {
                class,
                high,
                ..leaf(&node)
            };
            if node.subs.insert(name.clone(), sub).is_some() {
                return Err(format!("subcommand {name} listed twice"));
            }
        }
    }
    for (name, mut raw_sub) in raw.sub {
        let aliases = std::mem::take(&mut raw_sub.aliases);
        let sub = compile(raw_sub, &node, false).map_err(|e| format!("[sub.{name}]: {e}"))?;
        for alias in aliases.into_iter().chain(std::iter::once(name)) {
            if node.subs.insert(alias.clone(), sub.clone()).is_some() {
                return Err(format!("subcommand {alias} listed twice"));
            }
        }
    }
    for id in node.needs_one_of.iter().chain(&node.operands_need_one_of) {
        if !node.opts.iter().any(|o| &o.id == id) {
            return Err(format!("needs_one_of names {id}, not an option here"));
        }
    }
    Ok(node)
}

/// Adds to every node with `like = "PATH"` the options of the subcommand at PATH (words
/// from the root), less the names it declares itself: its own declaration wins (`git
/// blame -L` is not `git log -L`; `git stash show -u` is not log's `-u`, `-p` still is).
fn resolve_like(node: &mut Node, root: &Node) -> Result<(), String> {
    if let Some(path) = node.like.take() {
        let from = path
            .split_whitespace()
            .try_fold(root, |n, p| n.subs.get(p))
            .ok_or_else(|| format!("like names {path:?}, not a subcommand"))?;
        if from.like.is_some() {
            return Err(format!("like names {path:?}, which is itself like another"));
        }
        // An option of PATH keeps only the names this node does not declare itself.
        let mut extra = Vec::new();
        for o in &from.opts {
            let mut o = o.clone();
            o.shorts
                .retain(|c| !node.opts.iter().any(|m| m.shorts.contains(c)));
            o.longs
                .retain(|l| !node.opts.iter().any(|m| m.longs.contains(l)));
            if !o.shorts.is_empty() || !o.longs.is_empty() {
                extra.push(o);
            }
        }
        node.opts.extend(extra);
    }
    for sub in node.subs.values_mut() {
        resolve_like(sub, root)?;
    }
    Ok(())
}

/// A subcommand from a `reads`/`writes` list: no options of its own.
fn leaf(parent: &Node) -> Node {
    Node {
        inherit: true,
        abbreviate: parent.abbreviate,
        bundle: parent.bundle,
        long_only: parent.long_only,
        ..Node::default()
    }
}

fn option(raw: RawOpt, arity: Arity) -> Result<OptSpec, String> {
    let full = match raw {
        RawOpt::Names(names) => RawOptFull {
            names,
            effect: Effect::Read,
            why: None,
            risk: None,
            dash: false,
        },
        RawOpt::Full(f) => f,
    };
    let (mut shorts, mut longs) = (Vec::new(), Vec::new());
    for name in full.names.split_whitespace() {
        if let Some(long) = name.strip_prefix("--") {
            if long.is_empty() || long.contains('=') {
                return Err(format!("bad long option {name:?}"));
            }
            longs.push(long.to_owned());
        } else if let Some(short) = name.strip_prefix('-') {
            let mut cs = short.chars();
            match (cs.next(), cs.next()) {
                (Some(c), None) if c != '-' => shorts.push(c),
                _ => return Err(format!("bad short option {name:?}")),
            }
        } else {
            return Err(format!("option name {name:?} does not start with -"));
        }
    }
    let id = longs
        .first()
        .cloned()
        .or_else(|| shorts.first().map(|c| c.to_string()))
        .ok_or_else(|| format!("option {:?} has no name", full.names))?;
    let valued = matches!(
        full.effect,
        Effect::WriteFile | Effect::Method | Effect::Body
    );
    if valued && arity == Arity::None {
        return Err(format!("{id}: effect {:?} needs a value", full.effect));
    }
    Ok(OptSpec {
        id,
        shorts,
        longs,
        arity,
        effect: full.effect,
        why: full.why,
        high: high(full.risk.as_deref())?,
        dash: full.dash,
    })
}

fn check_unique(opts: &[OptSpec]) -> Result<(), String> {
    let mut seen = std::collections::BTreeSet::new();
    for o in opts {
        let names = o
            .shorts
            .iter()
            .map(|c| format!("-{c}"))
            .chain(o.longs.iter().map(|l| format!("--{l}")));
        for n in names {
            if !seen.insert(n.clone()) {
                return Err(format!("option {n} declared twice"));
            }
        }
    }
    Ok(())
}
