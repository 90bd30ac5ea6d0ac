//! The guard that keeps option matching in `args.rs`: a rule that compares option words as
//! raw text (`w.text == "--file"`, `t.starts_with("--out")`) misses abbreviations
//! (`--fi`), bundles (`-vf`), attached values and expansions, which `Cmd::parse` handles
//! once for every tool. This test reads the rule sources and fails on raw option matching
//! outside the justified exceptions below.

use std::path::Path;

/// Patterns that inspect an argument's raw text or match an option word literally. The
/// operand separators `"--"` and `"-"` (standard input) are not options and are ignored.
const RAW: &[&str] = &[
    ".text",
    "starts_with('-')",
    "starts_with(\"-",
    "starts_with(['-'",
    "strip_prefix('-')",
    "strip_prefix(\"-",
    "== \"-",
    "Some(\"-",
];

/// Justified exceptions: (file, text on the line, why exact or raw matching is right).
const ALLOWED: &[(&str, &str, &str)] = &[
    // Tools that parse their own options, in full, without getopt.
    (
        "containers.rs",
        "w.text.as_str(),",
        "is_tty_flag: docker/kubectl -it, exact (cobra); decides a rewrite and a terminal need",
    ),
    (
        "iproute.rs",
        "",
        "ip: iproute2's own matcher (ordered prefix lists, `-opt` or `--opt`), which an \
         option table cannot express; every option, object and verb is listed",
    ),
    (
        "netmgr.rs",
        "",
        "nmcli and iw: their own matchers (nmcli's ordered prefix lists with `-opt` or \
         `--opt`, iw's sections and device names in full); every option and command is listed",
    ),
    (
        "text.rs",
        "cmd.args[i].text.as_str(), \";\" | \"+\"",
        "find -exec: find's tests are matched in full; the payload ends at ; or +",
    ),
    (
        "text.rs",
        "a.text.contains(\"{}\")",
        "find -exec: the {} placeholder in the payload",
    ),
    (
        "text.rs",
        "if a.text.starts_with('-')",
        "find -exec: a payload word that starts with {} cannot be an option",
    ),
    (
        "vcs.rs",
        "w.text.as_str(),",
        "git write verbs: only decides whether a write also opens an editor",
    ),
    (
        "vcs.rs",
        "w.text.starts_with(\"-",
        "git commit: only decides whether a write also opens an editor",
    ),
    (
        "vcs.rs",
        "|| w.text == \"--no-edit\"",
        "git commit: only decides whether a write also opens an editor",
    ),
    (
        "proxmox.rs",
        "all(|w| !w.text.starts_with(",
        "pct exec without --: any option word makes the form not understood",
    ),
    // Shells and interpreters: their own parsers, exact long names, `+o` forms.
    (
        "shell.rs",
        "",
        "shells and interpreters parse their own options (exact names, +o, -c)",
    ),
    (
        "wrappers.rs",
        "w.text.contains(r)",
        "xargs -I: the replacement string inside a word",
    ),
    (
        "wrappers.rs",
        "w.text.starts_with(r)",
        "xargs -I: the replacement string inside a word",
    ),
    (
        "wrappers.rs",
        "} else if w.text.starts_with('-')",
        "xargs -I: a word with the replacement may be an option",
    ),
    (
        "wrappers.rs",
        "matches!(w.text.as_str(), \"-t\" | \"-tt\")",
        "ssh -t/-tt: dropped from a rewrite only",
    ),
    // Rewrites (suggested bounded forms), after the rule decided.
    (
        "mod.rs",
        "find(|w| !w.text.starts_with('-'))",
        "pager rewrite: the file to cat",
    ),
];

fn offending(line: &str) -> bool {
    let code = line.split("//").next().unwrap_or("");
    let code = code.replace("\"--\"", "").replace("\"-\"", "");
    RAW.iter().any(|p| code.contains(p))
}

#[test]
fn rules_match_options_through_args_rs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/policy/commands");
    let mut offenders = Vec::new();
    let mut used = vec![false; ALLOWED.len()];
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("commands directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    files.sort();
    for path in files {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "raw_option_text.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("rule source");
        for (n, line) in text.lines().enumerate() {
            if !offending(line) {
                continue;
            }
            match ALLOWED
                .iter()
                .position(|(f, s, _)| *f == name && line.contains(s))
            {
                Some(i) => used[i] = true,
                None => offenders.push(format!("{name}:{}: {}", n + 1, line.trim())),
            }
        }
    }
    let stale: Vec<_> = ALLOWED
        .iter()
        .zip(&used)
        .filter(|(_, u)| !**u)
        .map(|((f, s, _), _)| format!("{f}: {s}"))
        .collect();
    assert!(
        offenders.is_empty(),
        "raw option matching outside args.rs (parse with Cmd::parse and use Parsed::long/\
         short/flag/value/unlisted, or add a justified exception):\n{}",
        offenders.join("\n")
    );
    assert!(
        stale.is_empty(),
        "exceptions that no longer match a line:\n{}",
        stale.join("\n")
    );
}

#[test]
fn the_guard_sees_raw_matching() {
    assert!(offending(r#"if w.text == "--file" {"#));
    assert!(offending(r#".any(|t| t.starts_with("--out"))"#));
    assert!(offending(r#"cmd.args[0].fixed() == Some("-f")"#));
    assert!(!offending(
        r#"args.iter().position(|w| w.fixed() == Some("--"))"#
    ));
    assert!(!offending(r#"// w.text == "--file" in a comment"#));
}
