//! What the person types: one thread reads standard input line by line into a channel
//! (so a prompt for the next message and an approval's question share one reader), and
//! pure parsers for chat commands and approval answers.

use std::io::BufRead;

use tokio::sync::mpsc;
use tracing::debug;

/// The reason sent when a person denies without giving one.
pub const DEFAULT_DENY_REASON: &str = "denied in the terminal";

/// Starts the reader thread; the channel closes at end of input (Ctrl-D) or on an error.
///
/// A plain thread, not `spawn_blocking`: a read blocked on the terminal must not keep the
/// runtime (and so the process) from ending.
pub fn spawn_reader() -> mpsc::UnboundedReceiver<String> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            match line {
                Ok(line) => {
                    if tx.send(line).is_err() {
                        return;
                    }
                }
                Err(error) => {
                    debug!(%error, "standard input ended");
                    return;
                }
            }
        }
    });
    rx
}

/// A line typed at the chat prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// Nothing (just Enter).
    Empty,
    /// `/quit` or `/exit`.
    Quit,
    /// `/help`.
    Help,
    /// `/new`: the next message starts a new session.
    New,
    /// `/sessions`: list the sessions.
    Sessions,
    /// `/resume ID`; `None` when the id is missing.
    Resume(Option<String>),
    /// A message for the assistant (direct-mode commands such as `/read @h uptime` too).
    Message(String),
}

/// Parses a line typed at the prompt.
pub fn parse_line(line: &str) -> Line {
    let trimmed = line.trim();
    if trimmed.is_empty() {
        return Line::Empty;
    }
    let mut words = trimmed.split_whitespace();
    match words.next().unwrap_or_default() {
        "/quit" | "/exit" | "/q" => Line::Quit,
        "/help" | "/?" => Line::Help,
        "/new" => Line::New,
        "/sessions" => Line::Sessions,
        "/resume" => Line::Resume(words.next().map(str::to_owned)),
        _ => Line::Message(trimmed.to_owned()),
    }
}

/// The answer to `approve? [y/N/reason]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// `y` or `yes`.
    Approve,
    /// Anything else: with the text typed as the reason, or [`DEFAULT_DENY_REASON`].
    Deny(String),
}

/// Parses an approval answer: `y`/`yes` approves; empty, `n` or `no` denies with the
/// default reason; any other text denies with that text as the reason.
pub fn parse_answer(line: &str) -> Answer {
    let trimmed = line.trim();
    match trimmed.to_ascii_lowercase().as_str() {
        "y" | "yes" => Answer::Approve,
        "" | "n" | "no" => Answer::Deny(DEFAULT_DENY_REASON.to_owned()),
        _ => Answer::Deny(trimmed.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approval_answers() {
        assert_eq!(parse_answer("y"), Answer::Approve);
        assert_eq!(parse_answer(" YES \n"), Answer::Approve);
        let default = Answer::Deny(DEFAULT_DENY_REASON.into());
        assert_eq!(parse_answer(""), default);
        assert_eq!(parse_answer("n"), default);
        assert_eq!(parse_answer("No"), default);
        assert_eq!(
            parse_answer("  not during business hours "),
            Answer::Deny("not during business hours".into())
        );
        assert_eq!(
            parse_answer("yes please"),
            Answer::Deny("yes please".into())
        );
    }

    #[test]
    fn chat_commands_and_direct_mode() {
        assert_eq!(parse_line("  "), Line::Empty);
        assert_eq!(parse_line("/quit"), Line::Quit);
        assert_eq!(parse_line("/exit"), Line::Quit);
        assert_eq!(parse_line("/help"), Line::Help);
        assert_eq!(parse_line("/new"), Line::New);
        assert_eq!(parse_line("/sessions"), Line::Sessions);
        assert_eq!(parse_line("/resume abc"), Line::Resume(Some("abc".into())));
        assert_eq!(parse_line("/resume"), Line::Resume(None));
        assert_eq!(
            parse_line("/read @web uptime"),
            Line::Message("/read @web uptime".into())
        );
        assert_eq!(
            parse_line(" how is @web? "),
            Line::Message("how is @web?".into())
        );
    }
}
