//! The host runner: `bash -c CMD` (or `sh -c` where bash is missing) in a new process
//! group, with the environment cleared and set to a fixed list.

use super::sandbox::host_root::HostRoot;
use super::sandbox::{ReadSandbox, read_env};
use super::{ExecError, Process, Runner};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use vigil_shared::ids::ExecTarget;

/// The `PATH` every command gets.
pub const FIXED_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The whole environment of every command.
pub const FIXED_ENV: [(&str, &str); 6] = [
    ("PATH", FIXED_PATH),
    ("LANG", "C.UTF-8"),
    ("PAGER", "cat"),
    ("SYSTEMD_PAGER", ""),
    ("GIT_PAGER", "cat"),
    ("TERM", "dumb"),
];

/// `bash` from the fixed `PATH`, else `sh`, else `/bin/sh`.
pub fn find_shell() -> PathBuf {
    find_shell_in(None)
}

/// [`find_shell`] in the host's root (`--host-root`): the path as the host names it.
pub fn find_shell_in(root: Option<&HostRoot>) -> PathBuf {
    ["bash", "sh"]
        .iter()
        .flat_map(|name| {
            FIXED_PATH
                .split(':')
                .map(move |dir| Path::new(dir).join(name))
        })
        .find(|path| match root {
            Some(root) => root.resolve(path).is_some_and(|real| is_executable(&real)),
            None => is_executable(path),
        })
        .unwrap_or_else(|| PathBuf::from("/bin/sh"))
}

fn is_executable(path: &Path) -> bool {
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Runs commands on the agent's own host.
#[derive(Debug, Clone)]
pub struct HostRunner {
    shell: PathBuf,
}

impl HostRunner {
    /// A runner using the shell [`find_shell`] finds.
    pub fn new() -> Self {
        HostRunner {
            shell: find_shell(),
        }
    }

    /// A runner for reads in the host's root (`--host-root`), with the host's shell.
    pub fn in_root(root: Option<&HostRoot>) -> Self {
        HostRunner {
            shell: find_shell_in(root),
        }
    }

    /// The shell commands run under.
    pub fn shell(&self) -> &Path {
        &self.shell
    }
}

impl Default for HostRunner {
    fn default() -> Self {
        Self::new()
    }
}

impl Runner for HostRunner {
    fn command(&self, target: &ExecTarget, command: &str) -> Result<Command, ExecError> {
        if *target != ExecTarget::Host {
            return Err(ExecError::Unreachable(format!(
                "the host runner cannot reach {target}"
            )));
        }
        let mut cmd = Command::new(&self.shell);
        cmd.arg("-c")
            .arg(command)
            .env_clear()
            .envs(FIXED_ENV)
            .current_dir("/")
            .stdin(Stdio::null())
            .process_group(0);
        Ok(cmd)
    }
}

impl HostRunner {
    /// The process for `command` as a read: confined as `sandbox` says, with the fixed
    /// environment, the read pins of [`read_env`] and `scratch` as `TMPDIR`.
    pub fn read_command(&self, sandbox: &ReadSandbox, command: &str, scratch: &Path) -> Process {
        let mut cmd = Command::new(&self.shell);
        cmd.arg("-c")
            .arg(command)
            .env_clear()
            .envs(FIXED_ENV)
            .envs(read_env::vars(&scratch.to_string_lossy()))
            .current_dir("/")
            .stdin(Stdio::null())
            .process_group(0);
        if let Some(kubeconfig) = sandbox.kubeconfig() {
            cmd.env("KUBECONFIG", kubeconfig);
        }
        Process {
            command: cmd,
            confine: sandbox.confinement(scratch, vigil_shared::policy::reach(command)),
        }
    }
}
