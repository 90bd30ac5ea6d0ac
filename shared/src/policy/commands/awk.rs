//! awk: the options, and a tokenizer for awk programs that refuses anything that runs a
//! program or writes a file (`system`, pipes, `print > file`, `getline`, `@…`).
//!
//! The tokenizer has to tell a regular expression `/re/` from a division, because a
//! regular expression may hide `#`, `|` or `>`. It decides from the token before the
//! slash: after an operand (a name, a number, a string, `)` or `]`) it is a division,
//! after an operator, a separator or `print`/`printf`/`return`/… a regular expression,
//! and after `++`, `--`, `$` or `if (…)`, where gawk and mawk disagree, the program is
//! refused.

use super::super::args::{Opt, Spec};
use super::super::types::Risk;
use super::super::verdict::Verdict;
use super::Cmd;

/// Options accepted: `-F`, `-v`, `-S`/`--sandbox`, gawk's program text `-e`/`--source`,
/// and those that only change parsing.
const SHORTS: &str = "FvSe";
const LONGS: &[&str] = &[
    "source",
    "field-separator",
    "assign",
    "sandbox",
    "posix",
    "traditional",
    "re-interval",
    "characters-as-bytes",
];

/// `awk [OPTION]… PROGRAM [FILE|VAR=VALUE]…`.
pub(crate) fn classify(cmd: &Cmd<'_>) -> Verdict {
    let p = cmd.parse(Spec {
        short_values: "FvfEilWe",
        long_values: &[
            "field-separator",
            "assign",
            "file",
            "exec",
            "include",
            "load",
            "source",
        ],
        ..Spec::default()
    });
    // -f/-E/--exec/-W exec (program files), -i/-l (includes, extensions), -W (mawk's and
    // gawk's extra options), -d/-p/-o (dump, profile and pretty-print write files), -D
    // (debugger): none is proved to only read.
    if let Some(option) = p.unlisted(SHORTS, LONGS) {
        return Verdict::unknown(format!("awk option {option} is not accepted"));
    }
    if p.dynamic {
        return cmd.dynamic_write();
    }
    // gawk's `-e TEXT`/`--source=TEXT` may be given many times, each a separate piece of
    // program text (no token spans two); scanned as one text joined by line breaks, which
    // end every token the scanner follows. Without one, the first operand is the program.
    let mut pieces: Vec<&str> = p.short_values('e').collect();
    pieces.extend(p.opts.iter().filter_map(|o| match o {
        Opt::Long(l, v) if p.matches(l, "source") => v.as_deref(),
        _ => None,
    }));
    let program = if pieces.is_empty() {
        match p.first() {
            Some(program) => program.to_owned(),
            None => return Verdict::unknown("awk without a program"),
        }
    } else {
        pieces.join("\n")
    };
    match program_writes(&program) {
        Some(why) => Verdict::write(Risk::High, why),
        None => Verdict::read("awk program only prints"),
    }
}

/// What the previous token lets a `/` be.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slash {
    Regex,
    Division,
    Unsure,
}

/// Names after which an expression starts, so a `/` begins a regular expression.
const EXPRESSION_KEYWORDS: &[&str] = &[
    "print", "printf", "return", "else", "do", "exit", "case", "in",
];

/// `None` when the program only reads; otherwise why it is not proved to.
pub(crate) fn program_writes(program: &str) -> Option<String> {
    Tokens {
        s: program.chars().collect(),
        i: 0,
        slash: Slash::Regex,
        depth: 0,
        print_depth: None,
        conditions: Vec::new(),
        pending_condition: false,
        last: ';',
    }
    .run()
    .err()
}

struct Tokens {
    s: Vec<char>,
    i: usize,
    slash: Slash,
    /// Parenthesis depth.
    depth: usize,
    /// Inside a `print`/`printf` statement: the depth it started at.
    print_depth: Option<usize>,
    /// For each open parenthesis, whether it holds an `if`/`while`/`for` condition.
    conditions: Vec<bool>,
    /// The last name was `if`, `while` or `for`.
    pending_condition: bool,
    /// The first character of the last token.
    last: char,
}

impl Tokens {
    fn at(&self, i: usize) -> Option<char> {
        self.s.get(i).copied()
    }

    fn run(&mut self) -> Result<(), String> {
        while let Some(c) = self.at(self.i) {
            if !matches!(c, ' ' | '\t' | '\r' | '\n' | '\\' | '#') {
                self.last = c;
            }
            let condition = std::mem::take(&mut self.pending_condition);
            match c {
                ' ' | '\t' | '\r' => {
                    self.pending_condition = condition;
                    self.i += 1;
                }
                '\\' if self.at(self.i + 1) == Some('\n') => self.i += 2,
                // A print statement goes on past a line break inside its parentheses or
                // after `,`, `&&` and `||` (`print 1,⏎2 > "f"` writes f).
                '\n' if self.print_depth.is_some_and(|d| self.depth > d)
                    || matches!(self.last, ',' | '&' | '|') =>
                {
                    self.slash = Slash::Regex;
                    self.i += 1;
                }
                '\n' | ';' | '{' | '}' => {
                    self.print_depth = None;
                    self.slash = Slash::Regex;
                    self.i += 1;
                }
                '#' => {
                    while self.at(self.i).is_some_and(|c| c != '\n') {
                        self.i += 1;
                    }
                }
                '"' => self.string()?,
                '/' => match self.slash {
                    Slash::Regex => self.regex()?,
                    Slash::Division => {
                        self.i += 1;
                        self.slash = Slash::Regex;
                    }
                    Slash::Unsure => {
                        return Err("awk: a / after ++, --, $ or if (…) is read differently by \
                                    gawk and mawk"
                            .into());
                    }
                },
                c if c.is_ascii_alphabetic() || c == '_' => self.name()?,
                c if c.is_ascii_digit() || c == '.' => {
                    while self
                        .at(self.i)
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '.')
                    {
                        self.i += 1;
                    }
                    self.slash = Slash::Division;
                }
                '(' => {
                    self.conditions.push(condition);
                    self.depth += 1;
                    self.slash = Slash::Regex;
                    self.i += 1;
                }
                ')' => {
                    let was_condition = self.conditions.pop().ok_or("awk: an unmatched )")?;
                    self.depth -= 1;
                    // After `if (…)` a statement starts: gawk reads a `/` there as a
                    // regular expression, mawk as an error.
                    self.slash = if was_condition {
                        Slash::Unsure
                    } else {
                        Slash::Division
                    };
                    self.i += 1;
                }
                ']' | '$' => {
                    self.slash = if c == ']' {
                        Slash::Division
                    } else {
                        Slash::Unsure
                    };
                    self.i += 1;
                }
                '+' | '-' if self.at(self.i + 1) == Some(c) => {
                    self.slash = Slash::Unsure;
                    self.i += 2;
                }
                '|' if self.at(self.i + 1) == Some('|') => {
                    self.slash = Slash::Regex;
                    self.i += 2;
                }
                '|' => return Err("awk pipe runs a shell command".into()),
                '>' if self.print_depth.is_some_and(|d| self.depth <= d) => {
                    return Err("awk print > writes to a file".into());
                }
                '@' => return Err("awk @load/@include or an indirect call brings in code".into()),
                c if "[,+-*%^!~=<>?:&".contains(c) => {
                    self.slash = Slash::Regex;
                    self.i += 1;
                }
                other => return Err(format!("awk: {other:?} is not understood")),
            }
        }
        Ok(())
    }

    fn name(&mut self) -> Result<(), String> {
        let start = self.i;
        while self
            .at(self.i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            self.i += 1;
        }
        let name: String = self.s[start..self.i].iter().collect();
        match name.as_str() {
            "system" => return Err("awk system() runs a shell command".into()),
            "getline" => return Err("awk getline reads from a command or a file".into()),
            "print" | "printf" => self.print_depth = Some(self.depth),
            "if" | "while" | "for" => self.pending_condition = true,
            _ => {}
        }
        self.slash = if EXPRESSION_KEYWORDS.contains(&name.as_str()) {
            Slash::Regex
        } else {
            Slash::Division
        };
        Ok(())
    }

    fn string(&mut self) -> Result<(), String> {
        self.i += 1;
        loop {
            match self.at(self.i) {
                Some('"') => break,
                Some('\\') => self.i += 2,
                Some('\n') | None => return Err("awk: an unterminated string".into()),
                Some(_) => self.i += 1,
            }
        }
        self.i += 1;
        self.slash = Slash::Division;
        Ok(())
    }

    /// `/re/`. A bracket expression may not hold `/`, `\` or a line break: awks differ in
    /// whether a slash there ends the expression.
    fn regex(&mut self) -> Result<(), String> {
        self.i += 1;
        let mut bracket = false;
        loop {
            let c = self
                .at(self.i)
                .ok_or("awk: an unterminated regular expression")?;
            match c {
                '\n' => return Err("awk: a line break in a regular expression".into()),
                '\\' | '/' if bracket => {
                    return Err("awk: / or \\ inside a bracket expression".into());
                }
                '\\' if matches!(self.at(self.i + 1), Some('\n') | None) => {
                    return Err("awk: a line break in a regular expression".into());
                }
                '\\' => self.i += 1,
                '/' => break,
                '[' if !bracket => {
                    bracket = true;
                    if self.at(self.i + 1) == Some('^') {
                        self.i += 1;
                    }
                    if self.at(self.i + 1) == Some(']') {
                        self.i += 1;
                    }
                }
                '[' if matches!(self.at(self.i + 1), Some(':' | '.' | '=')) => {
                    let kind = self.at(self.i + 1).unwrap_or(':');
                    self.i += 2;
                    while !(self.at(self.i) == Some(kind) && self.at(self.i + 1) == Some(']')) {
                        match self.at(self.i) {
                            Some('/' | '\\' | '\n') | None => {
                                return Err("awk: a bracket expression is not understood".into());
                            }
                            Some(_) => self.i += 1,
                        }
                    }
                    self.i += 1;
                }
                ']' if bracket => bracket = false,
                _ => {}
            }
            self.i += 1;
        }
        self.i += 1;
        self.slash = Slash::Division;
        Ok(())
    }
}

#[cfg(test)]
#[path = "awk_tests.rs"]
mod tests;
