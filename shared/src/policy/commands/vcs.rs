//! git: the tables `rules/git*.toml` decide the global options and every subcommand;
//! here, the operand count of the older `git config` form, and which writes open an
//! editor.

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

/// git: `rules/git*.toml` read the global options, find the subcommand and decide it.
fn git(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "git");
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
    // The older `git config` form: with no action option, one operand gets a value and
    // more set one.
    if !v.is_write() && w.path == ["config"] {
        const ACTIONS: &[&str] = &[
            "get",
            "get-all",
            "get-regexp",
            "get-urlmatch",
            "list",
            "get-color",
            "get-colorbool",
            "help",
        ];
        if !ACTIONS.iter().any(|a| w.has(a)) && w.operands.len() != 1 {
            return Verdict::write(
                Risk::Medium,
                "git config with a name and a value (and no action) sets it",
            );
        }
    }
    v
}
