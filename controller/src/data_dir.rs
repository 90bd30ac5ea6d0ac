//! The controller's data directory (`--data-dir`): the names of its files, creating it with
//! private permissions, writing secrets atomically with mode 0600, and a lock so that
//! `serve` and the state subcommands never initialise it twice at once.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// The CA certificate (PEM).
pub const CA_PEM: &str = "ca.pem";
/// The CA private key (PEM, 0600).
pub const CA_KEY: &str = "ca.key";
/// The gateway's server certificate (PEM).
pub const GATEWAY_PEM: &str = "gateway.pem";
/// The gateway's private key (PEM, 0600).
pub const GATEWAY_KEY: &str = "gateway.key";
/// The Ed25519 grant-signing seed, 64 hex characters (0600).
pub const GRANT_KEY: &str = "grant.key";
/// The replicas' internal CA certificate (the link between replicas; never agents).
pub const CLUSTER_CA_PEM: &str = "cluster-ca.pem";
/// The replicas' internal CA key (private).
pub const CLUSTER_CA_KEY: &str = "cluster-ca.key";
/// The first admin API token, one line (0600).
pub const ADMIN_TOKEN: &str = "admin.token";
/// The SQLite database (0600).
pub const DATABASE: &str = "vigil.db";
const LOCK: &str = ".lock";
/// Held by the controller serving from this directory, with its process id inside.
pub const SERVE_LOCK: &str = "serve.lock";

/// The data directory of one controller.
#[derive(Debug, Clone)]
pub struct DataDir {
    root: PathBuf,
}

/// Held while the data directory is being initialised; released on drop.
#[derive(Debug)]
pub struct DataDirLock {
    _file: File,
}

/// Held for as long as a controller serves from the data directory: a second `serve` on
/// the same directory (and so the same SQLite database, keys and admin token) refuses to
/// start. The kernel releases it when the process ends, however it ends.
#[derive(Debug)]
pub struct ServingLock {
    _file: File,
}

impl DataDir {
    /// The data directory at `root` (nothing is touched yet).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        DataDir { root: root.into() }
    }

    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The path of `file` inside the directory.
    pub fn path(&self, file: &str) -> PathBuf {
        self.root.join(file)
    }

    /// Creates the directory (mode 0700) if it does not exist.
    pub fn ensure(&self) -> Result<()> {
        if self.root.is_dir() {
            return Ok(());
        }
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.root)
            .map_err(Error::file("creating", &self.root))
    }

    /// Creates the directory and takes its initialisation lock (blocking until free).
    pub fn lock(&self) -> Result<DataDirLock> {
        self.ensure()?;
        let path = self.path(LOCK);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&path)
            .map_err(Error::file("opening", &path))?;
        file.lock().map_err(Error::file("locking", &path))?;
        Ok(DataDirLock { _file: file })
    }

    /// Claims the directory for this serving controller, or refuses with the process id of
    /// the one that holds it. The state subcommands (`token`, `ca show`, …) do not claim
    /// it: they work beside a running controller.
    pub fn claim_serving(&self) -> Result<ServingLock> {
        self.ensure()?;
        let path = self.path(SERVE_LOCK);
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .mode(0o600)
            .open(&path)
            .map_err(Error::file("opening", &path))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                let holder = fs::read_to_string(&path).unwrap_or_default();
                let holder = holder.trim();
                let holder = if holder.is_empty() {
                    String::new()
                } else {
                    format!(" (process {holder})")
                };
                return Err(Error::Config(format!(
                    "another controller is serving from {}{holder}: two controllers on one \
                     data directory would share its SQLite database and keys; stop it, or give \
                     this one its own --data-dir",
                    self.root.display()
                )));
            }
            Err(fs::TryLockError::Error(e)) => return Err(Error::file("locking", &path)(e)),
        }
        file.set_len(0)
            .and_then(|()| file.write_all(std::process::id().to_string().as_bytes()))
            .map_err(Error::file("writing", &path))?;
        Ok(ServingLock { _file: file })
    }

    /// Reads `file` as UTF-8, or `None` when it does not exist.
    pub fn read_optional(&self, file: &str) -> Result<Option<String>> {
        let path = self.path(file);
        match fs::read_to_string(&path) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::file("reading", path)(e)),
        }
    }

    /// Writes a secret `file` atomically (temporary file, then rename) with mode 0600.
    pub fn write_private(&self, file: &str, contents: &[u8]) -> Result<()> {
        self.write_atomic(file, contents, 0o600)
    }

    /// Writes a public `file` atomically with mode 0644.
    pub fn write_public(&self, file: &str, contents: &[u8]) -> Result<()> {
        self.write_atomic(file, contents, 0o644)
    }

    fn write_atomic(&self, file: &str, contents: &[u8], mode: u32) -> Result<()> {
        self.ensure()?;
        let path = self.path(file);
        let tmp = self.path(&format!(".{file}.tmp"));
        let _ = fs::remove_file(&tmp);
        let mut out = OpenOptions::new()
            .create_new(true)
            .write(true)
            .mode(mode)
            .open(&tmp)
            .map_err(Error::file("creating", &tmp))?;
        out.write_all(contents)
            .and_then(|()| out.sync_all())
            .map_err(Error::file("writing", &tmp))?;
        fs::rename(&tmp, &path).map_err(Error::file("renaming", &path))
    }

    /// Creates `file` empty with mode 0600 if it does not exist, and makes sure an existing
    /// one is not readable by others (used for the database before SQLite opens it).
    pub fn touch_private(&self, file: &str) -> Result<PathBuf> {
        self.ensure()?;
        let path = self.path(file);
        OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&path)
            .map_err(Error::file("creating", &path))?;
        let meta = fs::metadata(&path).map_err(Error::file("reading", &path))?;
        if meta.permissions().mode() & 0o077 != 0 {
            fs::set_permissions(&path, fs::Permissions::from_mode(0o600))
                .map_err(Error::file("securing", &path))?;
        }
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_written_0600_and_replace_atomically() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path().join("data"));
        dir.write_private("secret", b"one").unwrap();
        dir.write_private("secret", b"two").unwrap();
        let path = dir.path("secret");
        assert_eq!(fs::read_to_string(&path).unwrap(), "two");
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(
            fs::metadata(dir.root()).unwrap().permissions().mode() & 0o777,
            0o700
        );
        assert_eq!(dir.read_optional("missing").unwrap(), None);
        let _lock = dir.lock().unwrap();
    }
}
