//! Runs every labelled corpus: the handbook's floor (`../shared/handbook/corpus`) and the
//! repository's own cases (`shared/tests/corpus/*.tsv`). Any mismatch fails.
//!
//! Labels: `read` must be read-only and bounded; `write` must be write/unknown;
//! `unbounded` must be reported unbounded (and so is never accepted as a read).
//! In a command field, a literal `\n` stands for a newline.

use crate::support::{corpus_files, load};
use vigil_shared::policy::{Intent, classify};

#[test]
fn every_corpus_case_matches() {
    let mut failures = Vec::new();
    let (mut total, mut reads, mut reads_ok, mut false_reads) = (0, 0, 0, 0);
    for path in corpus_files() {
        for case in load(&path) {
            total += 1;
            let c = classify(&case.command);
            let ok = match case.expected.as_str() {
                "read" => {
                    reads += 1;
                    let ok = c.allowed_as_read();
                    reads_ok += usize::from(ok);
                    ok
                }
                "write" => {
                    let ok = c.intent == Intent::WriteOrUnknown;
                    false_reads += usize::from(!ok);
                    ok
                }
                "unbounded" => !c.boundedness.is_bounded() && !c.allowed_as_read(),
                other => panic!("{}:{}: unknown label {other}", case.file, case.line),
            };
            if !ok {
                failures.push(format!(
                    "{}:{}: expected {} got {} bounded={} — {:?}\n    reasons: {:?}",
                    case.file,
                    case.line,
                    case.expected,
                    c.intent,
                    c.boundedness.is_bounded(),
                    case.command,
                    c.reasons
                ));
            }
        }
    }
    eprintln!(
        "corpus: {total} cases, {reads_ok}/{reads} reads accepted, {false_reads} false reads"
    );
    assert!(total >= 80, "corpus too small: {total}");
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
