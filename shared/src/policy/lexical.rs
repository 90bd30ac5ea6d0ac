//! The lexical safety net: a deny-by-default scan of the command's source text that does
//! not use the syntax tree.
//!
//! Why it exists: tree-sitter-bash does not parse every form the way bash does. It reads
//! the backticks in `${x:-`cmd`}` as a plain word, so a check on node kinds alone let
//! `echo ${x:-`docker network create …`}` through as a read. This module follows only
//! bash's quoting rules (single quotes, `$'…'`, double quotes, backslashes, line
//! continuations, comments and here-documents) and, everywhere bash does not keep the text
//! literal, refuses every sequence that can run code or evaluate names as arithmetic:
//! backticks, `$(` (pure-number `$((…))` aside), `$[`, `${` not followed by exactly a name
//! and `}`, `$"…"`, `((`, `<(`, `>(`, and `{name}` redirections (they assign `name`).
//!
//! It errs one way only: text it cannot place for certain is treated as code, so it can
//! refuse a harmless command but never hides code from the check. It is a second gate;
//! the tree-based guards in [`super::guards`] still run.

/// `Err` names the first form that is not proved inert; `Ok` when there is none.
pub(crate) fn check(src: &str) -> Result<(), String> {
    Lexer {
        s: src.as_bytes(),
        i: 0,
        pending: Vec::new(),
    }
    .run()
}

/// Where a `$` stands: unquoted, inside double quotes, or in an unquoted here-document body.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Unquoted,
    Double,
    Body,
}

/// A here-document whose body starts after the next unquoted line break.
struct Heredoc {
    delim: Vec<u8>,
    quoted: bool,
    strip_tabs: bool,
}

struct Lexer<'a> {
    s: &'a [u8],
    i: usize,
    pending: Vec<Heredoc>,
}

type Step = Result<(), String>;

/// Characters a here-document delimiter may hold besides quotes.
fn delim_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"_-.+@%:/=,".contains(&c)
}

impl Lexer<'_> {
    fn at(&self, i: usize) -> Option<u8> {
        self.s.get(i).copied()
    }

    /// True when a line continuation (`\` and a line break) starts at `i`.
    fn continuation(&self, i: usize) -> bool {
        self.at(i) == Some(b'\\') && self.at(i + 1) == Some(b'\n')
    }

    /// The byte after an operator character at `i`. A line continuation there is refused:
    /// bash would join it, and deciding what the joined text means is not worth the risk.
    fn after(&self, i: usize, what: &str) -> Result<Option<u8>, String> {
        if self.continuation(i + 1) {
            return Err(format!("a line continuation right after {what}"));
        }
        Ok(self.at(i + 1))
    }

    fn run(mut self) -> Step {
        let mut word_start = true;
        while self.i < self.s.len() {
            if self.continuation(self.i) {
                self.i += 2;
                continue;
            }
            let c = self.s[self.i];
            let blank = matches!(c, b' ' | b'\t' | b'\n');
            match c {
                b'\\' => self.i += 2,
                b'\'' => self.single()?,
                b'"' => self.double()?,
                b'`' => return Err("a backtick command substitution".into()),
                b'$' => self.dollar(Place::Unquoted)?,
                // A comment runs to the line break; bash does not continue it with `\`.
                b'#' if word_start => {
                    while self.at(self.i).is_some_and(|c| c != b'\n') {
                        self.i += 1;
                    }
                }
                b'\n' => {
                    self.i += 1;
                    self.bodies()?;
                }
                b'<' => self.less()?,
                b'>' => {
                    if self.after(self.i, "'>'")? == Some(b'(') {
                        return Err("a process substitution >(…)".into());
                    }
                    self.i += 1;
                }
                b'(' => {
                    if self.after(self.i, "'('")? == Some(b'(') {
                        return Err("an arithmetic command ((…)) evaluates names".into());
                    }
                    self.i += 1;
                }
                b'}' => {
                    if matches!(self.after(self.i, "'}'")?, Some(b'<' | b'>')) {
                        return Err("a {name} redirection assigns a variable".into());
                    }
                    self.i += 1;
                }
                _ => self.i += 1,
            }
            word_start = blank;
        }
        if self.pending.is_empty() {
            Ok(())
        } else {
            Err("a here-document without a body".into())
        }
    }

    /// `'…'`: everything up to the next `'` is literal.
    fn single(&mut self) -> Step {
        let start = self.i + 1;
        match self.s[start..].iter().position(|&c| c == b'\'') {
            Some(n) => {
                self.i = start + n + 1;
                Ok(())
            }
            None => Err("an unterminated single quote".into()),
        }
    }

    /// `$'…'`: literal, with backslash escapes (`\'` does not end it).
    fn ansi_c(&mut self) -> Step {
        while let Some(c) = self.at(self.i) {
            match c {
                b'\\' => self.i += 2,
                b'\'' => {
                    self.i += 1;
                    return Ok(());
                }
                _ => self.i += 1,
            }
        }
        Err("an unterminated $'…' string".into())
    }

    /// `"…"`: expansions and backticks still run inside.
    fn double(&mut self) -> Step {
        self.i += 1;
        while let Some(c) = self.at(self.i) {
            match c {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return Ok(());
                }
                b'`' => return Err("a backtick command substitution".into()),
                b'$' => self.dollar(Place::Double)?,
                _ => self.i += 1,
            }
        }
        Err("an unterminated double quote".into())
    }

    /// A `$` at `self.i`: only `$NAME`, `${NAME}`, the special parameters, `$'…'` and
    /// arithmetic on plain numbers pass.
    fn dollar(&mut self, place: Place) -> Step {
        let next = self.after(self.i, "'$'")?;
        let j = self.i + 1;
        match next {
            Some(b'(') => {
                if self.after(j, "'$('")? == Some(b'(') {
                    self.i = j + 2;
                    self.arithmetic()
                } else {
                    Err("a command substitution $(…)".into())
                }
            }
            Some(b'[') => Err("an arithmetic expansion $[…]".into()),
            Some(b'{') => {
                self.i = j + 1;
                self.braced()
            }
            Some(b'\'') if place == Place::Unquoted => {
                self.i = j + 1;
                self.ansi_c()
            }
            Some(b'"') if place == Place::Unquoted => {
                Err("a $\"…\" string, which bash translates and expands again".into())
            }
            Some(c) if c.is_ascii_digit() || b"@*#?-$!".contains(&c) => {
                self.i = j + 1;
                Ok(())
            }
            _ => {
                self.i = j;
                Ok(())
            }
        }
    }

    /// After `${`: a name, a positional number or one special character, then `}`.
    fn braced(&mut self) -> Step {
        let start = self.i;
        let rest = &self.s[start..];
        let len = match rest.first() {
            Some(c) if c.is_ascii_alphabetic() || *c == b'_' => rest
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                .count(),
            Some(c) if c.is_ascii_digit() => rest.iter().take_while(|c| c.is_ascii_digit()).count(),
            Some(c) if b"@*#?-$!".contains(c) => 1,
            _ => 0,
        };
        if len > 0 && rest.get(len) == Some(&b'}') {
            self.i = start + len + 1;
            Ok(())
        } else {
            let end = rest
                .iter()
                .position(|&c| c == b'}')
                .map_or(rest.len(), |n| n + 1);
            let shown = String::from_utf8_lossy(&rest[..end.min(40)]);
            Err(format!(
                "a parameter expansion ${{{shown} that is more than a plain name"
            ))
        }
    }

    /// After `$((`: digits, operators and parentheses only, up to the closing `))`.
    fn arithmetic(&mut self) -> Step {
        let mut depth = 0usize;
        while let Some(c) = self.at(self.i) {
            match c {
                b'(' => depth += 1,
                b')' if depth > 0 => depth -= 1,
                b')' => {
                    return if self.at(self.i + 1) == Some(b')') {
                        self.i += 2;
                        Ok(())
                    } else {
                        Err("a $((…)) that is not plain arithmetic".into())
                    };
                }
                c if c.is_ascii_digit() || b" \t+-*/%<>=!&|^~?:".contains(&c) => {}
                _ => {
                    return Err(
                        "an arithmetic expansion on names, whose values can run commands".into(),
                    );
                }
            }
            self.i += 1;
        }
        Err("an unterminated arithmetic expansion".into())
    }

    /// `<`: a here-string (`<<<`), a here-document (`<<`, `<<-`), a process substitution
    /// (`<(`, refused) or a plain redirection.
    fn less(&mut self) -> Step {
        match self.after(self.i, "'<'")? {
            Some(b'(') => Err("a process substitution <(…)".into()),
            Some(b'<') => {
                let third = self.after(self.i + 1, "'<<'")?;
                if third == Some(b'<') {
                    self.i += 3;
                    return Ok(());
                }
                self.i += 2;
                let strip_tabs = third == Some(b'-');
                if strip_tabs {
                    if self.continuation(self.i + 1) {
                        return Err("a line continuation right after '<<-'".into());
                    }
                    self.i += 1;
                }
                self.delimiter(strip_tabs)
            }
            _ => {
                self.i += 1;
                Ok(())
            }
        }
    }

    /// The delimiter word of a here-document; any quoting makes the body literal.
    fn delimiter(&mut self, strip_tabs: bool) -> Step {
        while matches!(self.at(self.i), Some(b' ' | b'\t')) {
            self.i += 1;
        }
        let mut delim = Vec::new();
        let mut quoted = false;
        while let Some(c) = self.at(self.i) {
            match c {
                b'\'' | b'"' => {
                    let start = self.i + 1;
                    let Some(n) = self.s[start..].iter().position(|&q| q == c) else {
                        return Err("an unterminated quote in a here-document delimiter".into());
                    };
                    let inner = &self.s[start..start + n];
                    if !inner.iter().all(|&c| delim_char(c)) {
                        return Err("a here-document delimiter with special characters".into());
                    }
                    delim.extend_from_slice(inner);
                    quoted = true;
                    self.i = start + n + 1;
                }
                b'\\' => match self.at(self.i + 1) {
                    Some(n) if delim_char(n) => {
                        delim.push(n);
                        quoted = true;
                        self.i += 2;
                    }
                    _ => return Err("an odd escape in a here-document delimiter".into()),
                },
                c if delim_char(c) => {
                    delim.push(c);
                    self.i += 1;
                }
                b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>' => break,
                _ => return Err("a here-document delimiter with special characters".into()),
            }
        }
        if delim.is_empty() {
            return Err("a here-document without a delimiter".into());
        }
        self.pending.push(Heredoc {
            delim,
            quoted,
            strip_tabs,
        });
        Ok(())
    }

    /// The bodies of the pending here-documents, which start at `self.i` (a line start).
    fn bodies(&mut self) -> Step {
        for doc in std::mem::take(&mut self.pending) {
            loop {
                if self.i >= self.s.len() {
                    return Err("a here-document without its end line".into());
                }
                let end = self.s[self.i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(self.s.len(), |n| self.i + n);
                let line = &self.s[self.i..end];
                let bare = if doc.strip_tabs {
                    let tabs = line.iter().take_while(|&&c| c == b'\t').count();
                    &line[tabs..]
                } else {
                    line
                };
                if bare == doc.delim.as_slice() {
                    self.i = (end + 1).min(self.s.len());
                    break;
                }
                if !doc.quoted {
                    self.body_line(end)?;
                }
                self.i = (end + 1).min(self.s.len());
            }
        }
        Ok(())
    }

    /// One line of an unquoted here-document body, from `self.i` to `end`: expansions and
    /// backticks run there as in double quotes.
    fn body_line(&mut self, end: usize) -> Step {
        if end > self.i && self.s[end - 1] == b'\\' {
            return Err("a here-document line continued with '\\'".into());
        }
        while self.i < end {
            match self.s[self.i] {
                b'\\' => self.i += 2,
                b'`' => return Err("a backtick command substitution in a here-document".into()),
                b'$' => self.dollar(Place::Body)?,
                _ => self.i += 1,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "lexical_tests.rs"]
mod tests;
