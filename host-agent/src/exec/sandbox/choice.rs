//! Which program launches the agent's host reads: `vigil-sandbox`, the small launcher
//! installed beside `vigil-agent`, or, when it is missing or unusable, the agent itself as
//! `vigil-agent sandbox-exec` (same code, but about 2 ms slower to start per read;
//! BENCHMARKS.md, "Read sandbox"). Both take the flags of [`super::args`].

use super::{Report, SUBCOMMAND};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The file name of the small launcher, next to the agent's own binary.
pub const SANDBOX_BINARY: &str = "vigil-sandbox";

/// The program the agent starts for a host read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launcher {
    /// `vigil-sandbox`: a binary that is only the launcher.
    Small(PathBuf),
    /// `vigil-agent sandbox-exec`: the agent binary itself, the fallback.
    Agent(PathBuf),
}

impl Launcher {
    /// `vigil-sandbox` in the directory of `agent`, if there is such a file.
    pub fn beside(agent: &Path) -> Option<Launcher> {
        let path = agent.parent()?.join(SANDBOX_BINARY);
        path.is_file().then_some(Launcher::Small(path))
    }

    /// The binary.
    pub fn path(&self) -> &Path {
        match self {
            Launcher::Small(path) | Launcher::Agent(path) => path,
        }
    }

    /// `vigil-sandbox` or `vigil-agent sandbox-exec`, for logs and facts.
    pub fn kind(&self) -> &'static str {
        match self {
            Launcher::Small(_) => SANDBOX_BINARY,
            Launcher::Agent(_) => "vigil-agent sandbox-exec",
        }
    }

    /// The launcher's command, ready for its flags.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(self.path());
        if let Launcher::Agent(_) = self {
            cmd.arg(SUBCOMMAND);
        }
        cmd
    }

    /// Run the launcher once with `--probe`: what the kernel enforces, or why it failed.
    pub fn probe(&self) -> Result<Report, String> {
        let out = self
            .command()
            .arg("--probe")
            .env_clear()
            .output()
            .map_err(|e| format!("could not start {}: {e}", self.path().display()))?;
        serde_json::from_slice::<Report>(&out.stdout).map_err(|e| {
            let err = String::from_utf8_lossy(&out.stderr);
            format!(
                "the sandbox probe of {} failed ({}): {e} {}",
                self.path().display(),
                out.status,
                err.trim()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_small_launcher_is_found_beside_the_agent_and_takes_no_subcommand() {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("vigil-agent");
        std::fs::write(&agent, b"").unwrap();
        assert_eq!(Launcher::beside(&agent), None);
        std::fs::write(dir.path().join(SANDBOX_BINARY), b"").unwrap();
        let small = Launcher::beside(&agent).unwrap();
        assert_eq!(small.path(), dir.path().join(SANDBOX_BINARY));
        assert_eq!(small.command().get_args().count(), 0);
        let fallback = Launcher::Agent(agent);
        let args: Vec<_> = fallback
            .command()
            .get_args()
            .map(ToOwned::to_owned)
            .collect();
        assert_eq!(args, [SUBCOMMAND]);
        assert_eq!(fallback.kind(), "vigil-agent sandbox-exec");
    }
}
