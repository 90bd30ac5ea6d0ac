//! Package managers: apt, apt-get, apt-cache, apt-config, apt-mark, dpkg, dpkg-query, rpm,
//! dnf/yum, zypper, pacman, apk, brew, pkg, snap, flatpak and pip, each read with its table
//! in `rules/`; here pacman's letters, whose meaning depends on the operation.

use super::super::types::Risk;
use super::super::verdict::Verdict;
use super::Cmd;
use crate::policy::options::judge;

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "apt" | "apt-get" | "apt-cache" | "apt-config" | "apt-mark" | "dpkg" | "dpkg-query"
        | "zypper" | "apk" | "brew" | "pkg" | "snap" | "flatpak" | "pip" | "pip3" => {
            cmd.by_table(cmd.name)
        }
        "dnf" | "yum" => cmd.by_table("dnf"),
        "pacman" => pacman(cmd),
        "rpm" => rpm(cmd),
        _ => return None,
    };
    Some(v)
}

/// rpm: `rules/rpm.toml`; a package named by URL (`rpm -qp https://…`) is downloaded to
/// a temporary file by rpm's URL helper.
fn rpm(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "rpm");
    let v = judge("rpm", &w);
    if v.is_write() {
        return v;
    }
    let url = w
        .operands
        .iter()
        .any(|(_, word)| word.fixed().is_none_or(|t| t.contains("://")));
    if url {
        return Verdict::write(
            Risk::Medium,
            "rpm with a package URL downloads it to a temporary file",
        );
    }
    v
}

/// pacman: `rules/pacman.toml` reads the words; the operation decides what its letters
/// mean (`-Ss` searches, `-Rs` removes recursively, `-Qu` lists upgrades, `-Su` upgrades).
fn pacman(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "pacman");
    let v = judge("pacman", &w);
    if v.is_write() {
        return v;
    }
    let any = |ids: &[&str]| ids.iter().any(|id| w.has(id));
    let ops: Vec<&str> = [
        ("Q", "query"),
        ("S", "sync"),
        ("F", "files"),
        ("T", "deptest"),
        ("V", "version"),
        ("h", "help"),
        ("R", "remove"),
        ("U", "upgrade"),
        ("D", "database"),
    ]
    .iter()
    .filter(|(short, long)| any(&[short, long]))
    .map(|(short, _)| *short)
    .collect();
    let refresh = any(&["y", "refresh"]);
    match ops.as_slice() {
        ["Q" | "T" | "V" | "h"] => v,
        ["F"] if !refresh => v,
        ["S"]
            if any(&[
                "s", "i", "l", "g", "p", "search", "info", "list", "groups", "print",
            ]) && !refresh
                && !any(&["u", "w", "c", "sysupgrade", "downloadonly", "clean"]) =>
        {
            v
        }
        ["S" | "F"] => Verdict::write(
            Risk::High,
            "pacman -S or -F with these options refreshes, downloads, cleans or installs",
        ),
        [op] => Verdict::write(Risk::High, format!("pacman -{op} changes packages")),
        [] => Verdict::unknown("pacman without an operation"),
        _ => Verdict::unknown("pacman with several operations"),
    }
}
