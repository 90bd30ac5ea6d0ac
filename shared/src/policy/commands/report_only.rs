//! Interpreters and REPLs that report and exit: the only forms of them that are reads.
//!
//! An interpreter given a flag it does not stop at reads its program from standard input
//! (`echo 'import os; os.remove("f")' | python3 -v`), so a "version-looking" flag is not
//! enough: `python3 -v` is verbose mode, `tclsh -v` takes `-v` as an argument for the
//! interactive shell, `jshell -v` and `ghci -v` are verbose REPLs, `R -v` warns and starts
//! R. Each program here lists the exact single arguments its documentation says print a
//! version or help text and exit; anything else is not proved, and stays what the caller
//! decides (code to run, a write).

/// (programs, the single arguments that only report). A program not listed has none.
/// The JVM tools (java, jshell, groovy, scala) have none: the JVM creates
/// `/tmp/hsperfdata_USER` at start-up, and jshell writes its preferences under `~/.java`
/// (the write oracle saw both for `java -version` and `jshell --version`).
const REPORTS: &[(&[&str], &[&str])] = &[
    (
        &["python", "python2", "python3"],
        &["--version", "-V", "-VV", "--help", "-h", "-?", "--help-all"],
    ),
    (&["perl"], &["-v", "--version", "-V", "-h", "--help"]),
    // ruby: `-v` alone prints the version and quits; `--verbose` reads a program.
    (&["ruby"], &["-v", "--version", "-h", "--help"]),
    (&["irb"], &["-v", "--version", "-h", "--help"]),
    (&["node", "nodejs"], &["-v", "--version", "-h", "--help"]),
    (&["php"], &["-v", "--version", "-h", "--help"]),
    // lua.c: with `-v` and no script or `-e`, it prints the version and exits.
    (&["lua", "luajit"], &["-v"]),
    (&["expect"], &["-v"]),
    (&["Rscript", "R"], &["--version", "--help"]),
    (&["deno"], &["-V", "--version", "-h", "--help"]),
    (&["bun"], &["-v", "--version", "-h", "--help"]),
    (
        &["pwsh"],
        &["-v", "-Version", "--version", "-h", "-Help", "--help"],
    ),
    (&["julia"], &["-v", "--version", "-h", "--help"]),
    (&["guile"], &["-v", "--version", "-h", "--help"]),
    (&["sbcl"], &["--version", "--help"]),
    // REPLs
    (&["dc"], &["-V", "--version", "-h", "--help"]),
    (&["ghci"], &["--version", "--numeric-version"]),
    (&["sqlplus"], &["-V"]),
    (&["mongo", "mongosh", "cqlsh"], &["--version"]),
    (&["clickhouse-client"], &["--version", "-V"]),
];

/// True when `program` with exactly `args` only prints a version or help text and exits.
/// `python3.11` counts as `python3`.
pub(super) fn proved(program: &str, args: &[crate::policy::word::Word]) -> bool {
    let [arg] = args else {
        return false;
    };
    let Some(arg) = arg.lit() else {
        return false;
    };
    let base = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let base = if base == "python" && program.starts_with("python3") {
        "python3"
    } else {
        base
    };
    REPORTS
        .iter()
        .filter(|(names, _)| names.contains(&program) || names.contains(&base))
        .any(|(_, forms)| forms.contains(&arg))
}
