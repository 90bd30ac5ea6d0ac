//! git: the table `rules/git.toml` (global options, subcommands, log/show/diff/status),
//! and the read subcommands not yet converted, with the flags that write or run programs.

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

/// git: `rules/git.toml` reads the global options and finds the subcommand; log, show,
/// diff and status are decided by their tables, the other read subcommands below.
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
    let sub_cmd = cmd.with_args("git", rest);
    let p = sub_cmd.parse(Spec {
        short_values: "nopSGUM",
        long_values: &[
            "format",
            "pretty",
            "output",
            "author",
            "grep",
            "since",
            "until",
            "max-count",
            "open-files-in-pager",
        ],
        ..Spec::default()
    });
    if p.dynamic {
        return sub_cmd.dynamic_write();
    }
    if p.long("output")
        || p.long("upload-pack")
        || (sub == "ls-remote" && p.short('u'))
        || p.long("ext-diff")
        || p.long("open-files-in-pager")
        || (sub == "grep" && p.short('O'))
    {
        return Verdict::write(
            Risk::Medium,
            format!("git {sub} with this flag writes a file or runs a program"),
        );
    }
    let pos = p.positional_texts();
    let first = pos.first().copied().flatten();
    let any = |shorts: &str, longs: &[&str]| {
        shorts.chars().any(|c| p.short(c)) || longs.iter().any(|l| p.long(l))
    };
    let read = match sub {
        // A modifying flag decides, whatever listing flag comes with it.
        "branch" => {
            !any(
                "dDmMcCfut",
                &[
                    "delete",
                    "move",
                    "copy",
                    "force",
                    "set-upstream-to",
                    "unset-upstream",
                    "edit-description",
                    "track",
                    "no-track",
                    "create-reflog",
                    "recurse-submodules",
                ],
            ) && (pos.is_empty()
                || any(
                    "lar",
                    &[
                        "list",
                        "contains",
                        "no-contains",
                        "merged",
                        "no-merged",
                        "points-at",
                        "show-current",
                        "all",
                        "remotes",
                    ],
                ))
        }
        "tag" => {
            !any(
                "dasfmFuex",
                &[
                    "delete",
                    "annotate",
                    "sign",
                    "force",
                    "message",
                    "file",
                    "local-user",
                    "edit",
                    "create-reflog",
                    "cleanup",
                ],
            ) && (pos.is_empty()
                || any(
                    "lvn",
                    &[
                        "list",
                        "verify",
                        "contains",
                        "no-contains",
                        "merged",
                        "no-merged",
                        "points-at",
                    ],
                ))
        }
        "remote" => matches!(first, None | Some("show" | "get-url")) && !p.long("prune"),
        "config" => {
            !any(
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
            ) && (any(
                "l",
                &["list", "get", "get-all", "get-regexp", "get-urlmatch"],
            ) || matches!(first, Some("get" | "list"))
                || pos.len() == 1)
                && !matches!(
                    first,
                    Some("set" | "unset" | "rename-section" | "remove-section" | "edit")
                )
        }
        "stash" => matches!(first, Some("list" | "show")),
        "worktree" => first == Some("list"),
        "submodule" => matches!(first, None | Some("status" | "summary")),
        "notes" => matches!(first, None | Some("list" | "show")),
        "reflog" => matches!(first, None | Some("show")),
        "fsck" => !p.long("lost-found"),
        "archive" => !p.flag('o', "output") && !p.long("remote") && !p.long("exec"),
        _ => true,
    };
    if read {
        Verdict::read(format!("git {sub} only reads"))
    } else {
        Verdict::write(
            Risk::Medium,
            format!("git {sub} in this form changes the repository"),
        )
    }
}
