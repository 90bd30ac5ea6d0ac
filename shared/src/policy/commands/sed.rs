//! A scanner for sed scripts: finds the commands and flags that write files or run
//! programs (`w`, `W`, `e`, `s///w`, `s///e`). Anything it cannot follow is a write.

/// `None` when the script only reads; otherwise why it is not read-only.
pub(crate) fn script_writes(script: &str) -> Option<String> {
    let mut s = Scanner {
        chars: script.chars().collect(),
        pos: 0,
    };
    s.run().err()
}

struct Scanner {
    chars: Vec<char>,
    pos: usize,
}

type Step = Result<(), String>;

impl Scanner {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek();
        self.pos += 1;
        c
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.pos += 1;
        }
    }

    fn rest_of_line(&mut self) -> String {
        let mut out = String::new();
        while let Some(c) = self.peek() {
            if c == '\n' {
                break;
            }
            out.push(c);
            self.pos += 1;
        }
        out
    }

    fn label(&mut self) {
        while let Some(c) = self.peek() {
            if c == '\n' || c == ';' || c == '}' {
                break;
            }
            self.pos += 1;
        }
    }

    /// Read up to an unescaped `delim`; newlines are allowed only when escaped.
    fn delimited(&mut self, delim: char) -> Step {
        let mut in_bracket = false;
        loop {
            match self.bump() {
                None => return Err("sed: unterminated expression".into()),
                Some('\\') => {
                    self.bump();
                }
                Some('[') if delim != '[' && !in_bracket => in_bracket = true,
                Some(']') if in_bracket => in_bracket = false,
                Some(c) if c == delim && !in_bracket => return Ok(()),
                Some('\n') if !in_bracket => return Err("sed: newline inside an expression".into()),
                Some(_) => {}
            }
        }
    }

    fn address(&mut self) -> Step {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.pos += 1;
                }
                if self.peek() == Some('~') {
                    self.pos += 1;
                    while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        self.pos += 1;
                    }
                }
            }
            Some('$') => self.pos += 1,
            Some('/') => {
                self.pos += 1;
                self.delimited('/')?;
                self.regex_flags();
            }
            Some('\\') => {
                self.pos += 1;
                let d = self.bump().ok_or("sed: bad address")?;
                self.delimited(d)?;
                self.regex_flags();
            }
            _ => {}
        }
        Ok(())
    }

    fn regex_flags(&mut self) {
        while matches!(self.peek(), Some('I' | 'M')) {
            self.pos += 1;
        }
    }

    fn run(&mut self) -> Step {
        loop {
            while matches!(self.peek(), Some(' ' | '\t' | '\n' | ';')) {
                self.pos += 1;
            }
            let Some(first) = self.peek() else {
                return Ok(());
            };
            if first == '#' {
                self.rest_of_line();
                continue;
            }
            if first == '}' {
                self.pos += 1;
                continue;
            }
            self.address()?;
            self.skip_blanks();
            if self.peek() == Some(',') {
                self.pos += 1;
                self.skip_blanks();
                if matches!(self.peek(), Some('+' | '~')) {
                    self.pos += 1;
                }
                self.address()?;
            }
            self.skip_blanks();
            while self.peek() == Some('!') {
                self.pos += 1;
                self.skip_blanks();
            }
            self.command()?;
        }
    }

    fn command(&mut self) -> Step {
        let Some(c) = self.bump() else {
            return Err("sed: missing command".into());
        };
        match c {
            '{' => Ok(()),
            '}' => Ok(()),
            ':' | 'b' | 't' | 'T' => {
                self.skip_blanks();
                self.label();
                Ok(())
            }
            'a' | 'i' | 'c' => {
                loop {
                    let line = self.rest_of_line();
                    if line.ends_with('\\') && self.peek() == Some('\n') {
                        self.pos += 1;
                        continue;
                    }
                    break;
                }
                Ok(())
            }
            'r' | 'R' => {
                self.rest_of_line();
                Ok(())
            }
            'w' | 'W' => {
                self.skip_blanks();
                let file = self.rest_of_line();
                check_output_file(c, &file)
            }
            'e' => Err("sed e runs a shell command".into()),
            's' => self.substitute(),
            'y' => {
                let d = self.bump().ok_or("sed: bad y command")?;
                self.delimited(d)?;
                self.delimited(d)
            }
            'q' | 'Q' | 'l' | 'L' => {
                self.skip_blanks();
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.pos += 1;
                }
                Ok(())
            }
            '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | 'F' => {
                Ok(())
            }
            'v' => {
                self.label();
                Ok(())
            }
            other => Err(format!("sed command {other:?} is not understood")),
        }
    }

    fn substitute(&mut self) -> Step {
        let d = self.bump().ok_or("sed: bad s command")?;
        if d == '\n' || d == '\\' {
            return Err("sed: bad s delimiter".into());
        }
        self.delimited(d)?;
        self.delimited(d)?;
        loop {
            match self.peek() {
                Some('g' | 'p' | 'i' | 'I' | 'm' | 'M') => self.pos += 1,
                Some(c) if c.is_ascii_digit() => self.pos += 1,
                Some('e') => return Err("sed s///e runs the pattern space as a command".into()),
                Some('w') => {
                    self.pos += 1;
                    self.skip_blanks();
                    let file = self.rest_of_line();
                    return check_output_file('w', &file);
                }
                None | Some(' ' | '\t' | '\n' | ';' | '}') => return Ok(()),
                Some(other) => return Err(format!("sed s flag {other:?} is not understood")),
            }
        }
    }
}

fn check_output_file(cmd: char, file: &str) -> Step {
    match file.trim() {
        "/dev/stdout" | "/dev/stderr" => Ok(()),
        f => Err(format!("sed {cmd} writes to {f}")),
    }
}

#[cfg(test)]
mod tests {
    use super::script_writes;

    #[test]
    fn reads() {
        for s in [
            "1,20p",
            "s/a/b/g",
            "/^#/d; s|x|y|2",
            "$!N;P;D",
            "/start/,/end/{ /x/d; p }",
            "s/[/]/x/",
            "y/abc/xyz/",
            "10q",
            "1~2p",
            ":a;N;$!ba;s/\\n/ /g",
        ] {
            assert_eq!(script_writes(s), None, "{s}");
        }
    }

    #[test]
    fn writes() {
        for s in [
            "w /tmp/x",
            "s/a/b/w /etc/passwd",
            "1e rm x",
            "s/.*/id/e",
            "1W out",
            "s/a/b/gw x",
            "Z",
            "s/a/b/q",
        ] {
            assert!(script_writes(s).is_some(), "{s}");
        }
    }
}
