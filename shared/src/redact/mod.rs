//! Secret redaction for tool output (docs/design.md, invariant 10): secret-looking values
//! are replaced with [`MARKER`] before the text reaches the model, the chat stream, the
//! session store or the logs. [`redact`] scrubs a whole text; [`StreamRedactor`] scrubs
//! output that arrives in chunks and gives the same result for any chunking.
//!
//! # What is redacted
//!
//! The value is replaced and its context kept, so the reader still sees *what* was hidden:
//!
//! - **PEM private keys** (`-----BEGIN [RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP ]PRIVATE KEY[ BLOCK]-----`):
//!   the body between BEGIN and END becomes one `[REDACTED]` line; the BEGIN/END lines stay.
//!   A block without END is redacted to the end of the text. A key on one line (JSON with
//!   `\n` escapes) is redacted between the markers.
//! - **Authorization headers** (`Authorization:`/`Proxy-Authorization:`, any quoting): the
//!   scheme stays (`Bearer [REDACTED]`); for `Digest`, `AWS4-HMAC-SHA256` and unknown
//!   schemes the whole rest of the header value goes. A **bare `Bearer <token>`** is redacted
//!   when the token has at least 16 characters and a digit (so "bearer token required" stays).
//! - **Token shapes**, wherever they appear: JWTs (`eyJ….eyJ….…`), AWS access key ids
//!   (`AKIA`/`ASIA` + 16), GitHub (`ghp_ gho_ ghu_ ghs_ ghr_`, `github_pat_`), Slack
//!   (`xox[abposr]-`), Google API keys (`AIza` + 35), OpenAI/Anthropic (`sk-`, `sk-ant-`,
//!   `sk-proj-` + at least 32, mixing letters and digits), Stripe (`sk_live_`, `sk_test_`,
//!   `rk_…`), age secret keys, and Vigil's own API tokens (`vat_…`), join tokens (`vjt_…`)
//!   and grant-signing key file (`vgk_…`).
//! - **Assignments** `NAME=value`, `NAME: value`, `"name": "value"`, `export NAME=value`,
//!   `NAME := value`, `-Dname=value`, `--name=value`, `--name value`, and Kubernetes-style
//!   `name: NAME` followed by `value: …` (next line, or `{"name": …, "value": …}`), where
//!   NAME is a secret name (below). Quotes are kept: `"password": "[REDACTED]"`. An
//!   unquoted value after `=` runs to whitespace or `& , ; ) } ] < >`; after `: ` or ` = `
//!   (YAML, headers, ini) it runs to the end of the line (before a ` #` comment).
//! - **Credentials in URLs**: `scheme://user:pass@host` → `scheme://user:[REDACTED]@host`
//!   (the password runs to the authority's last `@`).
//! - **Password options** where the command makes them unambiguous: `mysql -pSECRET` (also
//!   `mysqldump`, `mysqladmin`, `mariadb`…), `sshpass -p`, `redis-cli -a`, `curl -u user:pass`.
//!
//! # Secret names
//!
//! A name is a secret name when it ends (case-insensitively) with `PASSWORD`, `PASSWD`,
//! `PASSPHRASE`, `TOKEN`, `SECRET`, `CREDENTIAL(S)`, `APIKEY`, `ACCESSKEY`, `SECRETKEY` or
//! `PRIVATEKEY` (anywhere: `PGPASSWORD`, `csrftoken`), or with `KEY`, `PASS` or `PWD` as a
//! separate word (`API_KEY`, `tls.key`, `apiKey`, `DB_PASS`, `MYSQL_PWD`). So:
//!
//! - Names that merely *contain* a secret word are not secret names: `PASSWORD_MIN_LENGTH=8`,
//!   `POSTGRES_PASSWORD_FILE=/run/secrets/db`, `KEY_COUNT=3`, `token_expiry=3600`,
//!   `secretName: db`, `--password-stdin`, `max_tokens=4096` (plural) all stay.
//! - Bare `key` (`key: app`, Kubernetes selectors and tolerations), bare `PWD` and `OLDPWD`
//!   (the shell's directories), words ending in `key`/`pass` (`monkey`, `keyboard`,
//!   `bypass`, `GIT_ASKPASS`) are not secret names.
//! - Non-secret kinds of key and token: `primary_key`, `foreign_key`, `sort_key`,
//!   `partition_key`, `public_key`, `cache_key`, `idempotency_key`, `label_key`…;
//!   `next_token`, `nextPageToken`, `continuation_token`, `max_token`…; `first_pass`.
//!
//! # Values that are not secrets
//!
//! Even under a secret name these stay: empty values (`password: `), booleans and null
//! (`true`, `no`, `null`, `~`), placeholders (`***`, `xxx`, `<password>`, `(sensitive value)`),
//! already redacted values, references to another value (`$DB_PASSWORD`, `${…}`, `$(…)`,
//! `{{ … }}`), file paths (`/run/secrets/db`, `~/.ssh/id_ed25519` — a path with only path
//! characters), the start of a nested structure (`{`, `[`, `|`, `>`), `kubectl describe
//! secret`'s `12 bytes`, public SSH keys (`ssh-rsa AAAA…`) and certificates, and nsswitch
//! source lists (`passwd: files systemd`). Numbers *are* redacted (a PIN is a secret).
//!
//! Not redacted at all: public keys (`ssh-rsa AAAA… user@host`, `-----BEGIN PUBLIC KEY-----`),
//! certificates, hex digests, UUIDs, commit hashes, base64 in ordinary contexts, URLs
//! without a password, `user@host`.
//!
//! # Kubernetes Secrets
//!
//! In `kubectl get secret -o yaml`, the base64 values under `data:` are redacted when their
//! key is a secret name (`password:`, `token:`, `tls.key:`, `api-key:`); others
//! (`username:`, `ca.crt:`, `host:`) stay, since which keys are sensitive is the Secret's
//! own business and the base64 of a non-secret is as harmless as the plain value.
//!
//! # Limits
//!
//! Work is line by line (rules never span lines, except PEM blocks and the `name:`/`value:`
//! pair), and a line longer than 8 KiB is cut (after its last blank in the second half of
//! the 8 KiB, if any) so the streaming form needs bounded memory: a secret straddling such
//! a cut can be missed. `Cookie` headers, YAML block scalars (`password: |`), presigned-URL
//! signatures and space-separated config (`requirepass x`) are not recognised. The count is
//! the number of replacements, which can exceed the number of distinct secrets.

mod names;
mod rules;

use regex::Regex;
use rules::{NAME_LINE, VALUE_LINE, redact_inline, value_line};
use std::sync::LazyLock;

/// What replaces every secret value.
pub const MARKER: &str = "[REDACTED]";

/// Longest line the stream holds back before cutting it.
const MAX_SEGMENT: usize = 8 * 1024;

static PEM_BEGIN: LazyLock<Regex> =
    LazyLock::new(|| compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"));
static PEM_END: LazyLock<Regex> =
    LazyLock::new(|| compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"));

fn compile(pattern: &str) -> Regex {
    match Regex::new(pattern) {
        Ok(re) => re,
        // The patterns are constants covered by the unit tests.
        Err(error) => panic!("redaction pattern {pattern:?}: {error}"),
    }
}

/// A redacted text and how many values were replaced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Redacted {
    /// The text with every secret-looking value replaced by [`MARKER`].
    pub text: String,
    /// How many values were replaced.
    pub count: usize,
}

/// The text with every secret-looking value replaced by [`MARKER`] (keeping the key name,
/// e.g. `DB_PASSWORD=[REDACTED]`, `Authorization: Bearer [REDACTED]`,
/// `https://user:[REDACTED]@host`), and how many were replaced.
pub fn redact(text: &str) -> Redacted {
    let mut stream = StreamRedactor::new();
    let mut out = stream.push(text);
    out.push_str(&stream.finish());
    Redacted {
        text: out,
        count: stream.count(),
    }
}

/// Redaction for output that arrives in chunks: holds back an incomplete trailing line (up
/// to 8 KiB, then cuts it as [`redact`] does), so a secret split across chunks is still
/// caught, and redacts a PEM private key spanning many chunks as a whole. Any chunking gives
/// the same text as [`redact`] on the concatenation.
#[derive(Debug, Default)]
pub struct StreamRedactor {
    pending: String,
    count: usize,
    pem: Option<PemBlock>,
    secret_name_before: bool,
}

/// Inside a PEM private key block: whether its `[REDACTED]` line was written and counted.
#[derive(Debug, Clone, Copy)]
struct PemBlock {
    marked: bool,
    counted: bool,
}

impl StreamRedactor {
    /// A redactor at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feed a chunk; returns the redacted text of every line completed so far.
    pub fn push(&mut self, chunk: &str) -> String {
        self.pending.push_str(chunk);
        let mut out = String::new();
        let mut done = 0;
        while let Some(len) = segment_len(&self.pending[done..]) {
            let pending = std::mem::take(&mut self.pending);
            self.segment(&pending[done..done + len], &mut out);
            self.pending = pending;
            done += len;
        }
        self.pending.drain(..done);
        out
    }

    /// End of stream: redacts and returns what was held back, and resets the line state.
    pub fn finish(&mut self) -> String {
        let mut out = String::new();
        let rest = std::mem::take(&mut self.pending);
        if !rest.is_empty() {
            self.segment(&rest, &mut out);
        }
        self.pem = None;
        self.secret_name_before = false;
        out
    }

    /// How many values were replaced so far.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Redact one line (or cut piece of a long line) with its terminator.
    fn segment(&mut self, segment: &str, out: &mut String) {
        let content = segment
            .strip_suffix('\n')
            .map_or(segment, |c| c.strip_suffix('\r').unwrap_or(c));
        let terminator = &segment[content.len()..];
        let mut rest = content;
        if let Some(mut block) = self.pem.take() {
            let Some(end) = PEM_END.find(rest) else {
                let was_marked = block.marked;
                self.pem_body(&mut block, rest, out);
                if block.marked && !was_marked {
                    out.push_str(terminator);
                }
                self.pem = Some(block);
                return;
            };
            self.pem_body(&mut block, &rest[..end.start()], out);
            out.push_str(end.as_str());
            rest = &rest[end.end()..];
        }
        let whole_line = rest.len() == content.len();
        let name_before = std::mem::take(&mut self.secret_name_before);
        loop {
            let Some(begin) = PEM_BEGIN.find(rest) else {
                out.push_str(&self.plain(rest, whole_line && name_before));
                break;
            };
            out.push_str(&self.plain(&rest[..begin.start()], false));
            out.push_str(begin.as_str());
            let after = &rest[begin.end()..];
            if let Some(end) = PEM_END.find(after) {
                let body = &after[..end.start()];
                if body.trim().is_empty() {
                    out.push_str(body);
                } else {
                    out.push_str(MARKER);
                    self.count += usize::from(body.trim() != MARKER);
                }
                out.push_str(end.as_str());
                rest = &after[end.end()..];
            } else {
                let mut block = PemBlock {
                    marked: false,
                    counted: false,
                };
                self.pem_body(&mut block, after, out);
                self.pem = Some(block);
                break;
            }
        }
        if whole_line && self.pem.is_none() {
            self.secret_name_before = NAME_LINE
                .captures(content)
                .and_then(|c| c.get(1))
                .is_some_and(|name| names::is_secret_name(name.as_str()));
        }
        out.push_str(terminator);
    }

    /// A piece of a PEM body: the first non-blank piece becomes MARKER, the rest is dropped.
    fn pem_body(&mut self, block: &mut PemBlock, body: &str, out: &mut String) {
        let body = body.trim();
        if body.is_empty() {
            return;
        }
        if !block.marked {
            out.push_str(MARKER);
            block.marked = true;
        }
        if body != MARKER && !block.counted {
            self.count += 1;
            block.counted = true;
        }
    }

    /// Text outside PEM blocks; `value_line` when the previous line named a secret.
    fn plain(&mut self, text: &str, value_line_allowed: bool) -> String {
        if value_line_allowed
            && VALUE_LINE.is_match(text)
            && let Some(redacted) = value_line(text, &mut self.count)
        {
            return redact_inline(&redacted, &mut self.count);
        }
        redact_inline(text, &mut self.count)
    }
}

/// The length of the next segment of `text`: through its first newline if that is within
/// [`MAX_SEGMENT`] bytes, else (once that many bytes are there) cut after the last blank of
/// the window's second half, or at the last character boundary; `None` while incomplete.
fn segment_len(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let window = &bytes[..bytes.len().min(MAX_SEGMENT)];
    if let Some(i) = window.iter().position(|&b| b == b'\n') {
        return Some(i + 1);
    }
    if bytes.len() < MAX_SEGMENT {
        return None;
    }
    if let Some(i) = window[MAX_SEGMENT / 2..]
        .iter()
        .rposition(|&b| b == b' ' || b == b'\t')
    {
        return Some(MAX_SEGMENT / 2 + i + 1);
    }
    let mut cut = MAX_SEGMENT;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    Some(cut)
}

#[cfg(test)]
mod tests;
