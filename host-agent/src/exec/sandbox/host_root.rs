//! `--host-root DIR`: the host's root file system as the agent sees it when the agent runs
//! in a container (a Kubernetes DaemonSet mounts the node's `/` read-only at `/host`).
//! Host reads then run with DIR as their root: the reads' mount namespace
//! ([`super::mountns`]) pivots (or, where seccomp forbids `pivot_root`, chroots) into it
//! before it masks anything, so the programs, files,
//! hidden paths and sockets a read meets are the host's, by the host's own paths, and the
//! container's files (the agent's image, its service account token) are out of reach.
//!
//! Paths the agent must find before the pivot (the shell, the daemons' sockets for the
//! doors) are resolved inside DIR by the kernel (`openat2` with `RESOLVE_IN_ROOT`), so a
//! host link such as `/var/run -> /run` stays inside the host's tree instead of leading
//! to the container's `/run`.

use super::SandboxError;
use nix::errno::Errno;
use nix::fcntl::{OFlag, OpenHow, ResolveFlag, openat2};
use nix::mount::{MntFlags, MsFlags, mount, umount2};
use nix::unistd::{chroot, pivot_root};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// The host's root directory as the agent's namespace names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRoot {
    dir: PathBuf,
}

impl HostRoot {
    /// `dir` as the host's root: an absolute directory. `/` (the agent runs on the host
    /// itself) is `None`: nothing to do.
    pub fn new(dir: &Path) -> Result<Option<Self>, SandboxError> {
        if !dir.is_absolute() {
            return Err(SandboxError::Invalid(format!(
                "--host-root {} is not an absolute path",
                dir.display()
            )));
        }
        let real = std::fs::canonicalize(dir)
            .map_err(|e| SandboxError::Invalid(format!("--host-root {}: {e}", dir.display())))?;
        if !real.is_dir() {
            return Err(SandboxError::Invalid(format!(
                "--host-root {} is not a directory",
                dir.display()
            )));
        }
        Ok((real != Path::new("/")).then_some(HostRoot { dir: real }))
    }

    /// The directory, as the agent's namespace names it.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the host's `path` (absolute, as the host names it) is in the agent's
    /// namespace, every link followed inside the host's tree; `None` when it does not
    /// exist.
    pub fn resolve(&self, path: &Path) -> Option<PathBuf> {
        let root = std::fs::File::open(&self.dir).ok()?;
        let how = OpenHow::new()
            .flags(OFlag::O_PATH | OFlag::O_CLOEXEC)
            .resolve(ResolveFlag::RESOLVE_IN_ROOT | ResolveFlag::RESOLVE_NO_MAGICLINKS);
        let fd = openat2(&root, path, how).ok()?;
        std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()
    }

    /// Makes the host's root the root of the calling thread's mount namespace, which must
    /// be its own (unshared) and a slave of the agent's. Mounts under the root stay as
    /// they are; the agent's own tree is detached from the namespace.
    pub fn enter(&self) -> Result<(), SandboxError> {
        let confine = |what: &str, e: nix::Error| {
            SandboxError::Confine(format!("{what} {}: {e}", self.dir.display()))
        };
        // pivot_root needs the new root to be a mount point: bind it over itself.
        mount(
            Some(&self.dir),
            &self.dir,
            None::<&str>,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            None::<&str>,
        )
        .map_err(|e| confine("binding the host root", e))?;
        std::env::set_current_dir(&self.dir).map_err(|e| {
            SandboxError::Confine(format!(
                "entering the host root {}: {e}",
                self.dir.display()
            ))
        })?;
        // Stack the old root on the new one (no directory for it is needed), then detach it.
        // Container runtimes' default seccomp profiles refuse pivot_root even with
        // CAP_SYS_ADMIN; chroot (CAP_SYS_CHROOT) then roots the thread instead, leaving the
        // agent's tree mounted but out of the reads' reach: they lose CAP_SYS_CHROOT
        // ([`super::caps`]) and inherit no descriptor of it (every one is close-on-exec).
        match pivot_root(".", ".") {
            Ok(()) => umount2(".", MntFlags::MNT_DETACH)
                .map_err(|e| confine("detaching the old root above", e))?,
            Err(Errno::EPERM) => chroot(".").map_err(|e| confine("chroot into", e))?,
            Err(e) => return Err(confine("pivot_root into", e)),
        }
        std::env::set_current_dir("/")
            .map_err(|e| SandboxError::Confine(format!("chdir / in the host root: {e}")))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_must_be_an_absolute_directory_and_slash_is_no_root() {
        assert!(HostRoot::new(Path::new("host")).is_err());
        assert!(HostRoot::new(Path::new("/nonexistent/vigil-host-root")).is_err());
        assert_eq!(HostRoot::new(Path::new("/")).unwrap(), None);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        assert!(HostRoot::new(&file).is_err());
        assert!(HostRoot::new(dir.path()).unwrap().is_some());
    }

    /// Links that point to absolute paths resolve inside the root, never to the agent's
    /// own files; `..` cannot climb out.
    #[test]
    fn paths_resolve_inside_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("run")).unwrap();
        std::fs::create_dir_all(root.join("var")).unwrap();
        std::fs::write(root.join("run/engine.sock"), "").unwrap();
        std::os::unix::fs::symlink("/run", root.join("var/run")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", root.join("escape")).unwrap();
        let host = HostRoot::new(root).unwrap().unwrap();
        let real = std::fs::canonicalize(root).unwrap();
        assert_eq!(
            host.resolve(Path::new("/var/run/engine.sock")),
            Some(real.join("run/engine.sock"))
        );
        assert_eq!(
            host.resolve(Path::new("/escape")),
            None,
            "no /etc/hostname in the root"
        );
        assert_eq!(
            host.resolve(Path::new("/../../run/engine.sock")),
            Some(real.join("run/engine.sock"))
        );
        assert_eq!(host.resolve(Path::new("/missing")), None);
    }
}
