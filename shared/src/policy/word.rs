//! Shell words after quote removal, with a note of what the shell could still change,
//! and their conversion from tree-sitter nodes.

use tree_sitter::Node;

/// What the shell may still do to a word when it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WordKind {
    /// Fixed text: exactly this string reaches the program.
    Literal,
    /// Fixed text with an unquoted glob or brace pattern that cannot turn into an option
    /// (it does not start with `-` or a pattern character).
    Glob,
    /// Depends on variables, expansions or patterns: could become anything, options included.
    Dynamic,
}

/// One argument word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// The text after quote removal (best effort for dynamic words).
    pub text: String,
    /// What the shell may still do to it.
    pub kind: WordKind,
    /// The word as written in the source, for rewrites.
    pub src: String,
    /// The first character is fixed text other than `-` (or a pattern character), so
    /// whatever the shell does, the word cannot start an option.
    pub lead_fixed: bool,
    /// An unquoted expansion may split the word into several, any of them an option.
    pub splits: bool,
}

impl Word {
    /// A literal word whose source is its shell-quoted text.
    pub fn literal(text: &str) -> Self {
        Word {
            text: text.to_owned(),
            kind: WordKind::Literal,
            src: quote(text),
            lead_fixed: !text.starts_with('-'),
            splits: false,
        }
    }

    /// An unknown word standing for whatever another program supplies (xargs, find -exec).
    pub fn dynamic(src: &str) -> Self {
        Word {
            text: String::new(),
            kind: WordKind::Dynamic,
            src: src.to_owned(),
            lead_fixed: false,
            splits: true,
        }
    }

    /// One word decided by another program that cannot start with `-`: a path that
    /// `find -exec` substitutes for `{}` (it begins with a start path, never an option).
    pub fn operand(src: &str) -> Self {
        Word {
            lead_fixed: true,
            splits: false,
            ..Word::dynamic(src)
        }
    }

    /// True when the shell could turn this word into an option (`-…`), or into several
    /// words one of which is an option.
    pub fn may_be_option(&self) -> bool {
        match self.kind {
            WordKind::Literal => self.text.starts_with('-'),
            WordKind::Glob => false,
            WordKind::Dynamic => self.splits || !self.lead_fixed,
        }
    }

    /// True when the shell could split this word into several.
    pub fn may_split(&self) -> bool {
        self.kind == WordKind::Dynamic && self.splits
    }

    /// The text when it is fixed (a literal, or a glob that cannot become an option).
    pub fn fixed(&self) -> Option<&str> {
        match self.kind {
            WordKind::Literal | WordKind::Glob => Some(&self.text),
            WordKind::Dynamic => None,
        }
    }

    /// The text only when it is exactly this string.
    pub fn lit(&self) -> Option<&str> {
        match self.kind {
            WordKind::Literal => Some(&self.text),
            _ => None,
        }
    }

    /// True when the shell decides this word at run time.
    pub fn is_dynamic(&self) -> bool {
        self.kind == WordKind::Dynamic
    }
}

/// Quote a string for a POSIX shell, leaving plain words as they are.
pub(crate) fn quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%^".contains(&b));
    if plain {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Join words back into a command line from their sources.
pub(crate) fn join_src<'a>(words: impl IntoIterator<Item = &'a Word>) -> String {
    words
        .into_iter()
        .map(|w| w.src.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Remove backslash escapes from an unquoted word.
pub(crate) fn unescape_unquoted(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(n) => out.push(n),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Remove the escapes that are special inside double quotes.
pub(crate) fn unescape_double(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    if let Some(n) = chars.next() {
                        out.push(n);
                    }
                }
                Some('\n') => {
                    chars.next();
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// True when unquoted text holds a pathname-expansion character.
pub(crate) fn has_glob(unquoted: &str) -> bool {
    let mut escaped = false;
    for c in unquoted.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '*' | '?' | '[' => return true,
            _ => {}
        }
    }
    false
}

/// Convert an argument node into a word after quote removal.
pub(crate) fn from_node(node: Node<'_>, src: &str) -> Word {
    let raw = &src[node.byte_range()];
    let (text, mut kind) = word_text(node, src);
    if kind == WordKind::Glob && (text.starts_with('-') || raw.starts_with(['*', '?', '[', '{'])) {
        kind = WordKind::Dynamic;
    }
    let lead_fixed = lead_char(node, src).is_some_and(|c| !"-*?[{~\\".contains(c));
    Word {
        text,
        kind,
        src: raw.to_owned(),
        lead_fixed,
        splits: splits(node),
    }
}

/// The word's first character when it is fixed text, whatever the shell expands.
fn lead_char(node: Node<'_>, src: &str) -> Option<char> {
    let raw = &src[node.byte_range()];
    match node.kind() {
        "word" | "number" => raw.chars().next(),
        "raw_string" => raw.strip_prefix('\'')?.chars().next(),
        "string" => {
            let first = node.named_child(0)?;
            (first.kind() == "string_content" && first.start_byte() == node.start_byte() + 1)
                .then(|| src[first.byte_range()].chars().next())
                .flatten()
        }
        "concatenation" => lead_char(node.child(0)?, src),
        _ => None,
    }
}

/// True when an unquoted expansion in the word is subject to field splitting.
fn splits(node: Node<'_>) -> bool {
    match node.kind() {
        "simple_expansion" | "expansion" | "command_substitution" | "arithmetic_expansion" => true,
        "concatenation" => {
            let mut cursor = node.walk();
            node.children(&mut cursor).any(splits)
        }
        _ => false,
    }
}

fn word_text(node: Node<'_>, src: &str) -> (String, WordKind) {
    let raw = &src[node.byte_range()];
    match node.kind() {
        "word" => {
            let braces = raw.contains('{') && (raw.contains(',') || raw.contains(".."));
            let kind = if has_glob(raw) || braces {
                WordKind::Glob
            } else {
                WordKind::Literal
            };
            (unescape_unquoted(raw), kind)
        }
        "number" => (raw.to_owned(), WordKind::Literal),
        "raw_string" => {
            let inner = raw
                .strip_prefix('\'')
                .and_then(|r| r.strip_suffix('\''))
                .unwrap_or(raw);
            (inner.to_owned(), WordKind::Literal)
        }
        "string" => {
            let mut text = String::new();
            let mut kind = WordKind::Literal;
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                match child.kind() {
                    "string_content" => text.push_str(&unescape_double(&src[child.byte_range()])),
                    _ => kind = WordKind::Dynamic,
                }
            }
            (text, kind)
        }
        "ansi_c_string" => {
            let inner = raw
                .strip_prefix("$'")
                .and_then(|r| r.strip_suffix('\''))
                .unwrap_or(raw);
            let kind = if inner.contains('\\') {
                WordKind::Dynamic
            } else {
                WordKind::Literal
            };
            (inner.to_owned(), kind)
        }
        "concatenation" => {
            let mut text = String::new();
            let mut kind = WordKind::Literal;
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                let (t, k) = word_text(child, src);
                text.push_str(&t);
                kind = kind.max_with(k);
            }
            if raw.contains('{') && (raw.contains(',') || raw.contains("..")) {
                kind = kind.max_with(WordKind::Glob);
            }
            (text, kind)
        }
        "brace_expression" => (raw.to_owned(), WordKind::Glob),
        _ => (raw.to_owned(), WordKind::Dynamic),
    }
}

impl WordKind {
    fn max_with(self, other: WordKind) -> WordKind {
        match (self, other) {
            (WordKind::Dynamic, _) | (_, WordKind::Dynamic) => WordKind::Dynamic,
            (WordKind::Glob, _) | (_, WordKind::Glob) => WordKind::Glob,
            _ => WordKind::Literal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_round_trips_plain_and_odd_words() {
        assert_eq!(quote("-n"), "-n");
        assert_eq!(quote("10 min ago"), "'10 min ago'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
    }

    #[test]
    fn unescaping() {
        assert_eq!(unescape_unquoted(r"r\m"), "rm");
        assert_eq!(unescape_unquoted(r"foo\ bar"), "foo bar");
        assert_eq!(unescape_double(r#"a\"b\$c\n"#), r#"a"b$c\n"#);
        assert!(has_glob("*.log"));
        assert!(!has_glob(r"\*.log"));
    }
}
