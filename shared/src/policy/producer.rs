//! What a pipeline feeds downstream: `xargs` turns its input into arguments, and an
//! argument it supplies may be any option unless the upstream commands can only print
//! names that never start with `-` (or a quote, which xargs would remove).

use super::args::{self, Spec};
use super::word::Word;

/// True when `upstream` (the earlier commands of one pipeline, in order) starts with a
/// producer of plain names and only filters lines after it.
pub(crate) fn prints_operands(upstream: &[&[Word]]) -> bool {
    let Some((first, rest)) = upstream.split_first() else {
        return false;
    };
    producer(first) && rest.iter().all(|w| line_filter(w))
}

/// Commands whose every output word is a name, id or number that starts with an
/// alphanumeric character or `/`.
fn producer(words: &[Word]) -> bool {
    let Some((name, args)) = words.split_first() else {
        return false;
    };
    if args.iter().any(Word::is_dynamic) {
        return false;
    }
    let p = |short_values: &str| {
        args::parse(
            args,
            Spec {
                short_values,
                ..Spec::default()
            },
        )
    };
    match name.lit() {
        // The text is printed as written: every blank-separated token must be plain.
        Some("echo") => args.iter().all(|w| w.text.split_whitespace().all(plain)),
        // Container and image ids are hexadecimal.
        Some("docker" | "podman") => {
            let sub = args.first().and_then(|w| w.lit());
            matches!(sub, Some("ps" | "images"))
                && args
                    .iter()
                    .any(|w| matches!(w.text.as_str(), "-q" | "-aq" | "-qa" | "--quiet"))
                && !args.iter().any(|w| w.text.starts_with("--format"))
        }
        // `-o name` prints kind/name; Kubernetes names start with an alphanumeric.
        Some("kubectl" | "oc") => {
            let name_output = args
                .windows(2)
                .any(|w| w[0].text == "-o" && w[1].text == "name")
                || args
                    .iter()
                    .any(|w| w.text == "-oname" || w.text == "--output=name");
            args.first().and_then(|w| w.lit()) == Some("get") && name_output
        }
        // Process ids only (the listing forms print names and command lines).
        Some("pidof") => true,
        Some("pgrep") => {
            let p = p("gGPstuUF");
            !(p.flag('l', "list-name") || p.flag('a', "list-full"))
        }
        // Kernel device names.
        Some("lsblk") => {
            let p = p("oxIeE");
            p.flag('n', "noheadings")
                && p.value(Some('o'), "output")
                    .is_some_and(|o| matches!(o, "NAME" | "KNAME" | "PATH"))
        }
        _ => false,
    }
}

/// Commands that pass some of their input lines through unchanged.
fn line_filter(words: &[Word]) -> bool {
    matches!(
        words.first().and_then(|w| w.lit()),
        Some("head" | "sort" | "uniq" | "shuf")
    ) && words[1..].iter().all(|w| !w.is_dynamic())
}

fn plain(token: &str) -> bool {
    token
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '/')
        && !token.contains(['"', '\'', '\\'])
}
