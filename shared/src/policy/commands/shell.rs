//! The shell itself: privilege changes, eval/source/exec, nested shells, interpreters and
//! the builtins that only affect the running shell.

use super::super::engine::wrap_rewrite;
use super::super::test_expr;
use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::super::word::quote;
use super::Cmd;

/// Shells whose `-c STRING` payload we parse.
pub(crate) const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "fish"];

const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "php",
    "lua",
    "luajit",
    "tclsh",
    "wish",
    "expect",
    "Rscript",
    "R",
    "deno",
    "bun",
    "irb",
    "pwsh",
    "osascript",
    "jshell",
    "java",
    "groovy",
    "scala",
    "julia",
    "guile",
    "racket",
    "sbcl",
];

const REPLS: &[&str] = &[
    "dc",
    "ghci",
    "sqlplus",
    "mongo",
    "mongosh",
    "cqlsh",
    "clickhouse-client",
    "influx",
];

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "sudo" | "su" | "doas" | "pkexec" | "run0" | "runuser" | "setpriv" | "sg" => {
            Verdict::write(Risk::High, format!("{} changes privileges", cmd.name))
        }
        "eval" => Verdict::write(Risk::High, "eval runs a computed command"),
        "source" | "." => Verdict::write(
            Risk::High,
            format!("{} runs a script in this shell", cmd.name),
        ),
        "exec" => Verdict::write(Risk::Medium, "exec replaces the shell"),
        "alias" | "unalias" | "enable" | "shopt" | "trap" | "export" | "declare" | "typeset"
        | "readonly" | "local" | "unset" | "let" | "bind" | "complete" | "compgen" | "history"
        | "fc" | "coproc" | "mapfile" | "readarray" | "getopts" | "shift" => Verdict::write(
            Risk::Medium,
            format!("{} changes the shell itself", cmd.name),
        ),
        "cd" | "pushd" | "popd" | "dirs" => {
            if cmd.has_dynamic() {
                Verdict::unknown("cd to a computed directory")
            } else {
                Verdict::read(format!("{} changes only the working directory", cmd.name))
            }
        }
        "set" => set_builtin(cmd),
        "test" | "[" => test_builtin(cmd),
        "hash" => {
            if cmd.args.is_empty()
                || cmd.args.iter().all(|w| w.text == "-l" || w.text == "-t")
                    && cmd.args.iter().all(|w| w.text.starts_with('-'))
            {
                Verdict::read("hash only lists remembered commands")
            } else {
                Verdict::write(Risk::High, "hash changes which program a name runs")
            }
        }
        "ulimit" => {
            let sets = cmd
                .args
                .iter()
                .any(|w| w.fixed().is_none_or(|t| !t.starts_with('-')));
            if sets {
                Verdict::write(Risk::Low, "ulimit changes resource limits")
            } else {
                Verdict::read("ulimit only reports limits")
            }
        }
        // Builtins that set a variable a later part of the command may use (PATH, IFS,
        // LD_PRELOAD, or a name expanded where a command or an option goes) change the
        // environment, like an assignment.
        "read" => Verdict::write(Risk::Medium, "read sets shell variables"),
        // `rules/printf.toml`, `rules/wait.toml`: `printf -v` and `wait -p` assign.
        "printf" | "wait" => cmd.by_table(cmd.name),
        "bc" | "nslookup" if cmd.args.is_empty() && !cmd.ctx.stdin_fed => {
            Verdict::read(format!("bare {} waits for input", cmd.name))
                .unbounded(UnboundedCategory::Repl, None)
        }
        "bc" => Verdict::read("bc only calculates"),
        "ftp" | "sftp" | "gdb" | "lldb" => {
            let batch = cmd
                .args
                .iter()
                .any(|w| matches!(w.text.as_str(), "--batch" | "-batch"));
            let v = Verdict::write(
                Risk::High,
                format!("{} runs interactive commands", cmd.name),
            );
            if batch {
                v
            } else {
                v.unbounded(UnboundedCategory::Repl, None)
            }
        }
        "exit" | "return" | ":" | "break" | "continue" => {
            Verdict::read(format!("{} only ends the script", cmd.name))
        }
        "command" | "builtin" => command_builtin(cmd),
        "busybox" => match cmd.args.split_first() {
            None => Verdict::read("busybox lists its applets"),
            Some((_, _)) => cmd.ctx.argv(cmd.args),
        },
        s if SHELLS.contains(&s) => shell(cmd),
        s if INTERPRETERS.contains(&s) || s.starts_with("python3.") => interpreter(cmd),
        s if REPLS.contains(&s) => repl(cmd),
        _ => return None,
    };
    Some(v)
}

/// `set` with an allow-list: the error checks `-e`, `-u` and `-o errexit|nounset|pipefail`
/// only make a command stop sooner. Every other option changes how later words are
/// parsed, expanded or passed on (`-a` exports every variable set later, `-k` takes
/// `NAME=VALUE` arguments as assignments, `-B`/`-f`/`-H` change expansion, `-x` expands
/// `PS4`, `-o posix` changes the grammar), and `set --`/`set WORD` replace the positional
/// parameters.
fn set_builtin(cmd: &Cmd<'_>) -> Verdict {
    const NAMES: &[&str] = &["errexit", "nounset", "pipefail"];
    let Some(words) = cmd
        .args
        .iter()
        .map(|w| w.lit())
        .collect::<Option<Vec<&str>>>()
    else {
        return Verdict::unknown("set with a computed word");
    };
    if matches!(words.as_slice(), [] | ["-o"] | ["+o"]) {
        return Verdict::read("set only lists variables or options");
    }
    let mut i = 0;
    while i < words.len() {
        let letters = words[i]
            .strip_prefix(['-', '+'])
            .filter(|l| !l.is_empty() && !l.starts_with('-'));
        let Some(letters) = letters else {
            return Verdict::write(Risk::Medium, "set changes the positional parameters");
        };
        let mut names = 0;
        for c in letters.chars() {
            match c {
                'e' | 'u' => {}
                'o' => names += 1,
                other => {
                    return Verdict::write(
                        Risk::Medium,
                        format!("set -{other} changes how later commands are parsed or run"),
                    );
                }
            }
        }
        for _ in 0..names {
            i += 1;
            if !words.get(i).is_some_and(|n| NAMES.contains(n)) {
                return Verdict::write(
                    Risk::Medium,
                    "set -o: only errexit, nounset and pipefail are accepted",
                );
            }
        }
        i += 1;
    }
    Verdict::read("set only turns on error checks (errexit, nounset, pipefail)")
}

/// `test …` and `[ … ]` as commands: the rules of [`test_expr`].
fn test_builtin(cmd: &Cmd<'_>) -> Verdict {
    let args = if cmd.name == "[" {
        match cmd.args.split_last() {
            Some((last, rest)) if last.lit() == Some("]") => rest,
            _ => return Verdict::unknown("[ without a closing ]"),
        }
    } else {
        cmd.args
    };
    match test_expr::single_bracket(args) {
        Ok(()) => Verdict::read(format!("{} only tests", cmd.name)),
        Err(why) => Verdict::unknown(why),
    }
}

/// `command`/`builtin`: `rules/command.toml` and `rules/builtin.toml` read the options as
/// bash does; `command -v`/`-V` only look names up, otherwise the operands are a command
/// judged on its own.
fn command_builtin(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, cmd.name);
    let v = super::super::options::judge(cmd.name, &w);
    if v.is_write() {
        return v;
    }
    if w.has("v") || w.has("V") || w.has("help") {
        return Verdict::read(format!("{} -v only looks a name up", cmd.name));
    }
    let start = w.operand_index.first().copied().unwrap_or(cmd.args.len());
    let payload = &cmd.args[start..];
    if payload.is_empty() {
        return Verdict::read(format!("{} with nothing to run", cmd.name));
    }
    let prefix = cmd.name.to_owned();
    wrap_rewrite(cmd.ctx.argv(payload), |r| format!("{prefix} {r}"))
}

/// `bash -c STRING`: the string is parsed as a script; other forms run unseen code.
fn shell(cmd: &Cmd<'_>) -> Verdict {
    let mut i = 0;
    let mut script = None;
    while i < cmd.args.len() {
        let Some(t) = cmd.args[i].fixed() else {
            return cmd.dynamic_write();
        };
        if t == "--" || !t.starts_with(['-', '+']) {
            break;
        }
        if matches!(t, "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file") {
            if matches!(t, "--rcfile" | "--init-file") {
                return Verdict::write(Risk::High, format!("{} {t} runs a startup file", cmd.name));
            }
            i += 2;
            continue;
        }
        if t.starts_with("--") {
            match t {
                "--norc" | "--noprofile" | "--posix" | "--restricted" | "--noediting" => {}
                "--login" => {
                    return Verdict::write(
                        Risk::Medium,
                        format!("{} --login runs the profile scripts", cmd.name),
                    );
                }
                "--version" | "--help" => {
                    return Verdict::read(format!("{} {t} only reports", cmd.name));
                }
                _ => return Verdict::unknown(format!("{} {t} is not understood", cmd.name)),
            }
            i += 1;
            continue;
        }
        let letters = &t[1..];
        let option_names = letters.chars().filter(|c| matches!(c, 'o' | 'O')).count();
        if option_names > 0 && !letters.contains('c') {
            i += 1 + option_names;
            continue;
        }
        if letters.contains('l') && t.starts_with('-') {
            return Verdict::write(
                Risk::Medium,
                format!("{} -l runs the profile scripts", cmd.name),
            );
        }
        if letters.contains('i') {
            return Verdict::write(
                Risk::High,
                format!("{} -i is an interactive shell", cmd.name),
            )
            .unbounded(UnboundedCategory::Repl, None);
        }
        if letters.contains('c') {
            script = cmd.args.get(i + 1);
            break;
        }
        if letters.contains('s') || letters.contains('i') {
            return Verdict::write(
                Risk::High,
                format!("{} {t} runs commands from input", cmd.name),
            );
        }
        i += 1;
    }
    match script {
        Some(w) => match w.lit() {
            Some(body) => {
                let prefix = cmd.name.to_owned();
                wrap_rewrite(cmd.ctx.script(body), |r| {
                    format!("{prefix} -c {}", quote(r))
                })
            }
            None => Verdict::write(
                Risk::High,
                format!("{} -c runs a computed string", cmd.name),
            ),
        },
        None if i >= cmd.args.len() => Verdict::write(
            Risk::High,
            format!("bare {} runs whatever it reads", cmd.name),
        )
        .unbounded(UnboundedCategory::Repl, None),
        None => Verdict::write(Risk::High, format!("{} runs a script file", cmd.name)),
    }
}

fn interpreter(cmd: &Cmd<'_>) -> Verdict {
    let first = cmd.args.first().and_then(|w| w.fixed());
    match first {
        None if cmd.args.is_empty() => Verdict::write(
            Risk::High,
            format!("bare {} is an interactive interpreter", cmd.name),
        )
        .unbounded(UnboundedCategory::Repl, None),
        Some(t) if super::report_only::proved(cmd.name, cmd.args) => {
            Verdict::read(format!("{} {t} only reports", cmd.name))
        }
        Some("-m") if cmd.name.starts_with("python") => {
            let module = cmd.args.get(1).and_then(|w| w.fixed());
            let files = cmd.args.len().saturating_sub(2);
            if matches!(
                module,
                Some("http.server" | "SimpleHTTPServer" | "smtpd" | "pydoc")
            ) {
                Verdict::write(Risk::Medium, format!("{} -m starts a server", cmd.name))
                    .unbounded(UnboundedCategory::Stream, None)
            } else if module == Some("json.tool") && files <= 1 && !cmd.has_dynamic() {
                Verdict::read("python -m json.tool only formats JSON")
            } else {
                Verdict::write(Risk::High, format!("{} -m runs a module", cmd.name))
            }
        }
        Some(t) if t.starts_with('-') && t.contains(['c', 'e', 'E', 'r']) => {
            Verdict::write(Risk::High, format!("{} given code to run ({t})", cmd.name))
        }
        _ => Verdict::write(Risk::High, format!("{} runs a script or code", cmd.name)),
    }
}

fn repl(cmd: &Cmd<'_>) -> Verdict {
    if cmd.args.is_empty() {
        Verdict::write(Risk::Medium, format!("bare {} is interactive", cmd.name))
            .unbounded(UnboundedCategory::Repl, None)
    } else if super::report_only::proved(cmd.name, cmd.args) {
        Verdict::read(format!("{} only reports its version", cmd.name))
    } else {
        Verdict::unknown(format!("{} runs interactive commands", cmd.name))
    }
}
