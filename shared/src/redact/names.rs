//! Which assignment names hold secrets, and which values are plainly not secrets.

use super::MARKER;

/// Name endings that mark a secret wherever they end a name (`PGPASSWORD`, `csrftoken`).
const STRONG: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "token",
    "secret",
    "credentials",
    "credential",
    "apikey",
    "accesskey",
    "secretkey",
    "privatekey",
];

/// Name endings that mark a secret only after a separate word (`DB_PASS`, `tls.key`,
/// `apiKey`), never on their own (`key:`, `PWD=`) nor inside a word (`monkey`, `OLDPWD`).
const WEAK: &[&str] = &["key", "pass", "pwd"];

/// Words before `_KEY` that make it a data-structure or public key, not a secret.
const KEY_NOT_SECRET: &[&str] = &[
    "primary",
    "foreign",
    "sort",
    "partition",
    "hash",
    "range",
    "public",
    "pub",
    "cache",
    "idempotency",
    "routing",
    "shard",
    "unique",
    "lookup",
    "group",
    "row",
    "object",
    "map",
    "index",
    "composite",
    "natural",
    "surrogate",
    "column",
    "label",
    "node",
    "meta",
    "metadata",
    "selector",
    "match",
    "dedup",
    "lock",
    "table",
    "record",
    "entity",
    "field",
    "property",
    "attribute",
    "registry",
    "sharding",
    "distribution",
];

/// Words before `_TOKEN` that make it a pagination cursor or a count, not a credential.
const TOKEN_NOT_SECRET: &[&str] = &[
    "next",
    "page",
    "continuation",
    "pagination",
    "cursor",
    "resume",
    "max",
    "min",
    "num",
    "sync",
];

/// Words before `_PASS` that make it a pass of an algorithm or a test, not a password.
const PASS_NOT_SECRET: &[&str] = &[
    "first", "second", "third", "last", "single", "multi", "two", "one", "test", "tests", "compile",
];

/// Whether an assignment name (`DB_PASSWORD`, `--api-key`, `tls.key`, `apiKey`) names a
/// secret. Leading dashes (CLI flags, `-Dpassword`) are ignored.
pub(super) fn is_secret_name(name: &str) -> bool {
    let name = name.trim_start_matches('-');
    let lower = name.to_ascii_lowercase();
    for suffix in STRONG {
        if let Some(prefix) = lower.strip_suffix(suffix) {
            let word = last_word(&name[..prefix.len()]);
            return !(suffix.ends_with("token") && TOKEN_NOT_SECRET.contains(&word.as_str()));
        }
    }
    for suffix in WEAK {
        let Some(prefix) = lower.strip_suffix(suffix) else {
            continue;
        };
        if prefix.is_empty() || !word_boundary(name, prefix.len()) {
            return false;
        }
        let word = last_word(&name[..prefix.len()]);
        let deny = match *suffix {
            "key" => KEY_NOT_SECRET,
            "pass" => PASS_NOT_SECRET,
            _ => &[],
        };
        return !deny.contains(&word.as_str());
    }
    false
}

/// Whether a word starts at byte `at` of `name`: after a separator, or at a camelCase step.
fn word_boundary(name: &str, at: usize) -> bool {
    let bytes = name.as_bytes();
    let (Some(&prev), Some(&next)) = (bytes.get(at.wrapping_sub(1)), bytes.get(at)) else {
        return false;
    };
    matches!(prev, b'_' | b'-' | b'.')
        || (next.is_ascii_uppercase() && (prev.is_ascii_lowercase() || prev.is_ascii_digit()))
}

/// The last word of a name prefix, lower-cased: `AWS_SECRET_ACCESS_` → `access`,
/// `sortKey`'s `sort` → `sort`, `SecretAccess` → `access`.
fn last_word(prefix: &str) -> String {
    let trimmed = prefix.trim_end_matches(['_', '-', '.']);
    let tail = trimmed
        .rsplit(['_', '-', '.'])
        .next()
        .unwrap_or(trimmed)
        .as_bytes();
    let mut start = 0;
    for i in 1..tail.len() {
        if tail[i].is_ascii_uppercase() && tail[i - 1].is_ascii_lowercase() {
            start = i;
        }
    }
    String::from_utf8_lossy(&tail[start..]).to_ascii_lowercase()
}

/// Whether a value (without its quotes) is plainly not a secret: empty, already redacted,
/// a boolean or null, a placeholder (`***`, `<password>`), a reference to another value
/// (`$DB_PASSWORD`, `${…}`, `{{ … }}`), a file path, the start of a nested structure
/// (`{`, `|`), `kubectl describe secret`'s `12 bytes`, a public SSH key or certificate, or
/// an nsswitch source list (`passwd: files systemd`).
pub(super) fn is_plainly_not_secret(value: &str) -> bool {
    let v = value.trim();
    let lower = v.to_ascii_lowercase();
    v.is_empty()
        || v.starts_with(MARKER)
        || matches!(
            lower.as_str(),
            "true"
                | "false"
                | "yes"
                | "no"
                | "on"
                | "off"
                | "null"
                | "none"
                | "nil"
                | "~"
                | "undefined"
                | "redacted"
                | "(none)"
                | "(sensitive value)"
                | "(sensitive)"
                | "{"
                | "["
                | "{}"
                | "[]"
                | "|"
                | "|-"
                | "|+"
                | ">"
                | ">-"
                | ">+"
        )
        || v.bytes().all(|b| b == b'*')
        || (v.len() >= 3 && lower.bytes().all(|b| b == b'x'))
        || (v.starts_with('<') && v.ends_with('>'))
        || is_reference(v)
        || is_path(v)
        || is_byte_count(v)
        || is_public_material(v)
        || is_nsswitch(&lower)
}

fn is_reference(v: &str) -> bool {
    if v.starts_with("{{") || v.starts_with("${") || v.starts_with("$(") || v.starts_with("%(") {
        return true;
    }
    v.strip_prefix('$').is_some_and(|name| {
        name.bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    })
}

fn is_path(v: &str) -> bool {
    let rest = v
        .strip_prefix("~/")
        .or_else(|| v.strip_prefix("./"))
        .or_else(|| v.strip_prefix("../"))
        .or_else(|| v.strip_prefix('/'));
    rest.is_some_and(|rest| {
        !rest.is_empty()
            && (rest.contains('/') || rest.contains('.') || v.starts_with(['~', '.']))
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'/'))
    })
}

fn is_byte_count(v: &str) -> bool {
    v.strip_suffix(" bytes")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn is_public_material(v: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "ssh-rsa ",
        "ssh-ed25519 ",
        "ssh-dss ",
        "ecdsa-sha2-",
        "sk-ssh-ed25519@",
        "sk-ecdsa-sha2-",
        "-----BEGIN CERTIFICATE",
        "-----BEGIN PUBLIC KEY",
        "-----BEGIN RSA PUBLIC KEY",
    ];
    PREFIXES.iter().any(|p| v.starts_with(p))
}

fn is_nsswitch(lower: &str) -> bool {
    const SOURCES: &[&str] = &[
        "files",
        "systemd",
        "sss",
        "ldap",
        "nis",
        "nisplus",
        "compat",
        "db",
        "winbind",
        "dns",
        "mymachines",
        "resolve",
        "myhostname",
        "altfiles",
    ];
    lower.split_whitespace().all(|w| {
        SOURCES.contains(&w) || (w.starts_with('[') && w.ends_with(']') && w.contains('='))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for yes in [
            "DB_PASSWORD",
            "PGPASSWORD",
            "password",
            "apiKey",
            "tls.key",
            "aws_secret_access_key",
            "SecretAccessKey",
            "--api-key",
            "MYSQL_PWD",
            "SSH_PASS",
            "GITHUB_TOKEN",
            "client_secret",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "X-Api-Key",
            "APIKEY",
        ] {
            assert!(is_secret_name(yes), "{yes}");
        }
        for no in [
            "key",
            "PWD",
            "OLDPWD",
            "monkey",
            "MONKEY",
            "primary_key",
            "sortKey",
            "public_key",
            "PASSWORD_FILE",
            "next_token",
            "nextPageToken",
            "bypass",
            "GIT_ASKPASS",
            "token_expiry",
            "first_pass",
        ] {
            assert!(!is_secret_name(no), "{no}");
        }
    }

    #[test]
    fn values() {
        for no in [
            "",
            "true",
            "***",
            "<password>",
            "$DB_PASSWORD",
            "${X}",
            "/run/secrets/db",
            "12 bytes",
            "[REDACTED]",
            "files systemd",
            "{{ .Values.pw }}",
        ] {
            assert!(is_plainly_not_secret(no), "{no}");
        }
        for yes in ["hunter2", "/x8#kd", "12345678", "files123", "$ecret!"] {
            assert!(!is_plainly_not_secret(yes), "{yes}");
        }
    }
}
