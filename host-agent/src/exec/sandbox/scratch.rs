//! A read's scratch directory: created empty (mode 0700) before the read starts, the one
//! place it may write (its `TMPDIR`), and removed with everything in it when it ends.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use tracing::warn;

/// The name prefix of scratch directories.
pub const PREFIX: &str = "vigil-read-";

/// One read's scratch directory; removed when dropped.
#[derive(Debug)]
pub struct Scratch {
    path: PathBuf,
}

impl Scratch {
    /// A new empty directory under `base` with an unguessable name.
    pub fn create(base: &Path) -> std::io::Result<Scratch> {
        let mut bytes = [0u8; 12];
        getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
        let path = base.join(format!("{PREFIX}{}", hex::encode(bytes)));
        std::fs::DirBuilder::new().mode(0o700).create(&path)?;
        Ok(Scratch { path })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // remove_dir_all does not follow symbolic links the read may have left.
        if let Err(error) = std::fs::remove_dir_all(&self.path)
            && error.kind() != std::io::ErrorKind::NotFound
        {
            warn!(%error, path = %self.path.display(), "could not remove a read's scratch directory");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_directory_is_private_and_goes_away_with_its_contents() {
        let base = tempfile::tempdir().unwrap();
        let path = {
            let scratch = Scratch::create(base.path()).unwrap();
            let path = scratch.path().to_owned();
            std::fs::create_dir(path.join("sub")).unwrap();
            std::fs::write(path.join("sub/file"), b"x").unwrap();
            std::os::unix::fs::symlink(base.path(), path.join("link")).unwrap();
            let mode = std::fs::metadata(&path).unwrap().permissions();
            assert_eq!(
                std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
                0o700
            );
            path
        };
        assert!(!path.exists());
        assert!(base.path().exists(), "the link's target stays");
    }
}
