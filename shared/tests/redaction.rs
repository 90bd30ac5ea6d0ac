//! The redaction corpus (`shared/tests/redaction/{positive,negative}.tsv`): every positive
//! input must redact to its expected output, every negative input must stay unchanged,
//! redaction is idempotent, no secret from a positive case survives, and the streaming
//! redactor agrees with the whole-text one for any chunking.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use regex::Regex;
use std::path::Path;
use vigil_shared::redact::{MARKER, StreamRedactor, redact};

/// `\n`, `\t` and `\\` in a corpus field stand for a newline, a tab and a backslash.
fn unescape(field: &str) -> String {
    let mut out = String::new();
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        match (c, c == '\\') {
            (_, true) => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('\\') => out.push('\\'),
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push('\\'),
            },
            _ => out.push(c),
        }
    }
    out
}

/// The data lines of a corpus file, with their line numbers.
fn rows(name: &str) -> Vec<(usize, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/redaction")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        .map(|(i, l)| (i + 1, l.to_owned()))
        .collect()
}

fn positives() -> Vec<(usize, String, String)> {
    rows("positive.tsv")
        .into_iter()
        .map(|(n, l)| {
            let (input, expected) = l
                .split_once('\t')
                .unwrap_or_else(|| panic!("positive.tsv:{n}: no tab"));
            (n, unescape(input), unescape(expected))
        })
        .collect()
}

fn negatives() -> Vec<(usize, String)> {
    rows("negative.tsv")
        .into_iter()
        .map(|(n, l)| (n, unescape(&l)))
        .collect()
}

/// Every corpus input, positive and negative.
fn inputs() -> Vec<String> {
    let mut all: Vec<String> = positives().into_iter().map(|(_, i, _)| i).collect();
    all.extend(negatives().into_iter().map(|(_, i)| i));
    all
}

/// The input substrings that the expected output replaced by MARKER.
fn secrets(input: &str, expected: &str) -> Vec<String> {
    let pattern = expected
        .split(MARKER)
        .map(regex::escape)
        .collect::<Vec<_>>()
        .join("(.+?)");
    let re = Regex::new(&format!("(?s)^{pattern}$")).unwrap_or_else(|e| panic!("{e}"));
    let caps = re
        .captures(input)
        .unwrap_or_else(|| panic!("expected output does not align with {input:?}"));
    caps.iter()
        .skip(1)
        .flatten()
        .map(|m| m.as_str().to_owned())
        .collect()
}

#[test]
fn corpus() {
    let (positive, negative) = (positives(), negatives());
    let mut failures = Vec::new();
    for (line, input, expected) in &positive {
        let got = redact(input);
        if &got.text != expected {
            failures.push(format!(
                "positive.tsv:{line}: {input:?}\n    want {expected:?}\n    got  {:?}",
                got.text
            ));
        }
        if got.count == 0 {
            failures.push(format!("positive.tsv:{line}: count 0"));
        }
        for secret in secrets(input, expected) {
            let secret = secret.trim();
            if secret.len() >= 4 && got.text.contains(secret) {
                failures.push(format!("positive.tsv:{line}: {secret:?} survives"));
            }
        }
    }
    for (line, input) in &negative {
        let got = redact(input);
        if &got.text != input || got.count != 0 {
            failures.push(format!(
                "negative.tsv:{line}: changed\n    was {input:?}\n    got {:?}",
                got.text
            ));
        }
    }
    eprintln!(
        "redaction corpus: {} positive, {} negative cases",
        positive.len(),
        negative.len()
    );
    assert!(positive.len() >= 60 && negative.len() >= 60);
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn idempotent_on_the_corpus() {
    for input in inputs() {
        let once = redact(&input);
        let twice = redact(&once.text);
        assert_eq!(twice.text, once.text, "{input:?}");
        assert_eq!(twice.count, 0, "{input:?}");
    }
}

#[test]
fn the_whole_corpus_as_one_text() {
    let all = inputs().join("\n");
    let once = redact(&all).text;
    assert_eq!(redact(&once).text, once);
    // A secret may also occur, by chance, in a negative case (`12345678`).
    let kept: String = negatives().into_iter().map(|(_, i)| i).collect();
    for (_, input, expected) in positives() {
        for secret in secrets(&input, &expected) {
            let secret = secret.trim();
            assert!(
                secret.len() < 4 || kept.contains(secret) || !once.contains(secret),
                "{secret:?} survives"
            );
        }
    }
}

fn stream(text: &str, cuts: &[usize]) -> (String, usize) {
    let mut redactor = StreamRedactor::new();
    let mut out = String::new();
    let mut last = 0;
    for &cut in cuts {
        let mut cut = cut.min(text.len()).max(last);
        while !text.is_char_boundary(cut) {
            cut += 1;
        }
        out += &redactor.push(&text[last..cut]);
        last = cut;
    }
    out += &redactor.push(&text[last..]);
    out += &redactor.finish();
    (out, redactor.count())
}

proptest! {
    #[test]
    fn stream_agrees_with_whole(
        index in 0usize..1000,
        joined in any::<bool>(),
        mut cuts in proptest::collection::vec(0usize..4000, 0..12),
    ) {
        let all = inputs();
        let text = if joined { all.join("\n") } else { all[index % all.len()].clone() };
        cuts.sort_unstable();
        let whole = redact(&text);
        let (streamed, count) = stream(&text, &cuts);
        prop_assert_eq!(streamed, whole.text);
        prop_assert_eq!(count, whole.count);
    }

    #[test]
    fn arbitrary_text_is_idempotent_and_chunk_independent(
        text in "(?s)(.|\n|=|:|-----BEGIN PRIVATE KEY-----|-----END PRIVATE KEY-----|password|Bearer |://|@|\"){0,60}",
        mut cuts in proptest::collection::vec(0usize..400, 0..6),
    ) {
        let once = redact(&text);
        prop_assert_eq!(&redact(&once.text).text, &once.text);
        cuts.sort_unstable();
        prop_assert_eq!(stream(&text, &cuts).0, once.text);
    }
}

#[test]
#[ignore = "timing; run with --release --ignored --nocapture"]
fn throughput() {
    let all = inputs().join("\n");
    let mut text = String::new();
    while text.len() < 4 << 20 {
        text += &all;
        text.push('\n');
    }
    let start = std::time::Instant::now();
    let out = redact(&text);
    let elapsed = start.elapsed();
    let kib = text.len() as f64 / 1024.0;
    eprintln!(
        "redact: {:.1} µs/KiB over {:.0} KiB ({} replacements)",
        elapsed.as_secs_f64() * 1e6 / kib,
        kib,
        out.count
    );
}
