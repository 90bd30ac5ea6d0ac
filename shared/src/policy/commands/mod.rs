//! Phases 2–5 for one simple command: known write patterns, read-only by construction,
//! content inspection, and the conservative fallback. Each module owns a family of tools;
//! within a rule, write patterns are always checked before read forms.

/// `cmd.walk(tool)` ([`Cmd::walk`]: the command read with the tool's option table), or
/// return its refusal from the calling rule; `walk!(cmd, tool, Some)` wraps the refusal
/// for a rule that answers `Option<Verdict>`.
macro_rules! walk {
    ($cmd:expr, $tool:expr) => {
        match $cmd.walk($tool) {
            Ok(w) => w,
            Err(v) => return v,
        }
    };
    ($cmd:expr, $tool:expr, $wrap:path) => {
        match $cmd.walk($tool) {
            Ok(w) => w,
            Err(v) => return $wrap(v),
        }
    };
}

mod awk;
pub(crate) mod catalog;
mod cluster;
mod configtest;
mod containers;
mod databases;
mod docker;
mod files;
mod http;
mod iproute;
mod kubernetes;
mod misc;
mod netmgr;
mod network;
mod packages;
mod parted;
mod proxmox;
mod redis;
mod report_only;
mod sed;
mod shell;
mod sql;
mod sql_functions;
mod storage;
mod system;
mod systemd;
mod text;
mod vcs;
mod wrappers;
mod zfs;

#[cfg(test)]
mod raw_option_text;

use super::args::{self, Parsed, Spec};
use super::engine::Ctx;
use super::options::{self, Walk};
use super::types::{Risk, UnboundedCategory};
use super::verdict::Verdict;
use super::word::Word;
use catalog::{PURE_READERS, WRITERS};
use std::cell::{Cell, RefCell};

/// One simple command being classified.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cmd<'a> {
    pub name: &'a str,
    pub args: &'a [Word],
    pub ctx: Ctx,
    /// What the rule's option parsing saw, for the expansion gate.
    pub scan: &'a Scan,
}

/// Whether a rule parsed its options, and the first expansion it found where an option
/// could stand (see [`gate`]).
#[derive(Debug, Default)]
pub(crate) struct Scan {
    parsed: Cell<bool>,
    dynamic: RefCell<Option<String>>,
    harmless: Cell<bool>,
}

impl<'a> Cmd<'a> {
    /// Parse the arguments with a tool's option spec.
    pub fn parse(&self, spec: Spec<'_>) -> Parsed<'a> {
        self.parse_args(self.args, spec)
    }

    /// Parse part of the arguments (after a subcommand, say) with a tool's option spec.
    pub fn parse_args<'b>(&self, args: &'b [Word], spec: Spec<'_>) -> Parsed<'b> {
        let p = args::parse(args, spec);
        self.scan.parsed.set(true);
        if let Some(src) = &p.dynamic_src {
            self.scan
                .dynamic
                .borrow_mut()
                .get_or_insert_with(|| src.clone());
        }
        p
    }

    /// Walk the arguments with `tool`'s option table (`policy::options`), noting for
    /// the expansion gate where an expansion could be an option. A missing or malformed
    /// table is a denial.
    pub fn walk(&self, tool: &str) -> Result<Walk<'a, 'static>, Verdict> {
        self.walk_args(self.args, tool)
    }

    /// [`Cmd::walk`] over part of the arguments.
    pub fn walk_args<'b>(
        &self,
        args: &'b [Word],
        tool: &str,
    ) -> Result<Walk<'b, 'static>, Verdict> {
        let table = match options::table(tool) {
            Some(Ok(t)) => t,
            Some(Err(e)) => {
                return Err(Verdict::unknown(format!(
                    "{tool}: its option table is malformed ({e})"
                )));
            }
            None => return Err(Verdict::unknown(format!("{tool}: no option table"))),
        };
        let w = options::walk(args, table);
        self.scan.parsed.set(true);
        if let Some(src) = &w.dynamic_src {
            self.scan
                .dynamic
                .borrow_mut()
                .get_or_insert_with(|| src.clone());
        }
        Ok(w)
    }

    /// Walk with `tool`'s table and judge: the whole rule for a tool whose table says
    /// everything.
    pub fn by_table(&self, tool: &str) -> Verdict {
        match self.walk(tool) {
            Ok(w) => options::judge(tool, &w),
            Err(v) => v,
        }
    }

    /// The rule's word that every option this form accepts only reads and runs nothing,
    /// so an expansion is acceptable even where an option could stand.
    pub fn options_only_read(&self) {
        self.scan.harmless.set(true);
    }

    /// The same tool with other arguments (a subcommand's), sharing the expansion scan.
    pub fn with_args(&self, name: &'a str, args: &'a [Word]) -> Cmd<'a> {
        Cmd {
            name,
            args,
            ..*self
        }
    }

    /// The command as written, arguments' sources joined.
    pub fn src(&self) -> String {
        let mut out = self.name.to_owned();
        for a in self.args {
            out.push(' ');
            out.push_str(&a.src);
        }
        out
    }

    /// The command rebuilt without the arguments `drop` rejects, with `extra` added after
    /// the program name.
    pub fn rebuilt(&self, drop: impl Fn(&Word) -> bool, extra: &[&str]) -> String {
        let mut parts: Vec<String> = vec![self.name.to_owned()];
        parts.extend(extra.iter().map(|s| (*s).to_owned()));
        parts.extend(self.args.iter().filter(|w| !drop(w)).map(|w| w.src.clone()));
        parts.join(" ")
    }

    /// The command rebuilt without the options `shorts` and `longs` (see
    /// [`args::names_option`]), with `extra` added after the program name.
    pub fn rebuilt_without(
        &self,
        shorts: &str,
        longs: &[&str],
        exact_long: bool,
        extra: &[&str],
    ) -> String {
        self.rebuilt(|w| args::names_option(w, shorts, longs, exact_long), extra)
    }

    /// True when any argument is decided by the shell at run time.
    pub fn has_dynamic(&self) -> bool {
        self.args.iter().any(Word::is_dynamic)
    }

    /// A write because an argument could be an option we cannot see.
    pub fn dynamic_write(&self) -> Verdict {
        Verdict::unknown(format!(
            "{}: an argument depends on an expansion and could be a write flag",
            self.name
        ))
    }
}

/// Classify a simple command by its program.
pub(crate) fn classify(program: &str, args: &[Word], ctx: Ctx) -> Verdict {
    let scan = Scan::default();
    let cmd = Cmd {
        name: program,
        args,
        ctx,
        scan: &scan,
    };
    if let Some(v) = shell::classify(&cmd) {
        return gate(&cmd, v);
    }
    if let Some(v) = wrappers::classify(&cmd) {
        return v;
    }
    let families: [fn(&Cmd<'_>) -> Option<Verdict>; 14] = [
        misc::classify,
        databases::classify,
        files::classify,
        text::classify,
        vcs::classify,
        systemd::classify,
        containers::classify,
        proxmox::classify,
        cluster::classify,
        configtest::classify,
        storage::classify,
        network::classify,
        system::classify,
        packages::classify,
    ];
    for family in families {
        if let Some(v) = family(&cmd) {
            return gate(&cmd, v);
        }
    }
    if PURE_READERS.contains(&program) {
        let v = Verdict::read(format!("{program} only reads"));
        return if cmd.has_dynamic() {
            v.because(format!(
                "an expansion is accepted anywhere: every option of {program} only reads"
            ))
        } else {
            v
        };
    }
    if let Some(v) = interactive(&cmd) {
        return v;
    }
    if WRITERS.contains(&program) {
        return Verdict::write(Risk::Medium, format!("{program} changes state"));
    }
    Verdict::unknown(format!("{program} is not a known read-only command"))
}

/// Phase 3 for expansions: a read stands only if no word the shell decides at run time
/// sits where the tool reads options (`rg "$X" pat` may be `rg --pre=sh pat`). A rule that
/// parsed its options says where they are; for one that did not, every expansion that
/// could start with `-` or split counts, unless it follows a literal `--`.
fn gate(cmd: &Cmd<'_>, v: Verdict) -> Verdict {
    if v.is_write() {
        return v;
    }
    if cmd.scan.harmless.get() {
        return if cmd.has_dynamic() {
            v.because(format!(
                "{}: an expansion is accepted anywhere, every option of this form only reads",
                cmd.name
            ))
        } else {
            v
        };
    }
    let found = if cmd.scan.parsed.get() {
        cmd.scan.dynamic.borrow().clone()
    } else {
        cmd.args
            .iter()
            .take_while(|w| w.lit() != Some("--"))
            .find(|w| w.may_be_option())
            .filter(|w| w.is_dynamic())
            .map(|w| w.src.clone())
    };
    match found {
        Some(src) => Verdict::unknown(format!(
            "{}: {src} is expanded at run time where {} reads options, so it could be any \
             option; an expansion is accepted only as an operand (after --, or quoted after \
             fixed text that does not start with -)",
            cmd.name, cmd.name
        )),
        None if cmd.has_dynamic() => v.because(format!(
            "{}: every expansion is an operand, not an option",
            cmd.name
        )),
        None => v,
    }
}

/// Interactive programs: pagers, editors, full-screen monitors.
fn interactive(cmd: &Cmd<'_>) -> Option<Verdict> {
    let file = cmd.args.iter().rev().find(|w| !w.text.starts_with('-'));
    let view = file.map(|f| format!("cat {}", f.src));
    let (category, rewrite, write) = match cmd.name {
        "less" | "more" | "most" | "pg" | "view" | "zless" | "zmore" | "bzless" | "xzless"
        | "bzmore" => (UnboundedCategory::Pager, view, false),
        "vi" | "vim" | "nvim" | "nano" | "emacs" | "pico" | "joe" | "mcedit" | "ed" | "ex"
        | "micro" | "jed" | "sensible-editor" | "editor" | "visudo" | "vipw" | "vigr"
        | "sudoedit" => (UnboundedCategory::Pager, view, true),
        "htop" | "btop" | "atop" | "glances" | "nmon" | "iftop" | "nethogs" | "bmon" | "nload"
        | "k9s" | "ctop" | "lazydocker" | "mc" | "ranger" | "tmux" | "screen" | "byobu"
        | "cgdisk" | "cfdisk" | "nmtui" | "alsamixer" | "ncdu" | "powertop" => (
            UnboundedCategory::Tty,
            Some("top -b -n 1".to_owned())
                .filter(|_| matches!(cmd.name, "htop" | "btop" | "atop" | "glances" | "nmon")),
            matches!(
                cmd.name,
                "mc" | "ranger"
                    | "tmux"
                    | "screen"
                    | "byobu"
                    | "cgdisk"
                    | "cfdisk"
                    | "nmtui"
                    | "alsamixer"
                    | "ncdu"
                    | "powertop"
            ),
        ),
        _ => return None,
    };
    let base = if write {
        Verdict::write(
            Risk::Medium,
            format!("{} is interactive and can change files", cmd.name),
        )
    } else {
        Verdict::read(format!("{} is interactive", cmd.name))
    };
    Some(base.unbounded(category, rewrite))
}
