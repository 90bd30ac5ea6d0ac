//! Hiding without a mount namespace, for an agent that cannot make one (not root, no
//! `CAP_SYS_ADMIN`; `make run` as a developer): a second Landlock layer on the read
//! thread that handles reading files and listing directories, and allows them beneath
//! every entry of every directory on the way to a hidden path, except the hidden paths
//! and those directories themselves. So a hidden file or directory is unreadable by any
//! path that leads to it (Landlock judges where a file is, not the name used), while
//! everything else reads as before. The directories on the way may still be listed, as
//! may the hidden directories' names.
//!
//! Links among those entries are not granted (a rule would follow one to its target,
//! which may be hidden); reading through a link is judged where it leads. Built per
//! read, from the entries that exist then: a file created later beside a
//! hidden path is unreadable until the next read. Without the namespace there are no
//! doors and no masked sockets, so such an agent refuses reads that may open sockets.

use super::SandboxError;
use landlock::{
    AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus,
    path_beneath_rules,
};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The entries readable beneath: every entry of every proper ancestor of `hidden`,
/// except the hidden paths and the ancestors themselves.
pub fn readable(hidden: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let all: BTreeSet<PathBuf> = hidden
        .iter()
        .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
        .collect();
    // A hidden path inside another is hidden with it; as an "ancestor" it would open up
    // its neighbours inside the outer one.
    let hidden: BTreeSet<PathBuf> = all
        .iter()
        .filter(|p| !all.iter().any(|outer| outer != *p && p.starts_with(outer)))
        .cloned()
        .collect();
    let mut ancestors = BTreeSet::new();
    for path in &hidden {
        let mut at = path.parent();
        while let Some(dir) = at {
            ancestors.insert(dir.to_owned());
            at = dir.parent();
        }
    }
    let mut allow = Vec::new();
    for dir in &ancestors {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            // A rule follows a link to its target, which may be hidden; a link is read
            // through to where it points, which is judged on its own.
            let link = entry.file_type().is_ok_and(|t| t.is_symlink());
            if !link && !hidden.contains(&path) && !ancestors.contains(&path) {
                allow.push(path);
            }
        }
    }
    (allow, ancestors.into_iter().collect())
}

/// Add the layer to the calling thread. `Ok(true)` when the kernel enforces it.
pub fn restrict(hidden: &[PathBuf]) -> Result<bool, SandboxError> {
    if hidden.is_empty() {
        return Ok(true);
    }
    let read = AccessFs::ReadFile | AccessFs::ReadDir;
    let (allow, ancestors) = readable(hidden);
    let status = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(read)
        .and_then(|r| r.create())
        .and_then(|r| r.add_rules(path_beneath_rules(&allow, read)))
        .and_then(|r| r.add_rules(path_beneath_rules(&ancestors, AccessFs::ReadDir)))
        .and_then(|r| r.restrict_self())
        .map_err(|e| format!("landlock read layer: {e}"))?;
    Ok(status.ruleset != RulesetStatus::NotEnforced)
}

/// True when `path` is one `readable` allows (for tests and diagnosis).
pub fn allowed_beneath(allow: &[PathBuf], path: &Path) -> bool {
    allow.iter().any(|a| path.starts_with(a))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn siblings_on_the_way_are_readable_and_the_hidden_path_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("repo/.vigil/local-agent")).unwrap();
        std::fs::create_dir_all(root.join("repo/src")).unwrap();
        std::fs::write(root.join("repo/README"), "x").unwrap();
        std::fs::create_dir_all(root.join("other")).unwrap();
        let (allow, ancestors) = readable(&[
            root.join("repo/.vigil"),
            root.join("repo/.vigil/local-agent"),
        ]);
        assert!(allowed_beneath(&allow, &root.join("repo/src/main.rs")));
        assert!(allowed_beneath(&allow, &root.join("repo/README")));
        assert!(allowed_beneath(&allow, &root.join("other/x")));
        assert!(!allowed_beneath(
            &allow,
            &root.join("repo/.vigil/admin.token")
        ));
        // The hidden directory inside the hidden one does not open up its neighbours.
        assert!(!ancestors.contains(&root.join("repo/.vigil")));
        assert!(ancestors.contains(&root.join("repo")));
        assert!(!allow.contains(&root.join("repo")));
    }

    /// The layer on a thread of its own: the hidden directory's file cannot be read by
    /// any name (a link to it included), its neighbours can; this thread is untouched.
    #[test]
    fn the_kernel_keeps_a_hidden_file_from_a_thread_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("repo/.vigil")).unwrap();
        std::fs::write(root.join("repo/.vigil/admin.token"), "vat_secret").unwrap();
        std::fs::write(root.join("repo/notes"), "plain").unwrap();
        std::os::unix::fs::symlink(root.join("repo/.vigil"), root.join("link")).unwrap();
        let hidden = vec![root.join("repo/.vigil")];
        let r = root.clone();
        let (enforced, secret, linked, notes) = std::thread::spawn(move || {
            rustix::thread::set_no_new_privs(true).unwrap();
            let enforced = restrict(&hidden).unwrap();
            (
                enforced,
                std::fs::read_to_string(r.join("repo/.vigil/admin.token")),
                std::fs::read_to_string(r.join("link/admin.token")),
                std::fs::read_to_string(r.join("repo/notes")),
            )
        })
        .join()
        .unwrap();
        if !enforced {
            eprintln!("skipped: this kernel has no Landlock");
            return;
        }
        assert!(secret.is_err(), "{secret:?}");
        assert!(linked.is_err(), "{linked:?}");
        assert_eq!(notes.unwrap(), "plain");
        assert_eq!(
            std::fs::read_to_string(root.join("repo/.vigil/admin.token")).unwrap(),
            "vat_secret"
        );
    }
}
