//! The command classifier: decides whether a shell command is provably read-only and
//! whether it ends by itself.
//!
//! [`classify`] parses the command with tree-sitter-bash and runs the phases of the
//! contract in order: (1) mutation-capability guards on the shell syntax itself
//! (`syntax`), then per simple command (2) known write patterns, (3) read-only by
//! construction, (4) content inspection (SQL, redis-cli, sed and awk programs, curl flags)
//! and (5) the conservative fallback (`commands`). A hit in (1) or (2) can never be undone
//! by a later phase: every part of a compound command must be read-only on its own.

mod args;
mod commands;
mod engine;
mod guards;
mod lexical;
mod options;
mod producer;
mod reach;
mod syntax;
mod test_expr;
mod types;
mod verdict;
mod word;

pub use reach::{Reach, reach};
pub use types::{Boundedness, Classification, Intent, Risk, UnboundedCategory};

use verdict::Verdict;

/// Commands longer than this are not inspected (and so are never read-only).
pub const MAX_COMMAND_BYTES: usize = 16 * 1024;

/// Classify one shell command string. Pure and deterministic.
pub fn classify(command: &str) -> Classification {
    let verdict = if command.len() > MAX_COMMAND_BYTES {
        Verdict::unknown(format!(
            "command longer than {MAX_COMMAND_BYTES} bytes is not inspected"
        ))
    } else if let Some(c) = command.chars().find(|c| !allowed_char(*c)) {
        Verdict::unknown(format!(
            "command contains the character U+{:04X}, which no command needs",
            c as u32
        ))
    } else {
        engine::classify_script(command, engine::Ctx::root())
    };
    verdict.into_classification()
}

/// Characters passed to the shell parser. Control characters other than tab and line
/// breaks have no place in a command, and tree-sitter-bash's scanner crashes on some code
/// points above U+3FFFF (found by the fuzz tests: `{` followed by U+109168).
fn allowed_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || (!c.is_control() && (c as u32) < 0x3_0000)
}

#[cfg(test)]
mod tests;
