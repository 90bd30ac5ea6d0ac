//! The rules applied within one line (PEM blocks are handled by the line machine in
//! `mod.rs`). Each rule returns the rewritten line, or `None` when it changed nothing.

use super::MARKER;
use super::names::{is_plainly_not_secret, is_secret_name};
use regex::{Captures, Regex};
use std::sync::LazyLock;

fn compile(pattern: &str) -> Regex {
    match Regex::new(pattern) {
        Ok(re) => re,
        // The patterns are constants covered by the unit tests.
        Err(error) => panic!("redaction pattern {pattern:?}: {error}"),
    }
}

/// Token shapes that are secrets wherever they appear: JWTs, AWS access key ids, GitHub,
/// Slack, Google, OpenAI/Anthropic, Stripe and age keys.
static TOKENS: LazyLock<Regex> = LazyLock::new(|| {
    compile(concat!(
        r"\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*",
        r"|\b(?:AKIA|ASIA)[A-Z0-9]{16}\b",
        r"|\bgh[pousr]_[A-Za-z0-9]{30,255}\b",
        r"|\bgithub_pat_[A-Za-z0-9_]{22,255}\b",
        r"|\bxox[abposr]-[A-Za-z0-9-]{10,}",
        r"|\bAIza[0-9A-Za-z_-]{35}",
        r"|\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}",
        r"|\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}",
        r"|\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b",
        // Vigil's own: API tokens (`vat_`), join tokens (`vjt_`) and the grant-signing key
        // file (`vgk_`), each a prefix and lowercase hex (controller/src/store/api_tokens.rs,
        // pki/join_token.rs, pki/grant_key.rs).
        r"|\bv(?:at|jt|gk)_[0-9a-f]{16,}\b",
    ))
});

/// `Authorization:` / `Proxy-Authorization:` headers, in any quoting.
static HEADER: LazyLock<Regex> =
    LazyLock::new(|| compile(r#"(?i)\b(?:proxy-)?authorization(?:\\?["'])?[ \t]*[:=][ \t]*"#));

/// A bare `Bearer <token>`.
static BEARER: LazyLock<Regex> =
    LazyLock::new(|| compile(r"(?i)\bbearer[ \t]+([A-Za-z0-9._~+/-]{16,}=*)"));

/// `scheme://user:` — the password follows, up to the authority's last `@`.
static URL_USER: LazyLock<Regex> =
    LazyLock::new(|| compile(r#"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:\[\]"'<>]*:"#));

/// `NAME=`, `NAME:`, `"name":`, `NAME :=` — whether NAME is a secret is decided in code.
static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r#"(?i)([A-Za-z0-9_.-]*(?:passwd|passphrase|pass|pwd|password|token|secret|credentials?|key))(?:\\?["'])?[ \t]*(:=|[:=])"#,
    )
});

/// `--password secret` (a flag and its value separated by spaces).
static FLAG: LazyLock<Regex> =
    LazyLock::new(|| compile(r#"(?:^|[\s"'])(--[A-Za-z0-9][A-Za-z0-9_-]*)[ \t]+"#));

/// Password options whose value follows directly, for the commands where they mean that:
/// `mysql -pSECRET`, `sshpass -p SECRET`, `redis-cli -a SECRET`, `curl -u user:SECRET`.
static CLI_PASSWORD: LazyLock<Regex> = LazyLock::new(|| {
    compile(concat!(
        r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mariadb|mariadb-dump)\b[^\n]*?[ \t]-p",
        r"|\bsshpass\b[^\n]*?[ \t]-p[ \t]*",
        r"|\bredis-cli\b[^\n]*?[ \t]-a[ \t]+",
        r#"|\bcurl\b[^\n]*?[ \t](?:-u|--user)[ \t]+["']?[^\s:"']*:"#,
    ))
});

/// `{"name": "DB_PASSWORD", "value": "…"}` on one line (ECS task definitions, Kubernetes
/// env in JSON).
static NAME_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    compile(r#""name"[ \t]*:[ \t]*"([A-Za-z0-9_.-]+)"[ \t]*,[ \t]*"value"[ \t]*:[ \t]*"#)
});

/// A YAML `- name: DB_PASSWORD` line, whose next line may be `value: …`.
pub(super) static NAME_LINE: LazyLock<Regex> = LazyLock::new(|| {
    compile(r#"^[ \t]*(?:-[ \t]+)?"?name"?[ \t]*:[ \t]*["']?([A-Za-z0-9_.-]+)["']?[ \t]*,?[ \t]*$"#)
});

/// The `value:` line after a secret's `name:` line.
pub(super) static VALUE_LINE: LazyLock<Regex> =
    LazyLock::new(|| compile(r#"^[ \t]*"?value"?[ \t]*:[ \t]*"#));

/// How far an unquoted value reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Reach {
    /// Up to whitespace or a separator (`&`, `,`, `;`, quotes, closing brackets).
    Word,
    /// To the end of the line, before a ` #` comment, without trailing blanks.
    RestOfLine,
}

/// The span of the value that starts at byte `at` of `line`, inside its quotes if quoted;
/// `None` when there is no value or it is plainly not a secret.
pub(super) fn value_span(line: &str, at: usize, reach: Reach) -> Option<(usize, usize)> {
    let rest = line.get(at..)?;
    if rest.starts_with(MARKER) {
        return None;
    }
    let (start, end) = if let Some(inner) = rest.strip_prefix("\\\"") {
        let start = at + 2;
        (start, inner.find("\\\"").map_or(line.len(), |i| start + i))
    } else if let Some(quote) = rest.chars().next().filter(|c| matches!(c, '"' | '\'')) {
        let start = at + 1;
        (
            start,
            closing_quote(&rest[1..], quote).map_or(line.len(), |i| start + i),
        )
    } else {
        let len = match reach {
            Reach::Word => rest
                .find(|c: char| {
                    c.is_whitespace()
                        || matches!(
                            c,
                            '&' | ',' | ';' | '"' | '\'' | '`' | ')' | '}' | ']' | '<' | '>'
                        )
                })
                .unwrap_or(rest.len()),
            Reach::RestOfLine => {
                let cut = rest.find(" #").unwrap_or(rest.len());
                rest[..cut].trim_end().len()
            }
        };
        (at, at + len)
    };
    let value = line.get(start..end)?;
    (!is_plainly_not_secret(value)).then_some((start, end))
}

/// The index of the first `quote` not escaped by a backslash.
fn closing_quote(text: &str, quote: char) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            _ if c == quote => return Some(i),
            _ => {}
        }
    }
    None
}

/// Replace, for each match of `re`, the span `value(&captures)` returns with MARKER.
fn splice(
    line: &str,
    re: &Regex,
    count: &mut usize,
    mut value: impl FnMut(&Captures<'_>) -> Option<(usize, usize)>,
) -> Option<String> {
    let mut out = String::new();
    let (mut last, mut pos, mut changed) = (0, 0, false);
    while pos <= line.len() {
        let Some(caps) = re.captures_at(line, pos) else {
            break;
        };
        let Some(whole) = caps.get(0) else { break };
        pos = whole.end().max(pos + 1);
        while !line.is_char_boundary(pos.min(line.len())) {
            pos += 1;
        }
        if let Some((start, end)) = value(&caps).filter(|&(s, e)| s >= last && e > s) {
            out.push_str(&line[last..start]);
            out.push_str(MARKER);
            last = end;
            pos = pos.max(end);
            *count += 1;
            changed = true;
        }
    }
    changed.then(|| {
        out.push_str(&line[last..]);
        out
    })
}

fn tokens(line: &str, count: &mut usize) -> Option<String> {
    splice(line, &TOKENS, count, |caps| {
        let m = caps.get(0)?;
        let text = m.as_str();
        // An `sk-` word counts as a key only when it mixes digits and letters.
        let plausible = !text.starts_with("sk-")
            || (text.bytes().any(|b| b.is_ascii_digit())
                && text[3..].bytes().any(|b| b.is_ascii_alphabetic()));
        plausible.then_some((m.start(), m.end()))
    })
}

fn header(line: &str, count: &mut usize) -> Option<String> {
    const SINGLE_TOKEN_SCHEMES: &[&str] = &["bearer", "basic", "token", "apikey", "key"];
    splice(line, &HEADER, count, |caps| {
        let whole = caps.get(0)?;
        let at = whole.end();
        let rest = &line[at..];
        // The header value is quoted itself, or the whole header is (`-H 'Authorization: …'`).
        let quote = ["\\\"", "\"", "'"]
            .iter()
            .find(|q| rest.starts_with(**q))
            .map(|q| (at + q.len(), *q))
            .or_else(|| {
                let before = line[..whole.start()].chars().next_back()?;
                matches!(before, '"' | '\'')
                    .then_some((at, &line[whole.start() - 1..whole.start()]))
            });
        let (start, end) = match quote {
            Some((start, q)) => (
                start,
                line[start..].find(q).map_or(line.len(), |i| start + i),
            ),
            None => (at, at + line[at..].trim_end().len()),
        };
        let region = &line[start..end];
        let first_len = region.find(char::is_whitespace).unwrap_or(region.len());
        let after = region[first_len..].trim_start();
        if after.is_empty() {
            let scheme = region.to_ascii_lowercase();
            if SINGLE_TOKEN_SCHEMES.contains(&scheme.as_str()) || is_plainly_not_secret(region) {
                return None;
            }
            return Some((start, end));
        }
        let value_start = end - after.len();
        let scheme = region[..first_len].to_ascii_lowercase();
        let value_end = if SINGLE_TOKEN_SCHEMES.contains(&scheme.as_str()) {
            value_start
                + after
                    .find(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '"' | '\''))
                    .unwrap_or(after.len())
        } else {
            value_start + after.trim_end().len()
        };
        (!is_plainly_not_secret(&line[value_start..value_end])).then_some((value_start, value_end))
    })
}

fn bearer(line: &str, count: &mut usize) -> Option<String> {
    splice(line, &BEARER, count, |caps| {
        let m = caps.get(1)?;
        m.as_str()
            .bytes()
            .any(|b| b.is_ascii_digit())
            .then_some((m.start(), m.end()))
    })
}

fn url_credentials(line: &str, count: &mut usize) -> Option<String> {
    splice(line, &URL_USER, count, |caps| {
        let at = caps.get(0)?.end();
        let rest = &line[at..];
        let authority = rest
            .find(|c: char| {
                c.is_whitespace() || matches!(c, '/' | '?' | '#' | '"' | '\'' | '<' | '>')
            })
            .unwrap_or(rest.len());
        let at_sign = rest[..authority].rfind('@')?;
        let password = &rest[..at_sign];
        (!password.is_empty() && !password.starts_with(MARKER)).then_some((at, at + at_sign))
    })
}

fn assignment(line: &str, count: &mut usize) -> Option<String> {
    splice(line, &ASSIGNMENT, count, |caps| {
        let whole = caps.get(0)?;
        let name = caps.get(1)?;
        let before = line[..name.start()].chars().next_back();
        // `/etc/ssl/server.key:` is a file name; `${PASSWORD:-x}` is a shell default.
        if matches!(before, Some('/' | '{' | '$')) || !is_secret_name(name.as_str()) {
            return None;
        }
        let separator = caps.get(2)?.as_str();
        let after_sep = &line[whole.end()..];
        if (separator == "=" && after_sep.starts_with(['=', '~']))
            || (separator == ":" && (after_sep.starts_with(':') || after_sep.starts_with("//")))
        {
            return None;
        }
        let spaced = after_sep.starts_with([' ', '\t']);
        let at = whole.end() + (after_sep.len() - after_sep.trim_start_matches([' ', '\t']).len());
        let reach = if spaced || separator == ":" && line[..whole.end()].ends_with(": ") {
            Reach::RestOfLine
        } else {
            Reach::Word
        };
        value_span(line, at, reach)
    })
}

fn flag(line: &str, count: &mut usize) -> Option<String> {
    splice(line, &FLAG, count, |caps| {
        let name = caps.get(1)?.as_str();
        let bare = name.trim_start_matches('-');
        if bare.starts_with("no-") || !is_secret_name(name) {
            return None;
        }
        let at = caps.get(0)?.end();
        let (start, end) = value_span(line, at, Reach::Word)?;
        let value = &line[start..end];
        // `--secret id=x,src=y` is a specification, and `--password --user` has no value.
        (!value.starts_with('-') && !value.contains('=')).then_some((start, end))
    })
}

fn cli_password(line: &str, count: &mut usize) -> Option<String> {
    splice(line, &CLI_PASSWORD, count, |caps| {
        value_span(line, caps.get(0)?.end(), Reach::Word)
    })
}

fn name_value(line: &str, count: &mut usize) -> Option<String> {
    splice(line, &NAME_VALUE, count, |caps| {
        if !is_secret_name(caps.get(1)?.as_str()) {
            return None;
        }
        value_span(line, caps.get(0)?.end(), Reach::Word)
    })
}

/// The `value:` of a line that follows a secret's `name:` line.
pub(super) fn value_line(line: &str, count: &mut usize) -> Option<String> {
    splice(line, &VALUE_LINE, count, |caps| {
        value_span(line, caps.get(0)?.end(), Reach::RestOfLine)
    })
}

type Rule = fn(&str, &mut usize) -> Option<String>;

/// In order: structured forms first (they keep the most context), token shapes last.
const RULES: &[Rule] = &[
    header,
    url_credentials,
    name_value,
    cli_password,
    flag,
    assignment,
    bearer,
    tokens,
];

/// Apply every rule to one piece of a line until nothing changes (at most a few rounds, so
/// a rule that uncovers another's match still converges); returns the text and how many
/// values were replaced.
pub(super) fn redact_inline(piece: &str, count: &mut usize) -> String {
    let mut text = piece.to_owned();
    for _ in 0..4 {
        let mut changed = false;
        for rule in RULES {
            if let Some(next) = rule(&text, count) {
                text = next;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    text
}
