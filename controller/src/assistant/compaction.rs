//! Keeping long investigations inside the context window, without model calls:
//! tool results older than [`KEEP_ITERATIONS`] model calls and longer than
//! [`COMPACT_OVER`] characters are replaced by their extracted facts when the caller gives
//! any (the turn gives none yet, so in a turn they are always cut), or cut to their head
//! and tail with a marker; and a session longer than the history window keeps a rolling
//! summary of what came before (its questions and answers), so it keeps going.

use crate::llm::Message;

/// Tool results of this many most recent model calls stay whole.
pub const KEEP_ITERATIONS: i64 = 2;
/// Tool results up to this many characters stay whole.
pub const COMPACT_OVER: usize = 300;
/// Characters kept from the start and the end of a cut result.
const HEAD: usize = 160;
const TAIL: usize = 100;

/// The model's conversation with the model call that added each message.
#[derive(Debug, Clone, Default)]
pub struct Conversation {
    messages: Vec<Message>,
    born: Vec<i64>,
    /// Characters removed by compaction so far.
    pub saved: usize,
}

impl Conversation {
    /// Messages from earlier turns (they count as old).
    pub fn from_history(messages: Vec<Message>) -> Self {
        let born = vec![i64::MIN / 2; messages.len()];
        Conversation {
            messages,
            born,
            saved: 0,
        }
    }

    /// Adds a message during model call `iteration`.
    pub fn push(&mut self, message: Message, iteration: u32) {
        self.messages.push(message);
        self.born.push(i64::from(iteration));
    }

    /// The messages as they are now.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Compacts old, long tool results before model call `iteration`. `facts(tool, content)`
    /// gives a compact text of a result's facts, when there are any.
    pub fn compact(&mut self, iteration: u32, facts: impl Fn(&str, &str) -> Option<String>) {
        let now = i64::from(iteration);
        for (message, born) in self.messages.iter_mut().zip(&self.born) {
            let Message::Tool { name, content, .. } = message else {
                continue;
            };
            if born.saturating_add(KEEP_ITERATIONS) >= now
                || content.chars().count() <= COMPACT_OVER
                || content.starts_with(MARK)
            {
                continue;
            }
            let replacement = match facts(name, content) {
                Some(summary) if summary.chars().count() < content.chars().count() => {
                    format!("{MARK} facts of an earlier result] {summary}")
                }
                _ => cut(content),
            };
            self.saved += content.len().saturating_sub(replacement.len());
            *content = replacement;
        }
    }
}

const MARK: &str = "[compacted by Vigil:";

fn cut(content: &str) -> String {
    let chars: Vec<char> = content.chars().collect();
    let head: String = chars[..HEAD.min(chars.len())].iter().collect();
    let tail: String = chars[chars.len().saturating_sub(TAIL)..].iter().collect();
    let omitted = chars.len().saturating_sub(HEAD + TAIL);
    format!("{MARK} {omitted} characters of an earlier result omitted] {head} … {tail}")
}

/// A rolling summary of the messages that no longer fit: the user's questions and the
/// answers given, shortened.
pub fn rolling_summary(dropped: &[Message]) -> Option<String> {
    let mut lines = Vec::new();
    for message in dropped {
        match message {
            Message::User { text } => lines.push(format!("- asked: {}", shorten(text, 160))),
            Message::Assistant { text, .. } if !text.trim().is_empty() => {
                lines.push(format!("  answered: {}", shorten(text, 240)));
            }
            _ => {}
        }
    }
    if lines.is_empty() {
        return None;
    }
    let keep = lines.len().saturating_sub(30);
    Some(format!(
        "(Vigil: summary of earlier messages in this session)\n{}",
        lines[keep..].join("\n")
    ))
}

fn shorten(text: &str, max: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    one_line.chars().take(max).collect::<String>() + "…"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(content: &str) -> Message {
        Message::Tool {
            tool_call_id: "c".into(),
            name: "read".into(),
            content: content.into(),
        }
    }

    fn content(message: &Message) -> &str {
        match message {
            Message::Tool { content, .. } => content,
            _ => "",
        }
    }

    #[test]
    fn old_long_results_are_compacted_and_recent_or_short_ones_kept() {
        let long = "x".repeat(2000);
        let mut conversation = Conversation::default();
        conversation.push(tool(&long), 1);
        conversation.push(tool("short"), 1);
        conversation.push(tool(&long), 2);
        conversation.compact(3, |_, _| None);
        assert_eq!(
            content(&conversation.messages()[0]).len(),
            2000,
            "two calls back stays"
        );
        conversation.compact(4, |_, _| None);
        let cut = content(&conversation.messages()[0]);
        assert!(
            cut.starts_with("[compacted by Vigil: 1740 characters"),
            "{cut}"
        );
        assert!(cut.len() < 400);
        assert_eq!(content(&conversation.messages()[1]), "short");
        assert_eq!(content(&conversation.messages()[2]).len(), 2000);
        let saved = conversation.saved;
        conversation.compact(4, |_, _| None);
        assert_eq!(
            conversation.saved, saved,
            "compacting twice changes nothing"
        );
    }

    #[test]
    fn facts_replace_a_result_when_shorter_and_history_counts_as_old() {
        let long = format!(
            "{{\"ok\":true,\"data\":{{\"stdout\":\"{}\"}}}}",
            "load 0.1 ".repeat(100)
        );
        let mut conversation = Conversation::from_history(vec![tool(&long)]);
        conversation.compact(1, |_, _| Some("uptime: load 0.1".into()));
        assert_eq!(
            content(&conversation.messages()[0]),
            "[compacted by Vigil: facts of an earlier result] uptime: load 0.1"
        );
        assert!(conversation.saved > 800);
    }

    #[test]
    fn rolling_summaries_keep_questions_and_answers() {
        let dropped = vec![
            Message::User {
                text: "why is jellyfin slow?".into(),
            },
            Message::Assistant {
                text: String::new(),
                tool_calls: Vec::new(),
            },
            tool("…"),
            Message::Assistant {
                text: "The transcoder used all CPUs.".into(),
                tool_calls: Vec::new(),
            },
        ];
        let summary = rolling_summary(&dropped).unwrap();
        assert!(summary.contains("asked: why is jellyfin slow?"));
        assert!(summary.contains("answered: The transcoder used all CPUs."));
        assert!(rolling_summary(&[tool("x")]).is_none());
    }
}
