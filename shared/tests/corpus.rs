//! Runs every labelled corpus: the handbook's floor (`../shared/handbook/corpus`) and the
//! repository's own cases (`shared/tests/corpus/*.tsv`). Any mismatch fails.
//!
//! Labels: `read` must be read-only and bounded; `write` must be write/unknown;
//! `unbounded` must be reported unbounded (and so is never accepted as a read).
//! In a command field, a literal `\n` stands for a newline.

use std::path::{Path, PathBuf};
use vigil_shared::policy::{Intent, classify};

#[derive(Debug)]
struct Case {
    file: String,
    line: usize,
    command: String,
    expected: String,
}

fn load(path: &Path) -> Vec<Case> {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#') && *l != "command\texpected")
        .map(|(i, l)| {
            let (command, expected) = l
                .rsplit_once('\t')
                .unwrap_or_else(|| panic!("{file}:{}: no tab", i + 1));
            Case {
                file: file.clone(),
                line: i + 1,
                command: command.replace("\\n", "\n"),
                expected: expected.trim().to_owned(),
            }
        })
        .collect()
}

fn corpus_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![];
    let handbook = root.join("../../shared/handbook/corpus/commands.tsv");
    if handbook.exists() {
        files.push(handbook);
    } else if std::env::var_os("CI").is_some() {
        panic!(
            "CI is set but the handbook corpus is missing at {}",
            handbook.display()
        );
    }
    let mut own: Vec<PathBuf> = std::fs::read_dir(root.join("tests/corpus"))
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "tsv"))
                .collect()
        })
        .unwrap_or_default();
    own.sort();
    files.extend(own);
    files
}

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
