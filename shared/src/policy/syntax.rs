//! Parsing with tree-sitter-bash and lowering the tree to simple commands.
//!
//! This is phase 1 of the contract: anything that can change state through the shell
//! itself (redirections, substitutions, assignments, background jobs, definitions) or that
//! the classifier does not understand becomes a finding, and any finding makes the whole
//! command a write. The source first passes the lexical net ([`super::lexical`]), then the
//! tree passes the node guards ([`super::guards`]); lowering here refuses the statements
//! that change the shell itself.

use super::guards::{self, snippet};
use super::lexical;
use super::types::Risk;
use super::verdict::Verdict;
use super::word::{self, Word};
use std::cell::RefCell;
use std::ops::Range;
use tree_sitter::{Node, Parser, Tree};

/// One simple command: its words (the first is the program) and where it stands.
#[derive(Debug, Clone)]
pub(crate) struct SimpleCommand {
    pub words: Vec<Word>,
    pub range: Range<usize>,
    /// Which pipeline the command belongs to (every command has its own when alone).
    pub pipeline: usize,
    /// Standard input comes from a pipe, a file, a here-document or a here-string.
    pub stdin_fed: bool,
}

/// A lowered shell script.
#[derive(Debug, Default)]
pub(crate) struct Script {
    pub commands: Vec<SimpleCommand>,
    /// Phase-1 findings; each is a write.
    pub findings: Vec<Verdict>,
    pipelines: usize,
}

/// Where a statement stands: its pipeline and position, and whether its input is fed.
#[derive(Debug, Clone, Copy)]
struct Place {
    pipeline: usize,
    fed: bool,
    depth: usize,
}

/// Statements nested deeper than this are refused rather than walked.
const MAX_NESTING: usize = 64;

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

fn parse_tree(src: &str) -> Option<Tree> {
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .ok()?;
            *slot = Some(parser);
        }
        slot.as_mut()?.parse(src, None)
    })
}

/// Parse and lower a script. Never panics; unparseable input is a finding.
pub(crate) fn parse(src: &str) -> Script {
    let mut script = Script::default();
    let Some(tree) = parse_tree(src) else {
        script
            .findings
            .push(Verdict::unknown("the shell parser gave up on this command"));
        return script;
    };
    if let Err(why) = lexical::check(src) {
        script
            .findings
            .push(Verdict::unknown(format!("not proved inert: {why}")));
    }
    let root = tree.root_node();
    guards::scan(root, src, &mut script.findings);
    if script.findings.is_empty() {
        let place = script.place(false);
        lower(root, src, &mut script, place);
    }
    script
}

/// Risk of writing to a path: system locations are high.
pub(crate) fn path_risk(path: &str) -> Risk {
    const SYSTEM: &[&str] = &[
        "/etc", "/boot", "/dev", "/usr", "/bin", "/sbin", "/lib", "/root", "/var/lib", "/proc",
        "/sys",
    ];
    if path == "/"
        || SYSTEM
            .iter()
            .any(|p| path == *p || path.starts_with(&format!("{p}/")))
    {
        Risk::High
    } else {
        Risk::Medium
    }
}

impl Script {
    /// A new pipeline.
    fn place(&mut self, fed: bool) -> Place {
        self.pipelines += 1;
        Place {
            pipeline: self.pipelines,
            fed,
            depth: 0,
        }
    }
}

/// Lower statements to simple commands; refuse forms that change the shell itself.
fn lower(node: Node<'_>, src: &str, script: &mut Script, place: Place) {
    if place.depth > MAX_NESTING {
        script.findings.push(Verdict::unknown(
            "shell constructs nested too deeply to inspect",
        ));
        return;
    }
    let place = Place {
        depth: place.depth + 1,
        ..place
    };
    let mut cursor = node.walk();
    match node.kind() {
        "pipeline" => {
            let id = Place {
                depth: place.depth,
                ..script.place(place.fed)
            };
            for (position, child) in node.named_children(&mut cursor).enumerate() {
                let fed = place.fed || position > 0;
                lower(child, src, script, Place { fed, ..id });
            }
        }
        "subshell" | "compound_statement" | "negated_command" => {
            for child in node.named_children(&mut cursor) {
                lower(child, src, script, place);
            }
        }
        "program" | "list" | "do_group" | "if_statement" | "elif_clause" | "else_clause" => {
            for child in node.named_children(&mut cursor) {
                let own = script.place(place.fed);
                lower(
                    child,
                    src,
                    script,
                    Place {
                        depth: place.depth,
                        ..own
                    },
                );
            }
        }
        "redirected_statement" => {
            let mut inner = node.walk();
            let fed = place.fed
                || node.children(&mut inner).any(|c| {
                    matches!(c.kind(), "heredoc_redirect" | "herestring_redirect")
                        || (c.kind() == "file_redirect" && feeds_stdin(c, src))
                });
            for child in node.named_children(&mut cursor) {
                lower(child, src, script, Place { fed, ..place });
            }
            if let Some(body) = node.child_by_field_name("body") {
                check_feeds(node, body, src, script);
            }
        }
        "heredoc_redirect" => {
            // A pipeline or list can follow the here-document start on its line.
            for child in node.named_children(&mut cursor) {
                if !matches!(
                    child.kind(),
                    "heredoc_start" | "heredoc_body" | "heredoc_end"
                ) {
                    lower(child, src, script, place);
                }
            }
        }
        "for_statement" => {
            if let Some(body) = node.child_by_field_name("body") {
                lower(body, src, script, place);
            }
        }
        "command" => lower_command(node, src, script, place),
        "comment" | "test_command" | "file_redirect" | "herestring_redirect" => {}
        "variable_assignment" | "variable_assignments" => script.findings.push(Verdict::write(
            Risk::Medium,
            format!(
                "variable assignment {} changes the shell environment",
                snippet(node, src)
            ),
        )),
        "declaration_command" | "unset_command" => script.findings.push(Verdict::write(
            Risk::Medium,
            format!("{} changes the shell environment", snippet(node, src)),
        )),
        "function_definition" => script.findings.push(Verdict::write(
            Risk::Medium,
            "function definition can shadow any command",
        )),
        "while_statement" | "c_style_for_statement" => script.findings.push(Verdict::unknown(
            "loop that may not terminate (while/until/for ((…)))",
        )),
        kind => script.findings.push(Verdict::unknown(format!(
            "unsupported shell syntax ({kind})"
        ))),
    }
}

fn lower_command(node: Node<'_>, src: &str, script: &mut Script, place: Place) {
    let mut fed = place.fed;
    let mut words = Vec::new();
    let mut cursor = node.walk();
    for (i, child) in node.children(&mut cursor).enumerate() {
        let field = node.field_name_for_child(i as u32);
        match (field, child.kind()) {
            (_, "variable_assignment") => script.findings.push(Verdict::write(
                Risk::Medium,
                format!(
                    "assignment {} changes the command's environment",
                    snippet(child, src)
                ),
            )),
            (Some("name"), _) => {
                let inner = child.named_child(0).unwrap_or(child);
                words.push(word::from_node(inner, src));
            }
            (Some("argument"), _) => words.push(word::from_node(child, src)),
            (_, "herestring_redirect" | "heredoc_redirect") => {
                fed = true;
                check_feeds(node, node, src, script);
                if child.kind() == "heredoc_redirect" {
                    lower(child, src, script, place);
                }
            }
            (_, "file_redirect") if feeds_stdin(child, src) => fed = true,
            _ => {}
        }
    }
    if !words.is_empty() {
        script.commands.push(SimpleCommand {
            words,
            range: node.byte_range(),
            pipeline: place.pipeline,
            stdin_fed: fed,
        });
    }
}

/// True when an input redirection gives the command something to read: anything but
/// `< /dev/null` (an empty input, the same as the closed one a read gets).
fn feeds_stdin(redirect: Node<'_>, src: &str) -> bool {
    let text = src[redirect.byte_range()].trim_start_matches(char::is_numeric);
    if !text.starts_with('<') {
        return false;
    }
    let plain_input = !(text.starts_with("<<") || text.starts_with("<&") || text.starts_with("<>"));
    let null = redirect
        .child_by_field_name("destination")
        .map(|d| word::from_node(d, src))
        .is_some_and(|w| w.lit() == Some("/dev/null"));
    !(plain_input && null)
}

/// Programs that execute what they read on standard input.
const STDIN_RUNNERS: &[&str] = &[
    "sh",
    "bash",
    "dash",
    "zsh",
    "ksh",
    "ash",
    "fish",
    "busybox",
    "python",
    "python3",
    "perl",
    "ruby",
    "node",
    "php",
    "lua",
    "tclsh",
    "expect",
    "osascript",
    "pwsh",
    "sudo",
    "su",
    "at",
    "batch",
    "crontab",
    "xargs",
    "env",
];

/// A here-document or here-string that feeds a shell is refused.
fn check_feeds(stmt: Node<'_>, body: Node<'_>, src: &str, script: &mut Script) {
    let mut cursor = stmt.walk();
    let feeds = stmt
        .children(&mut cursor)
        .any(|c| matches!(c.kind(), "heredoc_redirect" | "herestring_redirect"));
    if !feeds {
        return;
    }
    let name = body
        .child_by_field_name("name")
        .map(|n| word::from_node(n.named_child(0).unwrap_or(n), src));
    let program = name
        .as_ref()
        .and_then(|w| w.fixed())
        .map(|n| n.rsplit('/').next().unwrap_or(n));
    if program.is_none_or(|p| STDIN_RUNNERS.contains(&p)) {
        script.findings.push(Verdict::write(
            Risk::High,
            format!(
                "here-document feeds a shell ({})",
                program.unwrap_or("computed program")
            ),
        ));
    }
}
