//! sed: the options, and a parser for a small grammar of sed scripts that only print.
//!
//! The parser accepts what it can follow exactly as GNU sed 4.9 reads it: addresses
//! (numbers, `first~step`, `$`, `/re/` and `\cREc` with `I`/`M`, `addr,+N`/`~N`, `!`),
//! blocks, labels and branches, `s` with the flags `g p i I m M` and a number, `y`, the
//! commands without arguments (`= d D g G h H n N p P x z F`), `l`/`q`/`Q` with a number,
//! `a`/`i`/`c` text and `r`/`R FILE` (they only read). Everything else, and anything it is
//! not sure how sed would split, is refused: `w`, `W`, `e`, `s///e`, `s///w`, `v`, `L`, a
//! delimiter or backslash inside a bracket expression, a bare line break in an expression,
//! and a label followed by more than a separator.

use super::super::args::{Opt, Spec, long_matches};
use super::super::types::Risk;
use super::super::verdict::Verdict;
use super::Cmd;

/// `sed [OPTION]… SCRIPT [FILE]…` and `sed -e SCRIPT…`.
pub(crate) fn classify(cmd: &Cmd<'_>) -> Verdict {
    let p = cmd.parse(Spec {
        short_values: "efl",
        long_values: &["expression", "file", "line-length"],
        ..Spec::default()
    });
    if p.short('i') || p.long("in-place") {
        return Verdict::write(Risk::High, "sed -i edits files in place");
    }
    if p.flag('f', "file") {
        return Verdict::unknown("sed -f runs a script file we cannot see");
    }
    if p.dynamic {
        return cmd.dynamic_write();
    }
    let given: Vec<&str> = p
        .opts
        .iter()
        .filter_map(|o| match o {
            Opt::Short('e', v) => v.as_deref(),
            Opt::Long(l, v) if long_matches(l, "expression") => v.as_deref(),
            _ => None,
        })
        .collect();
    // sed joins its -e scripts with line breaks into one script: `a` text may run on.
    let script = if given.is_empty() {
        match p.first() {
            Some(s) => s.to_owned(),
            None => return Verdict::unknown("sed without a script"),
        }
    } else {
        given.join("\n")
    };
    if p.long("sandbox") {
        return Verdict::read("sed --sandbox cannot write or run commands");
    }
    match script_writes(&script) {
        Some(why) => Verdict::write(Risk::Medium, why),
        None => Verdict::read("sed prints to standard output only"),
    }
}

/// `None` when the script only reads; otherwise why it is not proved to.
pub(crate) fn script_writes(script: &str) -> Option<String> {
    let mut p = Parser {
        s: script.chars().collect(),
        pos: 0,
        depth: 0,
    };
    p.run().err()
}

struct Parser {
    s: Vec<char>,
    pos: usize,
    depth: usize,
}

type Step = Result<(), String>;

impl Parser {
    fn peek(&self) -> Option<char> {
        self.s.get(self.pos).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek();
        self.pos += 1;
        c
    }

    fn blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.pos += 1;
        }
    }

    fn skip_line(&mut self) {
        while self.peek().is_some_and(|c| c != '\n') {
            self.pos += 1;
        }
    }

    fn run(&mut self) -> Step {
        loop {
            while matches!(self.peek(), Some(' ' | '\t' | '\n' | ';')) {
                self.pos += 1;
            }
            match self.peek() {
                None if self.depth == 0 => return Ok(()),
                None => return Err("sed: a block { without its }".into()),
                Some('#') => self.skip_line(),
                Some('}') => {
                    self.pos += 1;
                    self.depth = self.depth.checked_sub(1).ok_or("sed: a } without its {")?;
                    self.end_of_command()?;
                }
                Some(_) => {
                    self.addresses()?;
                    self.command()?;
                }
            }
        }
    }

    /// After a command: blanks, then a separator, a comment, `}` or the end.
    fn end_of_command(&mut self) -> Step {
        self.blanks();
        match self.peek() {
            None | Some('\n' | ';' | '}' | '#') => Ok(()),
            Some(c) => Err(format!("sed: {c:?} after a command is not understood")),
        }
    }

    fn addresses(&mut self) -> Step {
        if !self.address()? {
            return Ok(());
        }
        self.blanks();
        if self.peek() == Some(',') {
            self.pos += 1;
            self.blanks();
            if matches!(self.peek(), Some('+' | '~')) {
                self.pos += 1;
                if !self.digits() {
                    return Err("sed: a number must follow + or ~ in an address".into());
                }
            } else if !self.address()? {
                return Err("sed: a second address is missing".into());
            }
        }
        self.blanks();
        if self.peek() == Some('!') {
            self.pos += 1;
            self.blanks();
        }
        Ok(())
    }

    fn digits(&mut self) -> bool {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        self.pos > start
    }

    /// One address; false when there is none here.
    fn address(&mut self) -> Result<bool, String> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                self.digits();
                if self.peek() == Some('~') {
                    self.pos += 1;
                    self.digits();
                }
            }
            Some('$') => self.pos += 1,
            Some('/') => {
                self.pos += 1;
                self.regex('/')?;
                self.regex_flags();
            }
            Some('\\') => {
                self.pos += 1;
                let d = self.delimiter()?;
                self.regex(d)?;
                self.regex_flags();
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn regex_flags(&mut self) {
        while matches!(self.peek(), Some('I' | 'M')) {
            self.pos += 1;
        }
    }

    /// A regular expression up to the delimiter `d`. A bracket expression may not hold
    /// the delimiter, a backslash or a line break, so that sed versions that do and do not
    /// look for brackets when they search for the delimiter split it the same way.
    fn regex(&mut self, d: char) -> Step {
        loop {
            match self.bump() {
                None => return Err("sed: an unterminated expression".into()),
                Some('\\') => match self.bump() {
                    Some('\n') | None => return Err("sed: a line break in an expression".into()),
                    Some(_) => {}
                },
                Some('\n') => return Err("sed: a line break in an expression".into()),
                Some('[') => self.bracket(d)?,
                Some(c) if c == d => return Ok(()),
                Some(_) => {}
            }
        }
    }

    /// After `[`: up to the `]` that closes the bracket expression (`]` first is literal,
    /// `[:class:]`, `[.x.]` and `[=x=]` are whole).
    fn bracket(&mut self, d: char) -> Step {
        let plain = |c: char| c != d && c != '\\' && c != '\n';
        if self.peek() == Some('^') {
            self.pos += 1;
        }
        if self.peek() == Some(']') {
            self.pos += 1;
        }
        loop {
            match self.bump() {
                Some(']') => return Ok(()),
                Some('[') if matches!(self.peek(), Some(':' | '.' | '=')) => {
                    let kind = self.bump().unwrap_or(':');
                    loop {
                        match self.bump() {
                            Some(c) if c == kind && self.peek() == Some(']') => {
                                self.pos += 1;
                                break;
                            }
                            Some(c) if plain(c) => {}
                            _ => return Err("sed: a bracket expression is not understood".into()),
                        }
                    }
                }
                Some(c) if plain(c) => {}
                _ => return Err("sed: a bracket expression holds the delimiter or \\".into()),
            }
        }
    }

    /// Replacement text (or `y` text) up to the delimiter; brackets are plain characters.
    fn plain_part(&mut self, d: char) -> Step {
        loop {
            match self.bump() {
                None => return Err("sed: an unterminated expression".into()),
                Some('\\') => {
                    if self.bump().is_none() {
                        return Err("sed: an unterminated expression".into());
                    }
                }
                Some('\n') => return Err("sed: a line break in an expression".into()),
                Some(c) if c == d => return Ok(()),
                Some(_) => {}
            }
        }
    }

    fn command(&mut self) -> Step {
        let Some(c) = self.bump() else {
            return Err("sed: an address without a command".into());
        };
        match c {
            '{' => {
                self.depth += 1;
                Ok(())
            }
            ':' => {
                if self.label() == 0 {
                    return Err("sed: a : without a label".into());
                }
                self.end_of_label()
            }
            'b' | 't' | 'T' => {
                self.blanks();
                self.label();
                self.end_of_label()
            }
            'a' | 'i' | 'c' => {
                self.aic_text();
                Ok(())
            }
            // The file name is the rest of the line; these only read it.
            'r' | 'R' => {
                self.skip_line();
                Ok(())
            }
            'w' | 'W' => Err(format!("sed {c} writes a file")),
            'e' => Err("sed e runs a shell command".into()),
            's' => self.substitute(),
            'y' => {
                let d = self.delimiter()?;
                self.plain_part(d)?;
                self.plain_part(d)?;
                self.end_of_command()
            }
            'l' | 'q' | 'Q' => {
                self.blanks();
                self.digits();
                self.end_of_command()
            }
            '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | 'F' => {
                self.end_of_command()
            }
            other => Err(format!("sed command {other:?} is not accepted")),
        }
    }

    /// A label: letters, digits and `_.-`; its length.
    fn label(&mut self) -> usize {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
        {
            self.pos += 1;
        }
        self.pos - start
    }

    /// sed versions end labels at a blank, at `;` or only at the line end; accept only a
    /// label followed (after blanks) by `;`, a line break or the end, where they agree.
    fn end_of_label(&mut self) -> Step {
        self.blanks();
        match self.peek() {
            None | Some('\n' | ';') => Ok(()),
            Some(c) => Err(format!("sed: {c:?} after a label is not understood")),
        }
    }

    /// `a`/`i`/`c` text: up to a line break that is not escaped (`\\` is an escaped
    /// backslash, so `foo\\` ends the text and the next line is a command).
    fn aic_text(&mut self) {
        while let Some(c) = self.bump() {
            match c {
                '\\' => self.pos += 1,
                '\n' => return,
                _ => {}
            }
        }
    }

    fn delimiter(&mut self) -> Result<char, String> {
        match self.bump() {
            Some(d) if !matches!(d, '\n' | '\\' | '[' | ']') => Ok(d),
            _ => Err("sed: a delimiter that is not accepted".into()),
        }
    }

    fn substitute(&mut self) -> Step {
        let d = self.delimiter()?;
        self.regex(d)?;
        self.plain_part(d)?;
        loop {
            match self.peek() {
                Some('g' | 'p' | 'i' | 'I' | 'm' | 'M') => self.pos += 1,
                Some(c) if c.is_ascii_digit() => self.pos += 1,
                Some('e') => return Err("sed s///e runs the pattern space as a command".into()),
                Some('w') => return Err("sed s///w writes a file".into()),
                _ => return self.end_of_command(),
            }
        }
    }
}

#[cfg(test)]
#[path = "sed_tests.rs"]
mod tests;
