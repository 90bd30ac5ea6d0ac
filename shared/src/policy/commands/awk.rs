//! A scanner for awk programs: refuses anything that runs a program or writes a file
//! (`system()`, pipes, `print > file`, `@load`/`@include`).

/// `None` when the program only reads; otherwise why not.
pub(crate) fn program_writes(program: &str) -> Option<String> {
    let chars: Vec<char> = program.chars().collect();
    let mut i = 0;
    let mut prev = ' '; // last significant character, for telling regex from division
    let mut in_print = false;
    let mut depth = 0i32;
    let mut ident = String::new();
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_alphanumeric() || c == '_' {
            ident.push(c);
            i += 1;
            prev = c;
            continue;
        }
        if !ident.is_empty() {
            match ident.as_str() {
                "system" => return Some("awk system() runs a shell command".into()),
                "print" | "printf" => {
                    in_print = true;
                    depth = 0;
                }
                _ => {}
            }
            ident.clear();
        }
        match c {
            '"' => {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                prev = '"';
            }
            '/' if !(prev.is_ascii_alphanumeric()
                || matches!(prev, ')' | ']' | '_' | '"' | '$')) =>
            {
                i += 1;
                let mut bracket = false;
                while i < chars.len() && (chars[i] != '/' || bracket) {
                    match chars[i] {
                        '\\' => i += 1,
                        '[' => bracket = true,
                        ']' => bracket = false,
                        _ => {}
                    }
                    i += 1;
                }
                prev = ')';
            }
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '@' => return Some("awk @load/@include brings in outside code".into()),
            '|' => {
                if chars.get(i + 1) == Some(&'|') {
                    i += 1;
                } else {
                    return Some("awk pipe runs a shell command".into());
                }
                prev = '|';
            }
            '(' => {
                depth += 1;
                prev = c;
            }
            ')' => {
                depth -= 1;
                prev = c;
            }
            '>' if in_print && depth <= 0 => return Some("awk print > writes to a file".into()),
            ';' | '\n' | '}' | '{' => {
                in_print = false;
                prev = c;
            }
            ' ' | '\t' | '\r' => {}
            _ => prev = c,
        }
        i += 1;
    }
    if ident == "system" {
        return Some("awk system() runs a shell command".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::program_writes;

    #[test]
    fn reads() {
        for p in [
            "{print $1}",
            "$3 > 100 {print $1, $3}",
            "/a|b/ {n++} END {print n}",
            "{ printf \"%s\\n\", ($2 > 5) }",
            "NR==1 || /x/",
            "{s+=$1/1024} END {print s}",
            "-F: '{print $1}'",
        ] {
            assert_eq!(program_writes(p), None, "{p}");
        }
    }

    #[test]
    fn writes() {
        for p in [
            "BEGIN { system(\"id > /tmp/id\") }",
            "{print > \"/tmp/x\"}",
            "{print $1 >> \"f\"}",
            "{print | \"sh\"}",
            "BEGIN { \"date\" | getline d }",
            "@load \"x\"",
            "{printf \"%s\", $1 > \"/etc/x\"}",
            "BEGIN{system (\"x\")}",
        ] {
            assert!(program_writes(p).is_some(), "{p}");
        }
    }
}
