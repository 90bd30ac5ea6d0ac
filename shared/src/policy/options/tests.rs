//! Every table loads, and the engine's parsing rules on small tables.

use super::{SOURCES, Table, table, walk};
use crate::policy::word::Word;

#[test]
fn every_table_loads() {
    for (file, parts) in SOURCES {
        if let Err(e) = Table::parse(&parts.concat()) {
            panic!("rules/{file}.toml is malformed: {e}");
        }
    }
}

#[test]
fn a_malformed_table_is_an_error() {
    for bad in [
        "tools = []",
        "tools = [\"x\"]\nflags = [\"o\"]",
        "tools = [\"x\"]\nflags = [\"-o\", \"-o --out\"]",
        "tools = [\"x\"]\nflags = [{ names = \"-o\", effect = \"write-file\" }]",
        "tools = [\"x\"]\nflagz = []",
        "tools = [\"x\"]\nneeds_one_of = [\"detail\"]",
    ] {
        assert!(Table::parse(bad).is_err(), "{bad}");
    }
}

fn words(s: &str) -> Vec<Word> {
    s.split_whitespace().map(Word::literal).collect()
}

const SMALL: &str = r#"
tools = ["t"]
flags = ["-q --quiet", "-v --verbose", "--verify"]
values = [{ names = "-o --output", effect = "write-file", dash = true }, "-n --lines"]
optional = ["-i --replace"]
"#;

fn ids(args: &str) -> (Vec<String>, Vec<String>, Option<String>) {
    let t = Table::parse(SMALL).unwrap();
    let a = words(args);
    let w = walk(&a, &t);
    let ids = w.occs.iter().map(|o| o.opt.id.clone()).collect();
    let ops = w
        .operands
        .iter()
        .map(|(_, o)| o.fixed().unwrap_or("?").to_owned())
        .collect();
    (ids, ops, w.deny)
}

#[test]
fn bundles_values_and_optional_values() {
    let (ids, ops, deny) = ids("-qoF -n 5 x -iR y --replace z");
    assert_eq!(ids, ["quiet", "output", "lines", "replace", "replace"]);
    assert_eq!(ops, ["x", "y", "z"]);
    assert!(deny.is_none());
}

#[test]
fn abbreviations_exact_names_and_ambiguity() {
    assert_eq!(ids("--out F").0, ["output"]);
    assert_eq!(ids("--verify").0, ["verify"]);
    assert!(ids("--ver").2.unwrap().contains("ambiguous"));
    assert!(ids("--bogus").2.unwrap().contains("--bogus"));
    assert!(ids("-x").2.unwrap().contains("-x"));
    assert!(ids("-o").2.unwrap().contains("needs a value"));
}

#[test]
fn double_dash_ends_options() {
    let (ids, ops, deny) = ids("-q -- -o F");
    assert_eq!(ids, ["quiet"]);
    assert_eq!(ops, ["-o", "F"]);
    assert!(deny.is_none());
}

#[test]
fn every_named_program_has_its_table() {
    for (file, parts) in SOURCES {
        let t = Table::parse(&parts.concat()).unwrap();
        for tool in &t.tools {
            assert!(matches!(table(tool), Some(Ok(_))), "{file}: {tool}");
        }
    }
}

const LIKE: &str = r#"
tools = ["t"]
[sub.log]
flags = ["-p -u --patch", "-q"]
values = ["-n"]
[sub.show]
like = "log"
flags = ["-u --untracked"]
operands_need_one_of = ["untracked"]
"#;

#[test]
fn like_copies_options_less_the_names_declared_here() {
    let t = Table::parse(LIKE).unwrap();
    let show = &t.root.subs["show"];
    let patch = show.opts.iter().find(|o| o.id == "patch").unwrap();
    assert_eq!(patch.shorts, ['p']);
    assert!(show.opts.iter().any(|o| o.id == "n"));
    let untracked = show.opts.iter().find(|o| o.shorts.contains(&'u')).unwrap();
    assert_eq!(untracked.id, "untracked");
    assert!(Table::parse("tools = [\"t\"]\n[sub.a]\nlike = \"b\"").is_err());
}

const LONG_ONLY: &str = r#"
tools = ["t"]
long_only = true
flags = ["-n", "--vv"]
values = ["-p", "-s", "--oN", "--script", "--script-args"]
"#;

#[test]
fn long_only_reads_one_dash_long_options_first() {
    let t = Table::parse(LONG_ONLY).unwrap();
    let run = |args: &str| {
        let a = words(args);
        let w = walk(&a, &t);
        let ids: Vec<String> = w.occs.iter().map(|o| o.opt.id.clone()).collect();
        let vals: Vec<String> = w
            .occs
            .iter()
            .map(|o| o.fixed().unwrap_or("").to_owned())
            .collect();
        (ids, vals, w.deny)
    };
    // An exact long name, a unique prefix, `=` values; a short letter alone stays short.
    let (ids, vals, deny) = run("-oN F -script=x -vv -p 22");
    assert_eq!(ids, ["oN", "script", "vv", "p"]);
    assert_eq!(vals, ["F", "x", "", "22"]);
    assert!(deny.is_none());
    // No long option matches: glibc falls back to the short letter with the rest; a long
    // name takes no attached value without `=` (`-oNF` is neither `-oN F` nor a short).
    let (ids, vals, deny) = run("-sV -p22 -oNF");
    assert_eq!(ids, ["s", "p"]);
    assert_eq!(vals, ["V", "22"]);
    assert!(deny.is_some());
    // An ambiguous prefix is refused, as is a word matching neither.
    assert!(run("-scr x").2.is_some());
    assert!(run("-zz").2.is_some());
}

const SQLITE_LIKE: &str = r#"
tools = ["t"]
long_only = true
abbreviate = false
bundle = false
flags = ["-A", "--readonly", "--json"]
values = ["--cmd", "--separator"]
"#;

#[test]
fn long_only_without_abbreviation_names_options_in_full() {
    let t = Table::parse(SQLITE_LIKE).unwrap();
    let run = |args: &str| {
        let a = words(args);
        let w = walk(&a, &t);
        let ids: Vec<String> = w.occs.iter().map(|o| o.opt.id.clone()).collect();
        let ops: Vec<String> = w
            .operands
            .iter()
            .map(|(_, o)| o.fixed().unwrap_or("?").to_owned())
            .collect();
        (ids, ops, w.deny.clone())
    };
    // One dash or two, anywhere on the line; a value is the next word.
    let (ids, ops, deny) = run("-readonly db -cmd .tables --json -separator , q");
    assert_eq!(ids, ["readonly", "cmd", "json", "separator"]);
    assert_eq!(ops, ["db", "q"]);
    assert!(deny.is_none());
    // No prefixes; a flag given a value is not that flag (sqlite3 sees another word).
    assert!(run("-read db").2.unwrap().contains("-read"));
    assert!(run("-readonly=1 db").2.unwrap().contains("takes no value"));
    assert!(run("--readonly=1 db").2.unwrap().contains("takes no value"));
    assert!(run("db -cmd").2.unwrap().contains("needs a value"));
    // A one-letter option stays a short option.
    assert_eq!(run("-A db").0, ["A"]);
}

const OPTIONAL_SUB: &str = r#"
tools = ["t"]
stop_at_operand = true
subcommand_optional = true
flags = ["--get", "--global"]
writes = ["set"]
"#;

#[test]
fn an_optional_subcommand_is_only_the_first_word() {
    let t = Table::parse(OPTIONAL_SUB).unwrap();
    let path = |args: &str| {
        let a = words(args);
        let w = walk(&a, &t);
        (w.path.clone(), w.operands.len(), w.deny.clone())
    };
    assert_eq!(path("set a.b v"), (vec!["set".to_owned()], 2, None));
    assert_eq!(path("a.b"), (vec![], 1, None));
    // After an option, or as a later operand, the word is an operand.
    assert_eq!(path("--global set"), (vec![], 1, None));
    assert_eq!(path("--get a.b set"), (vec![], 2, None));
    // Options stop at the first operand.
    assert_eq!(path("--get a.b --bogus").2, None);
}
