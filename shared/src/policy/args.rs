//! A small getopt-style view of a command's arguments, for flag-aware rules.
//!
//! Three rules hold here once for every tool, so a new rule cannot forget them:
//! - **abbreviations:** getopt_long tools accept any unambiguous prefix of a long option
//!   (`--in` for `--in-place`). [`Parsed::long`] matches every prefix, ambiguous ones
//!   included (the safe side: `--co` may be `--config`); tools that do not abbreviate
//!   (Go and Rust CLIs, `find`) say so with [`Spec::exact_long`];
//! - **attached values and bundles:** `-oFILE`, `-xvfFILE` and `--name=value` split like
//!   getopt splits them;
//! - **expansions:** a word the shell decides at run time is an operand only after `--`,
//!   after the first operand of a tool that stops there, or when it can neither start with
//!   `-` nor split ([`Word::may_be_option`]); anywhere else it could be any option, and
//!   [`Parsed::dynamic`] says so.

use super::word::Word;

/// How a tool takes its options.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Spec<'s> {
    /// Short options that take a value (`-n 5`, `-n5`).
    pub short_values: &'s str,
    /// Long options that take a value when written as `--name value`.
    pub long_values: &'s [&'s str],
    /// Options end at the first positional (POSIX), instead of being permuted (GNU).
    pub stop_at_positional: bool,
    /// Other long options the tool has, without a value. A word that names one of these (or
    /// of `long_values`) in full is that option, even when it is also a prefix of another
    /// (`--list` is not `--listed-incremental`): getopt prefers an exact match.
    pub long_flags: &'s [&'s str],
    /// Long options must be written in full (the tool does not accept `--out` for
    /// `--output`): Go (cobra/pflag) and Rust (clap) tools, `find`'s tests.
    pub exact_long: bool,
    /// Long options may also be written with one dash (`-script` for `--script`), like
    /// getopt_long_only (nmap) or tools with their own single-dash options (openssl). A
    /// single-dash word is then a long option; unless `exact_long`, a word of two or more
    /// letters is also read as a bundle of short options, as the tool may take it either way.
    pub long_only: bool,
}

/// One option as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Opt {
    Short(char, Option<String>),
    Long(String, Option<String>),
}

/// Arguments split into options and positionals.
#[derive(Debug, Default)]
pub(crate) struct Parsed<'a> {
    pub opts: Vec<Opt>,
    pub positionals: Vec<&'a Word>,
    /// Index (into the argument slice) of each positional.
    pub positional_index: Vec<usize>,
    /// Some argument depends on an expansion and could be an option we cannot see.
    pub dynamic: bool,
    /// The first such argument, as written.
    pub dynamic_src: Option<String>,
    /// Long options were matched exactly (the tool does not abbreviate).
    exact_long: bool,
    /// For each option, whether it was written as the full name of a known option.
    full: Vec<bool>,
}

impl Parsed<'_> {
    /// True when the short option `c` was given.
    pub fn short(&self, c: char) -> bool {
        self.opts
            .iter()
            .any(|o| matches!(o, Opt::Short(s, _) if *s == c))
    }

    /// True when the long option `name` (or an abbreviation GNU getopt would accept) was given.
    pub fn long(&self, name: &str) -> bool {
        self.opts
            .iter()
            .enumerate()
            .any(|(i, o)| matches!(o, Opt::Long(l, _) if self.matches_at(i, l, name)))
    }

    /// True when `-c` or `--name` was given.
    pub fn flag(&self, c: char, name: &str) -> bool {
        self.short(c) || self.long(name)
    }

    /// The value of `-c` or `--name`, last one wins.
    pub fn value(&self, c: Option<char>, name: &str) -> Option<&str> {
        self.opts
            .iter()
            .enumerate()
            .rev()
            .find_map(|(i, o)| match o {
                Opt::Short(s, v) if Some(*s) == c => v.as_deref(),
                Opt::Long(l, v) if self.matches_at(i, l, name) => v.as_deref(),
                _ => None,
            })
    }

    /// True when the long option written as `given` may stand for `name`.
    pub fn matches(&self, given: &str, name: &str) -> bool {
        if self.exact_long {
            given == name
        } else {
            long_matches(given, name)
        }
    }

    fn matches_at(&self, i: usize, given: &str, name: &str) -> bool {
        if self.full.get(i).copied().unwrap_or(false) {
            given == name
        } else {
            self.matches(given, name)
        }
    }

    fn push_long(&mut self, name: &str, value: Option<String>, spec: &Spec<'_>) {
        let full = spec.long_values.contains(&name) || spec.long_flags.contains(&name);
        self.full.resize(self.opts.len(), false);
        self.full.push(full);
        self.opts.push(Opt::Long(name.into(), value));
    }

    /// Mark an argument that could be an option we cannot see.
    fn mark_dynamic(&mut self, w: &Word) {
        self.dynamic = true;
        self.dynamic_src.get_or_insert_with(|| w.src.clone());
    }

    /// Every value given to the short option `c`.
    pub fn short_values(&self, c: char) -> impl Iterator<Item = &str> {
        self.opts.iter().filter_map(move |o| match o {
            Opt::Short(s, Some(v)) if *s == c => Some(v.as_str()),
            _ => None,
        })
    }

    /// For a form that is read-only only with a known set of options: the first option
    /// given that is not one of `shorts` or `longs`, as written. An allow-list matches long
    /// names in full only: an abbreviation may stand for an option not on the list.
    pub fn unlisted(&self, shorts: &str, longs: &[&str]) -> Option<String> {
        self.opts.iter().find_map(|o| match o {
            Opt::Short(c, _) if shorts.contains(*c) => None,
            Opt::Long(l, _) if longs.contains(&l.as_str()) => None,
            Opt::Short(c, _) => Some(format!("-{c}")),
            Opt::Long(l, _) => Some(format!("--{l}")),
        })
    }

    /// The first positional's fixed text.
    pub fn first(&self) -> Option<&str> {
        self.positionals.first().and_then(|w| w.fixed())
    }
}

/// GNU getopt_long accepts any unambiguous prefix of a long option. Whether a prefix is
/// unambiguous depends on every option the tool has, which we do not list, so every
/// non-empty prefix matches: an ambiguous one is an error for the tool, or (when the
/// candidates share a meaning) the dangerous option itself. This errs towards seeing the flag.
pub(crate) fn long_matches(given: &str, name: &str) -> bool {
    !given.is_empty() && name.starts_with(given)
}

/// True when `w` is one of the options `shorts` (alone, as `-c`) or `longs` (`--name`,
/// `--name=value`, or an abbreviation unless `exact_long`): for rewrites that drop an option.
pub(crate) fn names_option(w: &Word, shorts: &str, longs: &[&str], exact_long: bool) -> bool {
    let Some(t) = w.fixed() else {
        return false;
    };
    if let Some(l) = t.strip_prefix("--") {
        let name = l.split_once('=').map_or(l, |(n, _)| n);
        return longs.iter().any(|n| {
            if exact_long {
                name == *n
            } else {
                long_matches(name, n)
            }
        });
    }
    let mut cs = t.chars();
    cs.next() == Some('-')
        && matches!((cs.next(), cs.next()), (Some(c), None) if shorts.contains(c))
}

/// Parse `args` (not including the program name).
pub(crate) fn parse<'a>(args: &'a [Word], spec: Spec<'_>) -> Parsed<'a> {
    let mut p = Parsed {
        exact_long: spec.exact_long,
        ..Parsed::default()
    };
    let mut i = 0;
    let mut only_positionals = false;
    while i < args.len() {
        let w = &args[i];
        let Some(text) = w.fixed() else {
            // Past `--` (or the first operand of a POSIX tool) an expansion is an operand,
            // unless unquoted, when it may split into several words.
            let operand = if only_positionals {
                !w.may_split()
            } else {
                !w.may_be_option()
            };
            if !operand {
                p.mark_dynamic(w);
            }
            p.positionals.push(w);
            p.positional_index.push(i);
            if spec.stop_at_positional && operand {
                only_positionals = true;
            }
            i += 1;
            continue;
        };
        if only_positionals || text == "-" || !text.starts_with('-') {
            p.positionals.push(w);
            p.positional_index.push(i);
            if spec.stop_at_positional {
                only_positionals = true;
            }
            i += 1;
            continue;
        }
        if text == "--" {
            only_positionals = true;
            i += 1;
            continue;
        }
        if let Some(long) = text.strip_prefix("--") {
            match long.split_once('=') {
                Some((name, value)) => p.push_long(name, Some(value.into()), &spec),
                None => {
                    let takes = spec.long_values.iter().any(|n| p.matches(long, n));
                    let value = if takes {
                        i += 1;
                        option_value(&mut p, args.get(i))
                    } else {
                        None
                    };
                    p.push_long(long, value, &spec);
                }
            }
            i += 1;
            continue;
        }
        if spec.long_only {
            let body = &text[1..];
            let (name, value) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (body, None),
            };
            let several = name.chars().count() > 1;
            if spec.exact_long || several {
                let takes = value.is_none() && spec.long_values.iter().any(|n| p.matches(name, n));
                let value = match value {
                    Some(v) => Some(v.to_owned()),
                    None if takes => {
                        i += 1;
                        option_value(&mut p, args.get(i))
                    }
                    None => None,
                };
                p.push_long(name, value, &spec);
                if spec.exact_long || takes {
                    i += 1;
                    continue;
                }
            }
        }
        let cluster: Vec<char> = text[1..].chars().collect();
        let mut j = 0;
        while j < cluster.len() {
            let c = cluster[j];
            if spec.short_values.contains(c) {
                let rest: String = cluster[j + 1..].iter().collect();
                let value = if rest.is_empty() {
                    i += 1;
                    option_value(&mut p, args.get(i))
                } else {
                    Some(rest)
                };
                p.opts.push(Opt::Short(c, value));
                break;
            }
            p.opts.push(Opt::Short(c, None));
            j += 1;
        }
        i += 1;
    }
    p
}

/// The separate value of an option: an expansion there is the value, unless it splits.
fn option_value(p: &mut Parsed<'_>, w: Option<&Word>) -> Option<String> {
    let w = w?;
    if w.may_split() {
        p.mark_dynamic(w);
    }
    Some(w.fixed().unwrap_or("").to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Word> {
        s.split_whitespace().map(Word::literal).collect()
    }

    #[test]
    fn clusters_values_and_longs() {
        let args = words("-n5 -ab -o out --output=x --lines 3 file -- -notopt");
        let p = parse(
            &args,
            Spec {
                short_values: "no",
                long_values: &["lines"],
                ..Spec::default()
            },
        );
        assert_eq!(p.value(Some('n'), "x"), Some("5"));
        assert!(p.short('a') && p.short('b'));
        assert_eq!(p.value(Some('o'), "output"), Some("x"));
        assert_eq!(p.value(None, "lines"), Some("3"));
        let texts: Vec<Option<&str>> = p.positionals.iter().map(|w| w.fixed()).collect();
        assert_eq!(texts, vec![Some("file"), Some("-notopt")]);
    }

    #[test]
    fn abbreviations_match() {
        let args = words("--in-pl");
        let p = parse(&args, Spec::default());
        assert!(p.long("in-place"));
        assert!(!p.long("inplace-x"));
        // One letter is enough when the tool has no other option starting with it.
        assert!(parse(&words("--i"), Spec::default()).long("in-place"));
    }

    #[test]
    fn exact_tools_and_exact_names() {
        let args = words("--out=x --list");
        let exact = parse(
            &args,
            Spec {
                exact_long: true,
                ..Spec::default()
            },
        );
        assert!(!exact.long("output"));
        let gnu = parse(
            &args,
            Spec {
                long_flags: &["list"],
                ..Spec::default()
            },
        );
        assert!(gnu.long("output"));
        assert!(gnu.long("list") && !gnu.long("listed-incremental"));
    }
}
