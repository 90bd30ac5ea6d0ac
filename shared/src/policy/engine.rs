//! Classifying a script: every simple command through the rules, parts combined, and the
//! bounded rewrite of the whole assembled from the rewrites of its parts.

use super::commands;
use super::producer;
use super::syntax;
use super::types::{Risk, UnboundedCategory};
use super::verdict::{Unbounded, Verdict};
use super::word::Word;

/// How deep wrappers and nested shell strings may go before we stop looking.
const MAX_DEPTH: usize = 8;

/// Directories whose programs are the ones the bare name would find.
const TRUSTED_DIRS: &[&str] = &[
    "/bin/",
    "/usr/bin/",
    "/sbin/",
    "/usr/sbin/",
    "/usr/local/bin/",
    "/usr/local/sbin/",
];

/// Recursion state shared by the rules.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ctx {
    depth: usize,
    /// The command's standard input is fed (pipe, file, here-doc), not closed.
    pub stdin_fed: bool,
    /// Every word on standard input is known to be an operand: the pipeline upstream
    /// prints only names that cannot start with `-` (see [`producer`]).
    pub stdin_operands: bool,
}

impl Ctx {
    pub fn root() -> Self {
        Ctx {
            depth: 0,
            stdin_fed: false,
            stdin_operands: false,
        }
    }

    fn deeper(self) -> Option<Ctx> {
        (self.depth < MAX_DEPTH).then_some(Ctx {
            depth: self.depth + 1,
            ..self
        })
    }

    /// Classify a shell string (the payload of `bash -c`, `ssh host …`, `watch …`).
    pub fn script(self, src: &str) -> Verdict {
        match self.deeper() {
            Some(ctx) => classify_script(src, ctx),
            None => Verdict::unknown("commands nested too deeply to inspect"),
        }
    }

    /// Classify an argument vector run without a shell (`timeout 5 CMD…`, `docker exec c CMD…`).
    pub fn argv(self, words: &[Word]) -> Verdict {
        match self.deeper() {
            Some(ctx) => classify_words(words, ctx),
            None => Verdict::unknown("commands nested too deeply to inspect"),
        }
    }
}

/// Classify a whole shell string.
pub(crate) fn classify_script(src: &str, ctx: Ctx) -> Verdict {
    let script = syntax::parse(src);
    let mut parts: Vec<Verdict> = script.findings;
    let mut rewrites: Vec<(std::ops::Range<usize>, Option<String>)> = Vec::new();
    for (i, c) in script.commands.iter().enumerate() {
        let upstream: Vec<&[Word]> = script.commands[..i]
            .iter()
            .filter(|u| u.pipeline == c.pipeline)
            .map(|u| u.words.as_slice())
            .collect();
        let fed = Ctx {
            stdin_fed: ctx.stdin_fed || c.stdin_fed,
            stdin_operands: c.stdin_fed && producer::prints_operands(&upstream),
            ..ctx
        };
        let mut v = classify_words(&c.words, fed);
        // Whatever the tool, naming a file whose reading acts is not a read.
        if let Some((word, effect)) = c.words.iter().find_map(|w| {
            let text = w.fixed()?;
            crate::hide::effect_file(text).map(|e| (text, e))
        }) {
            v = Verdict::all(vec![
                v,
                Verdict::write(
                    Risk::High,
                    format!("{word} is a file whose opening or reading acts ({effect})"),
                ),
            ]);
        }
        if v.unbounded
            .as_ref()
            .is_some_and(|u| u.category == UnboundedCategory::Stream)
            && is_generator(&c.words)
            && script.commands[i + 1..]
                .iter()
                .any(|later| later.pipeline == c.pipeline && ends_stream(&later.words))
        {
            v.unbounded = None;
            v.reasons
                .push("a later head in the pipeline ends the stream".into());
        }
        if let Some(u) = &v.unbounded {
            rewrites.push((c.range.clone(), u.rewrite.clone()));
        }
        parts.push(v);
    }
    let mut verdict = Verdict::all(parts);
    if let Some(u) = verdict.unbounded.as_mut() {
        u.rewrite = splice(src, rewrites);
    }
    verdict
}

/// Endless producers that a downstream `head` ends by closing the pipe.
fn is_generator(words: &[Word]) -> bool {
    match words.first().and_then(|w| w.lit()) {
        Some("yes") => true,
        Some("cat" | "od" | "hexdump" | "xxd" | "base64" | "tr" | "strings") => {
            words[1..].iter().any(|w| {
                matches!(
                    w.text.as_str(),
                    "/dev/zero" | "/dev/urandom" | "/dev/random"
                )
            })
        }
        _ => false,
    }
}

fn ends_stream(words: &[Word]) -> bool {
    words.first().and_then(|w| w.lit()) == Some("head")
}

/// Replace each unbounded part of `src` by its rewrite; none when any part has no rewrite.
fn splice(
    src: &str,
    mut rewrites: Vec<(std::ops::Range<usize>, Option<String>)>,
) -> Option<String> {
    rewrites.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
    let mut out = src.to_owned();
    for (range, rewrite) in rewrites {
        out.replace_range(range, &rewrite?);
    }
    Some(out.trim().to_owned())
}

/// Classify one simple command given as words.
pub(crate) fn classify_words(words: &[Word], ctx: Ctx) -> Verdict {
    let Some((name, args)) = words.split_first() else {
        return Verdict::read("empty command");
    };
    let Some(raw) = name.lit() else {
        return Verdict::write(
            Risk::High,
            format!(
                "variable expansion or pattern in command position ({})",
                name.src
            ),
        );
    };
    let program = match program_name(raw) {
        Ok(p) => p,
        Err(v) => return v,
    };
    commands::classify(program, args, ctx)
}

/// The program a command name runs: a bare name, or a path in a standard directory.
fn program_name(raw: &str) -> Result<&str, Verdict> {
    if raw.is_empty() {
        return Err(Verdict::unknown("empty command name"));
    }
    if !raw.contains('/') {
        return Ok(raw);
    }
    for dir in TRUSTED_DIRS {
        if let Some(rest) = raw.strip_prefix(dir)
            && !rest.is_empty()
            && !rest.contains('/')
        {
            return Ok(rest);
        }
    }
    Err(Verdict::unknown(format!(
        "runs a program by path outside the system directories: {raw}"
    )))
}

/// Attach an unbounded mark to a verdict, with the payload's rewrite wrapped by `wrap`.
pub(crate) fn wrap_rewrite(mut v: Verdict, wrap: impl FnOnce(&str) -> String) -> Verdict {
    if let Some(Unbounded {
        rewrite: Some(r), ..
    }) = v.unbounded.as_mut()
    {
        *r = wrap(r);
    }
    v
}
