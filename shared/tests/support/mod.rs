//! Loading the labelled corpora shared by the corpus and property tests.

use std::path::{Path, PathBuf};

/// One labelled command.
#[derive(Debug)]
pub struct Case {
    pub file: String,
    pub line: usize,
    pub command: String,
    pub expected: String,
}

/// Parse one TSV corpus file; a literal `\n` in a command stands for a newline.
pub fn load(path: &Path) -> Vec<Case> {
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

/// The handbook's corpus (required under CI) and the repository's own.
pub fn corpus_files() -> Vec<PathBuf> {
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

/// Every case of every corpus.
pub fn all_cases() -> Vec<Case> {
    corpus_files().iter().flat_map(|p| load(p)).collect()
}
