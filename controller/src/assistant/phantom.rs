//! Phantom detection (docs/design.md §9, item 5): a final answer that claims what no
//! successful tool call of this turn produced is replaced by [`safe_message`] and counted.
//! Pure: the check reads the answer and the list of calls the turn [`Executed`], nothing
//! else.
//!
//! The answer is split into prose (sentences, then clauses at `,;:` and dashes) and fenced
//! blocks; inline code is blanked and blockquotes are skipped, so a quoted command is never
//! read as a claim. Questions (`…?`) and clauses with a negation, a modal, a condition or a
//! future (`not`, `…n't`, `no`, `never`, `can`, `will`, `should`, `would`, `if`, `once`,
//! `unless`, `before`, …) in the words before the verb claim nothing. What remains:
//!
//! * **Markup**: tool-call markup in the answer (`<tool_call>`, `[TOOL_CALLS]`,
//!   `<function=…>`, JSON with `"name"` and `"arguments"`) is a phantom unless a call of the
//!   tool it names ran this turn.
//! * **Actions**: a first-person past or perfect change (`I restarted`, `we've deleted`,
//!   `I went ahead and rebooted`) needs a successful write whose command, action or output
//!   matches the verb's family (`restarted` ↔ `restart`; generic verbs such as `updated` or
//!   `fixed` accept any successful write). A passive (`has been restarted`, `was stopped`) or
//!   bare (`✅ Restarted nginx`) claim is also grounded by a successful read whose output
//!   mentions the verb's family (the logs reported the event) or, for history with a time or
//!   count (`was restarted 3 times`, `… at 10:02`), by any successful read. A clause found
//!   verbatim in a successful output is a quote, not a claim.
//! * **Observations**: `the logs show`, `according to the output`, `I checked`, `I verified`,
//!   … need a successful read; `I ran` and `the command returned` need any successful call.
//! * **States**: `is now running`, `is back up`, `is up and running` need any successful call.
//! * **Figures**: sizes (`3.2 GiB`, `512MB`) anywhere in the prose and percentages in a
//!   clause about usage (`CPU`, `memory`, `disk`, `used`, …), outside advice clauses (`set`,
//!   `recommend`, `e.g.`, `threshold`, …), need the number in a successful output of the
//!   turn: the same value within the answer's rounding, sizes across units (`3.2 GiB` ↔
//!   `3276` from `free -m`, decimal or binary units), percentages also as a ratio of two
//!   numbers on one output line. Fenced blocks are not checked for figures (they are
//!   examples or quotes).
//!
//! Known limit: a figure the user gave and the answer repeats, with no tool call, is flagged.

mod claims;
mod figures;
mod markup;
mod text;
mod words;

#[cfg(test)]
mod tests;

/// One tool call of the turn, as the phantom check sees it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Executed {
    /// Tool name (`read`, `control`, …).
    pub tool: String,
    /// Action (`exec`, `service`, …).
    pub action: String,
    /// The envelope's `ok`.
    pub ok: bool,
    /// The call is a write (changes something).
    pub write: bool,
    /// The command that ran, when there was one.
    pub command: Option<String>,
    /// stdout + stderr, or the data text the model saw.
    pub output: String,
}

/// An answer's unsupported claims.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phantom {
    /// Why the first claim is unsupported.
    pub reason: String,
    /// The unsupported claims, in the order of the answer (each at most 160 chars).
    pub claims: Vec<String>,
}

/// What a claim needs, and why it fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unsupported {
    pub reason: &'static str,
    pub claim: String,
}

/// The first unsupported claim of `answer` given what this turn executed (`executed` is
/// every tool call of the turn, in order).
pub fn detect(answer: &str, executed: &[Executed]) -> Option<Phantom> {
    let parsed = text::Parsed::new(answer);
    let mut found = markup::markup(answer, executed);
    found.extend(claims::prose(&parsed, executed));
    found.extend(figures::check(&parsed, executed));
    let first = found.first()?;
    let reason = first.reason.to_owned();
    let mut claims: Vec<String> = Vec::new();
    for item in found {
        let claim = text::clip(&item.claim, 160);
        if !claims.contains(&claim) {
            claims.push(claim);
        }
    }
    Some(Phantom { reason, claims })
}

/// The safe message that replaces a phantom answer.
pub fn safe_message(phantom: &Phantom) -> String {
    let mut message = String::from(
        "I can't stand behind the answer I drafted: it stated something that none of the tool \
         calls I actually made in this turn showed",
    );
    if !phantom.reason.is_empty() {
        message.push_str(&format!(" ({})", phantom.reason));
    }
    message.push_str(
        ". Nothing was changed apart from the tool calls listed above. Ask again and I will \
         check it with the tools, or tell me which command or change you want.",
    );
    message
}
