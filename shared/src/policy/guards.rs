//! Phase-1 guards on the syntax tree: the checks that hold wherever a node appears
//! (substitutions, redirections, parameter forms, tests, loop variables, unknown syntax).
//! Each hit is a finding, and any finding makes the whole command a write.
//!
//! Only inert word forms pass: literal text, quotes without substitutions, `$NAME`,
//! `${NAME}` and the plain special parameters. The lexical net in [`super::lexical`]
//! checks the same text again without the tree.

use super::syntax::path_risk;
use super::test_expr;
use super::types::Risk;
use super::verdict::Verdict;
use super::word;
use tree_sitter::Node;

/// Node kinds the lowering understands; anything else is refused.
const KNOWN: &[&str] = &[
    "program",
    "list",
    "pipeline",
    "command",
    "command_name",
    "word",
    "string",
    "string_content",
    "raw_string",
    "ansi_c_string",
    "concatenation",
    "number",
    "simple_expansion",
    "expansion",
    "variable_name",
    "special_variable_name",
    "redirected_statement",
    "file_redirect",
    "file_descriptor",
    "heredoc_redirect",
    "heredoc_start",
    "heredoc_body",
    "heredoc_content",
    "heredoc_end",
    "herestring_redirect",
    "comment",
    "variable_assignment",
    "variable_assignments",
    "subshell",
    "compound_statement",
    "negated_command",
    "if_statement",
    "elif_clause",
    "else_clause",
    "for_statement",
    "do_group",
    "test_command",
    "test_operator",
    "unary_expression",
    "binary_expression",
    "parenthesized_expression",
    "regex",
    "extglob_pattern",
    "arithmetic_expansion",
    "brace_expression",
    "declaration_command",
    "unset_command",
    "function_definition",
    "c_style_for_statement",
    "while_statement",
    "case_statement",
    "case_item",
    "command_substitution",
    "process_substitution",
    "array",
    "ternary_expression",
    "postfix_expression",
    "unary_expression",
];

/// Walk every node once for the guards that hold wherever they appear.
pub(crate) fn scan(root: Node<'_>, src: &str, out: &mut Vec<Verdict>) {
    let mut cursor = root.walk();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            out.push(Verdict::unknown(
                "the command does not parse as shell (syntax error)",
            ));
            return;
        }
        if node.is_named() {
            match node.kind() {
                "command_substitution" => out.push(Verdict::write(
                    Risk::Medium,
                    format!(
                        "command substitution {} runs a nested command",
                        snippet(node, src)
                    ),
                )),
                "process_substitution" => out.push(Verdict::write(
                    Risk::Medium,
                    format!(
                        "process substitution {} runs a nested command",
                        snippet(node, src)
                    ),
                )),
                "file_redirect" => {
                    check_file_redirect(node, src, out);
                    check_line_breaks(node, src, out);
                }
                "arithmetic_expansion" => check_arithmetic(node, src, out),
                "expansion" | "simple_expansion" => check_parameter(node, src, out),
                "test_command" => check_test(node, src, out),
                "for_statement" => check_loop_variable(node, src, out),
                "command"
                | "redirected_statement"
                | "variable_assignment"
                | "declaration_command" => {
                    check_line_breaks(node, src, out);
                }
                // Unquoted text cannot hold a bare line break; if it does, the parser
                // joined two lines that bash runs as two commands (`cat f⏎\rm x`).
                "word" | "number" | "command_name" | "variable_name"
                    if src[node.byte_range()].replace("\\\n", "").contains('\n') =>
                {
                    out.push(Verdict::unknown(
                        "a line break inside one word: the shell would split it differently",
                    ));
                }
                kind if !KNOWN.contains(&kind) => {
                    out.push(Verdict::unknown(format!(
                        "unsupported shell syntax ({kind})"
                    )));
                }
                _ => {}
            }
        } else if node.kind() == "&" && node.parent().is_some_and(|p| p.kind() != "file_redirect") {
            out.push(Verdict::write(
                Risk::Medium,
                "background job (&) outlives the command",
            ));
        }
        for child in node.children(&mut cursor) {
            stack.push(child);
        }
    }
}

/// tree-sitter-bash sometimes joins lines that bash runs separately (`a | b | c⏎d < y`
/// parses as `c d`). A bare line break between the parts of one command means the parser
/// and the shell disagree, so the command is refused.
fn check_line_breaks(node: Node<'_>, src: &str, out: &mut Vec<Verdict>) {
    let mut cursor = node.walk();
    let mut prev_end = None;
    for child in node.children(&mut cursor) {
        if let Some(end) = prev_end {
            let gap = src.get(end..child.start_byte()).unwrap_or("");
            if gap.replace("\\\n", "").contains('\n') {
                out.push(Verdict::unknown(
                    "a line break inside one command: the shell would split it differently",
                ));
                return;
            }
        }
        prev_end = Some(child.end_byte());
    }
}

pub(crate) fn snippet(node: Node<'_>, src: &str) -> String {
    let text = &src[node.byte_range()];
    match text.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

/// Output may go only to the null device, the terminal's own streams or another descriptor.
fn check_file_redirect(node: Node<'_>, src: &str, out: &mut Vec<Verdict>) {
    let mut op = String::new();
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if !child.is_named() {
            op.push_str(child.kind());
        }
    }
    let Some(dest) = node.child_by_field_name("destination") else {
        out.push(Verdict::unknown("redirection without a target"));
        return;
    };
    let target = word::from_node(dest, src);
    let fixed = target.lit().map(str::to_owned);
    let is_fd = dest.kind() == "number" || fixed.as_deref() == Some("-");
    match op.as_str() {
        "<" | "<<<" => {
            if let Some(path) = fixed {
                if path.starts_with("/dev/tcp/") || path.starts_with("/dev/udp/") {
                    out.push(Verdict::write(
                        Risk::High,
                        format!("network connection through redirection from {path}"),
                    ));
                } else if let Some(effect) = crate::hide::effect_file(&path) {
                    out.push(Verdict::write(
                        Risk::High,
                        format!(
                            "reading {path} acts ({effect}: opening or reading it has effects)"
                        ),
                    ));
                }
            } else {
                out.push(Verdict::unknown("input redirection from a computed path"));
            }
        }
        "<&" | ">&" if is_fd => {}
        "<>" => out.push(Verdict::write(
            Risk::High,
            format!("read-write redirection to {}", target.src),
        )),
        _ => match fixed.as_deref() {
            Some("/dev/null") => {}
            Some(path) => out.push(Verdict::write(
                path_risk(path),
                format!("output redirection to {path}"),
            )),
            None => out.push(Verdict::write(
                Risk::Medium,
                format!("output redirection to computed path {}", target.src),
            )),
        },
    }
}

/// `$((…))` on plain numbers only: arithmetic evaluates names, and a name's value is
/// evaluated again, subscripts and their command substitutions included. `$[…]` is refused.
fn check_arithmetic(node: Node<'_>, src: &str, out: &mut Vec<Verdict>) {
    let inner = &src[node.byte_range()];
    let plain = inner
        .strip_prefix("$((")
        .and_then(|b| b.strip_suffix("))"))
        .is_some_and(|body| {
            body.chars().all(|c| {
                c.is_ascii_digit() || c == ' ' || c == '\t' || "+-*/%()<>=!&|^~?:".contains(c)
            })
        });
    if !plain {
        out.push(Verdict::unknown(format!(
            "arithmetic expansion {} evaluates names, whose values can run commands",
            snippet(node, src)
        )));
    }
}

/// True for `NAME`, a positional number or one special parameter character.
pub(crate) fn plain_parameter(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {
            chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        Some(c) if c.is_ascii_digit() => chars.all(|c| c.is_ascii_digit()),
        Some(c) if "@*#?-$!".contains(c) => chars.next().is_none(),
        _ => false,
    }
}

/// `$NAME` and `${NAME}` only. Every operator runs something or evaluates arithmetic:
/// `${x:-`cmd`}` (tree-sitter reads the backticks as a word), `${x@P}` (prompt expansion
/// runs `$(…)` in the value), `${!x}` and `${a[i]}` (subscripts), `${x:i}` (offsets),
/// `${#x}`, `${x/a/b}` (patterns that may hold substitutions).
fn check_parameter(node: Node<'_>, src: &str, out: &mut Vec<Verdict>) {
    let text = &src[node.byte_range()];
    let name = match node.kind() {
        "expansion" => text.strip_prefix("${").and_then(|t| t.strip_suffix('}')),
        _ => text.strip_prefix('$'),
    };
    if !name.is_some_and(plain_parameter) {
        out.push(Verdict::unknown(format!(
            "parameter expansion {} is more than a plain name",
            snippet(node, src)
        )));
    }
}

/// `[ … ]` and `[[ … ]]`: the rules of [`test_expr`] on the arguments in order.
fn check_test(node: Node<'_>, src: &str, out: &mut Vec<Verdict>) {
    let double = node.child(0).is_some_and(|c| c.kind() == "[[");
    let mut tokens = Vec::new();
    test_args(node, src, &mut tokens);
    let mut args: Vec<word::Word> = tokens.into_iter().map(|(w, _)| w).collect();
    // The brackets themselves are the first and last tokens.
    if args.len() >= 2 {
        args.remove(0);
        args.pop();
    }
    let result = if double {
        test_expr::double_bracket(&args)
    } else {
        test_expr::single_bracket(&args)
    };
    if let Err(why) = result {
        out.push(Verdict::unknown(why));
    }
}

/// Node kinds that are one argument of a test as a whole.
const TEST_WORDS: &[&str] = &[
    "word",
    "string",
    "raw_string",
    "ansi_c_string",
    "number",
    "simple_expansion",
    "expansion",
    "concatenation",
    "arithmetic_expansion",
    "command_substitution",
    "regex",
    "extglob_pattern",
    "test_operator",
    "variable_name",
];

/// The arguments of a test in source order; tokens with no gap between them are one word.
fn test_args(node: Node<'_>, src: &str, args: &mut Vec<(word::Word, usize)>) {
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        let unit = TEST_WORDS.contains(&child.kind()) || !child.is_named();
        if !unit {
            test_args(child, src, args);
            continue;
        }
        let w = if child.is_named() && child.kind() != "test_operator" {
            word::from_node(child, src)
        } else {
            word::Word::literal(&src[child.byte_range()])
        };
        match args.last_mut() {
            Some((prev, end)) if *end == child.start_byte() => {
                // Joined by the shell into one word: keep it, but as text we do not know.
                let joined = format!("{}{}", prev.src, w.src);
                *prev = word::Word::dynamic(&joined);
                *end = child.end_byte();
            }
            _ => args.push((w, child.end_byte())),
        }
    }
}

/// A `for` loop assigns its variable in the running shell, and a variable that is already
/// exported reaches every later program: `for PATH in /tmp/x; do ls; done` runs
/// `/tmp/x/ls`. Only lower-case names that are not proxy settings are accepted (the shell's
/// own variables and the usual exported ones are upper case).
fn check_loop_variable(node: Node<'_>, src: &str, out: &mut Vec<Verdict>) {
    if node.child(0).is_none_or(|k| k.kind() != "for") {
        out.push(Verdict::unknown(
            "select waits for a choice on standard input and loops",
        ));
        return;
    }
    let Some(var) = node.child_by_field_name("variable") else {
        out.push(Verdict::unknown("for loop without a plain variable"));
        return;
    };
    let name = &src[var.byte_range()];
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !plain || name.contains("proxy") {
        out.push(Verdict::write(
            Risk::Medium,
            format!("for loop variable {name} may be an exported setting other programs read"),
        ));
    }
}
