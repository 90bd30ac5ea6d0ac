//! The reads' own mount namespace, made once by the base thread before it confines itself
//! ([`enter`]): every hidden path ([`super::hidden`]) is covered by an empty mask — a
//! directory by an empty read-only tmpfs, anything else by `/dev/null` — and so is every
//! block device node that holds one of them ([`super::blockdev`]), so that a raw read of
//! the disk (`debugfs`, `dd`) cannot recover a hidden file either.
//!
//! Daemon sockets: each read-only door ([`super::doors`]) is bound over the socket it
//! stands for, and every other UNIX socket bound to a path on this host
//! (`/proc/net/unix`) is masked, except PostgreSQL's ([`OPEN_SOCKETS`]), whose reads run
//! in read-only sessions. Only reads whose
//! programs need sockets can create one at all ([`super::sockets`]).
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

use super::SandboxError;
use super::blockdev;
use super::doors::Door;
use super::hidden::HiddenPaths;
use super::host_root::HostRoot;
use super::sockets::Reach;
use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

pub use vigil_shared::hide::MASK_SOURCE;

/// Sockets that reads reach as they are: PostgreSQL's (every read session is read-only:
/// `read_env`'s `PGOPTIONS`). The D-Bus system bus and the container engines are reached
/// only through their doors, or not at all.
pub const OPEN_SOCKETS: &[&str] = &[
    "/run/postgresql/.s.PGSQL.*",
    "/var/run/postgresql/.s.PGSQL.*",
    "/tmp/.s.PGSQL.*",
];

/// What the reads' namespace is made of.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Paths no read sees.
    pub hidden: HiddenPaths,
    /// Doors bound over the sockets they stand for.
    pub doors: Vec<Door>,
    /// Mask every other path socket but [`OPEN_SOCKETS`].
    pub mask_sockets: bool,
    /// The host's root when the agent runs in a container (`--host-root`): the
    /// namespace pivots into it before masking, so hidden paths, sockets and the doors'
    /// paths are the host's.
    pub root: Option<HostRoot>,
}

impl Plan {
    /// Only `hidden` (tests).
    pub fn hiding(hidden: HiddenPaths) -> Self {
        Plan {
            hidden,
            doors: Vec::new(),
            mask_sockets: false,
            root: None,
        }
    }
}

/// What the namespace covers, to check before each read.
#[derive(Debug, Clone)]
pub struct Masks {
    hidden: HiddenPaths,
    /// The doors' device and inode numbers: what a covered socket now is.
    doors: Vec<(u64, u64)>,
    /// Whether other sockets are masked (and so must stay masked).
    mask_sockets: bool,
    /// How many sockets were masked.
    sockets: usize,
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
    /// How many paths, device nodes and sockets are masked.
    pub fn counts(&self) -> (usize, usize, usize) {
        (self.masked.len(), self.devices.len(), self.sockets)
    }

    /// Check that every path the hidden list names now is still covered by a mask, and,
    /// for a read that may open sockets, that every socket is a door or masked.
    pub fn verify(&self, reach: Reach) -> Result<(), SandboxError> {
        for path in self.hidden.candidates() {
            if !self.covered(&path) {
                return Err(SandboxError::Uncovered(format!(
                    "{} is not hidden",
                    path.display()
                )));
            }
        }
        if self.mask_sockets
            && reach != Reach::Local
            && let Some(path) = unmasked_sockets(&self.doors).first()
        {
            return Err(SandboxError::Uncovered(format!(
                "the socket {} is not masked",
                path.display()
            )));
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
pub fn enter(plan: &Plan) -> Result<Masks, SandboxError> {
    let hidden = &plan.hidden;
    unshare(CloneFlags::CLONE_NEWNS).map_err(|e| format!("unshare(CLONE_NEWNS): {e}"))?;
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_SLAVE,
        None::<&str>,
    )
    .map_err(|e| format!("making / a slave mount: {e}"))?;
    // Doors first: a door's socket must still be reachable when it is bound, which it is
    // not after a pivot into the host's root. (The pivot's recursive bind of the root
    // carries the doors' mounts along.)
    let mut doors = Vec::new();
    for door in &plan.doors {
        let meta = std::fs::metadata(&door.socket)
            .map_err(|e| format!("door {}: {e}", door.socket.display()))?;
        let covers = match &plan.root {
            Some(root) => match root.resolve(&door.covers) {
                Some(path) => path,
                None => continue,
            },
            None => door.covers.clone(),
        };
        if std::fs::metadata(&covers).is_ok_and(|m| (m.dev(), m.ino()) == (meta.dev(), meta.ino()))
        {
            continue; // two paths to one socket: bound once
        }
        bind(&door.socket, &covers)?;
        doors.push((meta.dev(), meta.ino()));
    }
    if let Some(root) = &plan.root {
        // Reads' scratch directories are made in the agent's temporary directory
        // (`Scratch`); it covers the host's own, whose files and sockets are not theirs.
        let tmp = std::fs::canonicalize(std::env::temp_dir())
            .map_err(|e| format!("the agent's temporary directory: {e}"))?;
        let Some(host_tmp) = root.resolve(&tmp) else {
            return Err(SandboxError::Confine(format!(
                "the host root {} has no {} for the reads' scratch directories",
                root.dir().display(),
                tmp.display()
            )));
        };
        bind(&tmp, &host_tmp)?;
        root.enter()?;
    }
    let null = std::fs::metadata("/dev/null").map_err(|e| format!("/dev/null: {e}"))?;
    let mut masks = Masks {
        hidden: hidden.clone(),
        doors,
        mask_sockets: plan.mask_sockets,
        sockets: 0,
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
    if plan.mask_sockets {
        for path in unmasked_sockets(&masks.doors) {
            mask_file(&path)?;
            masks.sockets += 1;
        }
    }
    Ok(masks)
}

/// Path sockets of this network namespace (`/proc/net/unix`) that are still sockets here
/// (not masked), not a door, and not on [`OPEN_SOCKETS`].
fn unmasked_sockets(doors: &[(u64, u64)]) -> Vec<PathBuf> {
    let table = std::fs::read_to_string("/proc/net/unix").unwrap_or_default();
    let mut out: Vec<PathBuf> = Vec::new();
    for line in table.lines().skip(1) {
        // Num RefCount Protocol Flags Type St Inode Path
        let Some(path) = line.split_whitespace().nth(7) else {
            continue;
        };
        if !path.starts_with('/') || OPEN_SOCKETS.iter().any(|p| open_socket(p, path)) {
            continue;
        }
        let path = PathBuf::from(path);
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        use std::os::unix::fs::FileTypeExt;
        if meta.file_type().is_socket()
            && !doors.contains(&(meta.dev(), meta.ino()))
            && !out.contains(&path)
        {
            out.push(path);
        }
    }
    out
}

fn open_socket(pattern: &str, path: &str) -> bool {
    match pattern.split_once('*') {
        Some((head, tail)) => {
            path.starts_with(head) && path.ends_with(tail) && !path[head.len()..].contains('/')
        }
        None => pattern == path,
    }
}

fn bind(source: &Path, target: &Path) -> Result<(), SandboxError> {
    mount(
        Some(source),
        target,
        None::<&str>,
        MsFlags::MS_BIND,
        None::<&str>,
    )
    .map_err(|e| {
        SandboxError::Confine(format!(
            "binding {} over {}: {e}",
            source.display(),
            target.display()
        ))
    })
}

fn mask(path: &Path, masks: &mut Masks) -> Result<(), SandboxError> {
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

fn mask_file(path: &Path) -> Result<(), SandboxError> {
    bind(Path::new("/dev/null"), path)
}
