//! Splitting an answer into fenced blocks and prose clauses, and lowercase word tokens.

/// One clause of prose.
#[derive(Debug, Clone)]
pub(crate) struct Clause {
    /// The clause as written (inline code blanked).
    pub text: String,
    /// Lowercase words (apostrophes kept inside words: `i've`, `didn't`).
    pub tokens: Vec<String>,
    /// The clause is part of a question.
    pub question: bool,
}

/// An answer, split.
#[derive(Debug, Clone, Default)]
pub(crate) struct Parsed {
    /// Prose clauses, in order.
    pub clauses: Vec<Clause>,
}

impl Parsed {
    /// Splits `answer`: fenced blocks and blockquotes are left out of the prose.
    pub fn new(answer: &str) -> Parsed {
        let mut parsed = Parsed::default();
        let mut fenced = false;
        for line in answer.lines() {
            let trimmed = line.trim_start();
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                fenced = !fenced;
                continue;
            }
            if fenced || trimmed.starts_with('>') {
                continue;
            }
            for (sentence, question) in sentences(&blank_inline_code(line)) {
                for clause in sentence.split([',', ';', ':', '—', '–', '(', ')']) {
                    let tokens = tokens(clause);
                    if !tokens.is_empty() {
                        parsed.clauses.push(Clause {
                            text: clause.trim().to_owned(),
                            tokens,
                            question,
                        });
                    }
                }
            }
        }
        parsed
    }
}

/// `text` with the inside of each `inline code` span replaced by the word `code`.
fn blank_inline_code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, part) in text.split('`').enumerate() {
        out.push_str(if i % 2 == 1 { " code " } else { part });
    }
    out
}

/// Sentences of one line, each with whether it is a question. A period ends a sentence
/// only before whitespace or the end (`nginx.service` and `3.2` stay whole).
fn sentences(line: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        current.push(c);
        let ends =
            matches!(c, '.' | '!' | '?') && chars.peek().is_none_or(|next| next.is_whitespace());
        if ends {
            out.push((std::mem::take(&mut current), c == '?'));
        }
    }
    if !current.trim().is_empty() {
        out.push((current, false));
    }
    out
}

/// Lowercase words of `text`; typographic apostrophes become `'`.
pub(crate) fn tokens(text: &str) -> Vec<String> {
    text.to_lowercase()
        .replace('’', "'")
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Lowercase, whitespace collapsed to single spaces.
pub(crate) fn normalize(text: &str) -> String {
    text.to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// At most `max` characters of `text`, with `…` when cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}
