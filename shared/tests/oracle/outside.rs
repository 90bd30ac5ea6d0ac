//! What the oracle watches outside the jail, before and after every command: a sentinel
//! tree (contents and mtimes), the names in the host's `/tmp`, `/var/tmp` and `/root`,
//! the entries of `/etc` with their mtimes and sizes, the host name, the loaded kernel
//! modules, the active swap areas and the wall clock. A change is a write that escaped.
//!
//! Only names are compared in `/tmp`, `/var/tmp` and `/root`: other processes on the host
//! (compilers, caches) touch files there, and an added or removed name is what a command
//! escaping the jail would leave. Changes in the host's `/tmp` are kept apart
//! ([`Changes::host_tmp`]): compilers running beside the oracle create and delete files
//! there all the time, and the jail cannot reach it anyway (its `/tmp` is a tmpfs of its
//! own, which the oracle checks).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// Directories whose entry names are compared.
const NAMES_OF: [&str; 3] = ["/tmp", "/var/tmp", "/root"];
/// Directories whose entries are compared with their mtimes and sizes.
const ENTRIES_OF: [&str; 1] = ["/etc"];
/// Kernel state read from /proc (of the host's pid namespace).
const PROC_FILES: [&str; 3] = ["/proc/modules", "/proc/swaps", "/proc/sys/kernel/hostname"];

/// One look at everything watched.
#[derive(Debug)]
pub struct Snapshot {
    state: BTreeMap<String, String>,
    clock: (SystemTime, Instant),
}

/// Differences between two snapshots.
#[derive(Debug, Default)]
pub struct Changes {
    /// Writes that escaped the jail.
    pub escaped: Vec<String>,
    /// Names created or removed in the host's `/tmp` (often by other processes).
    pub host_tmp: Vec<String>,
}

/// A sentinel tree the jail can see (it lives on the host's root file system).
pub fn make_sentinel(dir: &Path) -> std::io::Result<PathBuf> {
    let sentinel = dir.join("sentinel");
    std::fs::create_dir_all(sentinel.join("sub"))?;
    std::fs::write(sentinel.join("a.conf"), "listen 80;\n")?;
    std::fs::write(sentinel.join("sub/b.db"), [0u8, 1, 2, 3])?;
    Ok(sentinel)
}

impl Snapshot {
    /// Look at everything now.
    pub fn take(sentinel: &Path) -> Self {
        let mut state = BTreeMap::new();
        for dir in NAMES_OF {
            for (name, _) in entries(Path::new(dir)) {
                state.insert(format!("{dir}/{name}"), String::new());
            }
        }
        for dir in ENTRIES_OF.iter().map(Path::new).chain([sentinel]) {
            walk(dir, dir == sentinel, &mut state);
        }
        for file in PROC_FILES {
            state.insert(
                file.into(),
                std::fs::read_to_string(file).unwrap_or_default(),
            );
        }
        Snapshot {
            state,
            clock: (SystemTime::now(), Instant::now()),
        }
    }

    /// What differs from `before`.
    pub fn changes_since(&self, before: &Snapshot) -> Changes {
        let mut changes = vec![];
        for (key, value) in &before.state {
            match self.state.get(key) {
                None => changes.push(format!("outside: {key} removed")),
                Some(now) if now != value => changes.push(format!("outside: {key} changed")),
                Some(_) => {}
            }
        }
        for key in self.state.keys().filter(|k| !before.state.contains_key(*k)) {
            changes.push(format!("outside: {key} created"));
        }
        let expected = before.clock.0 + (self.clock.1 - before.clock.1);
        let skew = match self.clock.0.duration_since(expected) {
            Ok(ahead) => ahead,
            Err(behind) => behind.duration(),
        };
        if skew > Duration::from_secs(2) {
            changes.push(format!("outside: the wall clock moved by {skew:?}"));
        }
        let (host_tmp, escaped) = changes
            .into_iter()
            .partition(|c: &String| c.starts_with("outside: /tmp/"));
        Changes { escaped, host_tmp }
    }
}

/// Entries of `dir` as (name, "mtime size").
fn entries(dir: &Path) -> Vec<(String, String)> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return vec![];
    };
    read.filter_map(Result::ok)
        .map(|e| {
            let meta = e.path().symlink_metadata().ok();
            let stamp = meta
                .map(|m| format!("{:?} {}", m.modified().ok(), m.len()))
                .unwrap_or_default();
            (e.file_name().to_string_lossy().into_owned(), stamp)
        })
        .collect()
}

/// Record `dir`'s entries (recursively and with file contents when `deep`).
fn walk(dir: &Path, deep: bool, state: &mut BTreeMap<String, String>) {
    for (name, stamp) in entries(dir) {
        let path = dir.join(&name);
        let mut value = stamp;
        if deep && path.is_file() {
            value.push_str(&format!(" {:?}", std::fs::read(&path).unwrap_or_default()));
        }
        state.insert(path.to_string_lossy().into_owned(), value);
        if deep && path.is_dir() {
            walk(&path, deep, state);
        }
    }
}
