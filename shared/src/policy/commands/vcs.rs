//! git: the table `rules/git.toml` decides the global options and every subcommand but
//! `config`, which is still read here; and which writes open an editor.

use super::super::args::Spec;
use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::Cmd;
use crate::policy::options::{Class, judge};

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    if cmd.name != "git" {
        return None;
    }
    Some(git(cmd))
}

/// git: `rules/git.toml` reads the global options, finds the subcommand and decides it;
/// `config` below.
fn git(cmd: &Cmd<'_>) -> Verdict {
    let w = match cmd.walk("git") {
        Ok(w) => w,
        Err(v) => return v,
    };
    let v = judge("git", &w);
    let Some(sub) = w.path.first().map(String::as_str) else {
        return v;
    };
    let rest = cmd.args.get(w.after_sub..).unwrap_or_default();
    if v.is_write() && w.node.class == Class::Write {
        let interactive = rest.iter().any(|w| {
            matches!(
                w.text.as_str(),
                "-i" | "--interactive" | "-p" | "--patch" | "-e" | "--edit"
            )
        }) || (sub == "commit"
            && !rest.iter().any(|w| {
                w.text.starts_with("-m")
                    || w.text.starts_with("--message")
                    || w.text.starts_with("-F")
                    || w.text.starts_with("--file")
                    || w.text.starts_with("-C")
                    || w.text == "--no-edit"
                    || w.text.starts_with("--fixup")
                    || w.text.starts_with("--reuse-message")
            }))
            || matches!(sub, "mergetool" | "difftool" | "gui" | "citool");
        return if interactive {
            v.because(format!("git {sub} opens an editor or asks questions"))
                .unbounded(UnboundedCategory::Pager, None)
        } else {
            v
        };
    }
    if v.is_write() || w.node.class != Class::Delegate {
        return v;
    }
    // Only `config` is still decided here (`delegate` in the table).
    let sub_cmd = cmd.with_args("git", rest);
    let p = sub_cmd.parse(Spec::default());
    if p.dynamic {
        return sub_cmd.dynamic_write();
    }
    let pos = p.positional_texts();
    let first = pos.first().copied().flatten();
    let any = |shorts: &str, longs: &[&str]| {
        shorts.chars().any(|c| p.short(c)) || longs.iter().any(|l| p.long(l))
    };
    let read = sub == "config"
        && !any(
            "e",
            &[
                "unset",
                "unset-all",
                "add",
                "replace-all",
                "rename-section",
                "remove-section",
                "edit",
            ],
        )
        && (any(
            "l",
            &["list", "get", "get-all", "get-regexp", "get-urlmatch"],
        ) || matches!(first, Some("get" | "list"))
            || pos.len() == 1)
        && !matches!(
            first,
            Some("set" | "unset" | "rename-section" | "remove-section" | "edit")
        );
    if read {
        Verdict::read(format!("git {sub} only reads"))
    } else {
        Verdict::write(
            Risk::Medium,
            format!("git {sub} in this form changes the repository"),
        )
    }
}
