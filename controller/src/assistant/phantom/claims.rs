//! Claims of actions, observations and states in the prose of an answer, and whether this
//! turn's calls support them.

use super::text::{Clause, Parsed, normalize};
use super::words::{self, FAILURE, FILLER, HISTORY, LOOKS, NEGATORS, RUNS, SUBJECTS, has};
use super::{Executed, Unsupported};

/// Unsupported action, observation and state claims of the prose.
pub(super) fn prose(parsed: &Parsed, executed: &[Executed]) -> Vec<Unsupported> {
    let turn = Turn::new(executed);
    let mut out = Vec::new();
    for clause in parsed.clauses.iter().filter(|c| !c.question) {
        if turn.quotes(&clause.text) {
            continue;
        }
        if let Some(reason) = clause_reason(clause, &turn) {
            out.push(Unsupported {
                reason,
                claim: clause.text.clone(),
            });
        }
    }
    out
}

/// What this turn produced, lowercased.
struct Turn {
    writes: Vec<String>,
    reads: Vec<String>,
    attempted_read: bool,
}

impl Turn {
    fn new(executed: &[Executed]) -> Turn {
        let text = |e: &Executed| {
            format!(
                "{} {} {} {}",
                e.tool,
                e.action,
                e.command.as_deref().unwrap_or_default(),
                e.output
            )
            .to_lowercase()
        };
        Turn {
            writes: executed
                .iter()
                .filter(|e| e.ok && e.write)
                .map(text)
                .collect(),
            reads: executed
                .iter()
                .filter(|e| e.ok && !e.write)
                .map(text)
                .collect(),
            attempted_read: executed.iter().any(|e| !e.write),
        }
    }

    fn any_ok(&self) -> bool {
        !self.writes.is_empty() || !self.reads.is_empty()
    }

    /// `text` appears in a successful output: a quote, not a claim.
    fn quotes(&self, text: &str) -> bool {
        let needle = normalize(text);
        needle.len() >= 8
            && self
                .reads
                .iter()
                .chain(&self.writes)
                .any(|out| normalize(out).contains(&needle))
    }

    fn write_matches(&self, family: &[&str]) -> bool {
        self.writes
            .iter()
            .any(|w| family.is_empty() || family.iter().any(|s| w.contains(s)))
    }

    fn read_mentions(&self, words: &[&str]) -> bool {
        self.reads
            .iter()
            .any(|r| words.iter().any(|w| r.contains(w)))
    }
}

fn negated(before: &[String]) -> bool {
    before
        .iter()
        .rev()
        .take(6)
        .any(|w| has(NEGATORS, w) || w.ends_with("n't"))
}

/// How the words before position `at` introduce it.
#[derive(Debug, PartialEq, Eq)]
enum Lead {
    FirstPerson,
    Passive { history: bool },
    Bare,
    Other,
}

fn lead(tokens: &[String], at: usize) -> Lead {
    let mut i = at;
    let mut history = false;
    let mut saw_now = false;
    while i > 0 {
        let word = tokens[i - 1].as_str();
        if has(SUBJECTS, word) {
            return Lead::FirstPerson;
        }
        if matches!(word, "been" | "was" | "were" | "got" | "gotten")
            || (saw_now && matches!(word, "is" | "are"))
        {
            return Lead::Passive { history };
        }
        if !has(FILLER, word) {
            // `I checked the logs and restarted nginx`: the subject of the clause carries.
            let coordinated = tokens[i..at].iter().any(|w| w == "and" || w == "then");
            return match tokens.first() {
                Some(first) if coordinated && has(SUBJECTS, first) => Lead::FirstPerson,
                _ => Lead::Other,
            };
        }
        history |= has(HISTORY, word);
        saw_now |= word == "now";
        i -= 1;
    }
    Lead::Bare
}

fn clause_reason(clause: &Clause, turn: &Turn) -> Option<&'static str> {
    let tokens = &clause.tokens;
    let failure = tokens.iter().any(|w| has(FAILURE, w)) && turn.attempted_read;
    for at in 0..tokens.len() {
        if negated(&tokens[..at]) {
            continue;
        }
        if let Some(reason) = action_reason(tokens, at, turn) {
            return Some(reason);
        }
        let word = tokens[at].as_str();
        let looks = has(LOOKS, word);
        if (looks || has(RUNS, word))
            && matches!(lead(tokens, at), Lead::FirstPerson | Lead::Bare)
            && !failure
            && !(if looks {
                !turn.reads.is_empty()
            } else {
                turn.any_ok()
            })
        {
            return Some("it reports what it looked at, but no read succeeded in this turn");
        }
    }
    let found = |list: &str| {
        words::phrases(list)
            .filter_map(|phrase| find(tokens, &phrase))
            .any(|at| !negated(&tokens[..at]))
    };
    if !failure && turn.reads.is_empty() && found(words::READ_REPORTS) {
        return Some("it quotes output, but no read succeeded in this turn");
    }
    if !failure && !turn.any_ok() && found(words::RUN_REPORTS) {
        return Some("it quotes output, but no tool call succeeded in this turn");
    }
    if !turn.any_ok() && found(words::STATES) {
        return Some("it states a result, but no tool call succeeded in this turn");
    }
    None
}

/// Why the verb of change at `at` is unsupported, if it is one and it is.
fn action_reason(tokens: &[String], at: usize, turn: &Turn) -> Option<&'static str> {
    let word = tokens[at].as_str();
    let family = words::action_family(word)?;
    let next = tokens.get(at + 1).map(String::as_str);
    if (word == "shut" && next != Some("down")) || (word == "rolled" && next != Some("back")) {
        return None;
    }
    let after = &tokens[at + 1..tokens.len().min(at + 6)];
    let history_after = after
        .iter()
        .any(|w| has(HISTORY, w) || w.starts_with(|c: char| c.is_ascii_digit()));
    let read_words = if family.is_empty() {
        vec![word.trim_end_matches("ed")]
    } else {
        family.clone()
    };
    let supported = match lead(tokens, at) {
        Lead::FirstPerson => turn.write_matches(&family),
        Lead::Passive { history } => {
            turn.write_matches(&family)
                || turn.read_mentions(&read_words)
                || ((history || history_after) && !turn.reads.is_empty())
        }
        // A bare `Started nginx.service` quotes a log line only when the log has the word
        // itself; `Successfully restarted …` speaks for the assistant.
        Lead::Bare => {
            turn.write_matches(&family)
                || (turn.read_mentions(&[word])
                    && !tokens[..at].iter().any(|w| w == "successfully"))
        }
        Lead::Other => true,
    };
    match (supported, turn.writes.is_empty()) {
        (true, _) => None,
        (false, true) => Some("it claims a change, but no change succeeded in this turn"),
        (false, false) => {
            Some("it claims a change that none of this turn's successful changes made")
        }
    }
}

/// The position of `phrase` in `tokens`.
fn find(tokens: &[String], phrase: &[&str]) -> Option<usize> {
    tokens
        .windows(phrase.len())
        .position(|w| w.iter().zip(phrase).all(|(a, b)| a == b))
}
