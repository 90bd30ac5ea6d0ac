//! The reads' own mount namespace, made once by the base thread before it confines itself
//! ([`enter`]): every hidden path ([`super::hidden`]) is covered by an empty mask — a
//! directory by an empty read-only tmpfs, anything else by `/dev/null` — and so is every
//! block device node that holds one of them ([`super::blockdev`]), so that a raw read of
//! the disk (`debugfs`, `dd`) cannot recover a hidden file either.
//!
//! The namespace is a slave of the host's: mounts made on the host later show up in it,
//! and nothing made in it leaks out. A read thread starts in it (threads and processes
//! inherit the namespace of the thread that made them), and the agent's other threads
//! never enter it.
//!
//! A mask can go away behind the namespace's back: when the host renames a new file over
//! a masked one (`passwd` rewrites `/etc/shadow` that way), the kernel detaches the mount
//! in every other namespace; and a hidden path created after the namespace was made
//! (a new `~/.kube`) has no mask. [`Masks::verify`] checks every hidden path before each
//! read, and a read that finds one uncovered is not started: the base thread is replaced
//! by one with a fresh namespace and the read tried again.

use super::blockdev;
use super::hidden::HiddenPaths;
use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The name of the masks' tmpfs in `/proc/self/mountinfo`.
pub const MASK_SOURCE: &str = "vigil-hidden";

/// What the namespace covers, to check before each read.
#[derive(Debug, Clone)]
pub struct Masks {
    hidden: HiddenPaths,
    /// `/dev/null`'s device and inode: what a masked file now is.
    null: (u64, u64),
    /// The device numbers of the empty tmpfs masks over directories.
    tmpfs: Vec<u64>,
    /// Paths masked when the namespace was made.
    masked: Vec<PathBuf>,
    /// Block device nodes masked.
    devices: Vec<PathBuf>,
}

impl Masks {
    /// How many paths and device nodes are masked.
    pub fn counts(&self) -> (usize, usize) {
        (self.masked.len(), self.devices.len())
    }

    /// Check that every path the hidden list names now is still covered by a mask.
    pub fn verify(&self) -> Result<(), String> {
        for path in self.hidden.existing() {
            if !self.covered(&path) {
                return Err(format!("{} is not hidden", path.display()));
            }
        }
        Ok(())
    }

    fn covered(&self, path: &Path) -> bool {
        match std::fs::metadata(path) {
            // A dangling link or a path that went away shows nothing.
            Err(_) => true,
            Ok(meta) if meta.is_dir() => self.tmpfs.contains(&meta.dev()),
            Ok(meta) => (meta.dev(), meta.ino()) == self.null,
        }
    }
}

/// Move the calling thread into a new mount namespace and mask every hidden path and the
/// block devices that hold them. Needs `CAP_SYS_ADMIN`; the thread's other confinement
/// comes after.
pub fn enter(hidden: &HiddenPaths) -> Result<Masks, String> {
    unshare(CloneFlags::CLONE_NEWNS).map_err(|e| format!("unshare(CLONE_NEWNS): {e}"))?;
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_SLAVE,
        None::<&str>,
    )
    .map_err(|e| format!("making / a slave mount: {e}"))?;
    let null = std::fs::metadata("/dev/null").map_err(|e| format!("/dev/null: {e}"))?;
    let mut masks = Masks {
        hidden: hidden.clone(),
        null: (null.dev(), null.ino()),
        tmpfs: Vec::new(),
        masked: Vec::new(),
        devices: Vec::new(),
    };
    let paths = hidden.existing();
    // Found before anything is masked: afterwards the paths resolve to the masks.
    let devices = blockdev::holding(&paths);
    for path in paths {
        // Under a directory masked already, or named twice (through a link).
        if masks.covered(&path) {
            continue;
        }
        mask(&path, &mut masks)?;
        masks.masked.push(path);
    }
    for node in devices {
        mask_file(&node)?;
        masks.devices.push(node);
    }
    Ok(masks)
}

fn mask(path: &Path, masks: &mut Masks) -> Result<(), String> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    if meta.is_dir() {
        mount(
            Some(MASK_SOURCE),
            path,
            Some("tmpfs"),
            MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
            Some("size=4k,nr_inodes=1,mode=000"),
        )
        .map_err(|e| format!("hiding {}: {e}", path.display()))?;
        let dev = std::fs::metadata(path)
            .map_err(|e| format!("{}: {e}", path.display()))?
            .dev();
        masks.tmpfs.push(dev);
        Ok(())
    } else {
        mask_file(path)
    }
}

fn mask_file(path: &Path) -> Result<(), String> {
    mount(
        Some("/dev/null"),
        path,
        None::<&str>,
        MsFlags::MS_BIND,
        None::<&str>,
    )
    .map_err(|e| format!("hiding {}: {e}", path.display()))
}
