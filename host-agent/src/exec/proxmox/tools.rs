//! The Proxmox VE command-line tools (`pvesh`, `pct`, `qm`) as found on the agent's `PATH`,
//! and running one of them to completion with bounded time and output.
//!
//! Every tool process gets the same treatment as a command on the host: argv built as a
//! list, the environment cleared and set to [`FIXED_ENV`], stdin `/dev/null`, its own
//! process group, and [`supervise`] for the timeout, the output cap and the kill.

use crate::exec::{ExecError, FIXED_ENV, Limits, supervise};
use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use vigil_proto::agent::v1::exec_event::Kind;

/// How long one discovery or pre-check call to a tool may take.
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(10);
/// How much output one discovery or pre-check call may print.
pub const TOOL_OUTPUT_CAP: u64 = 8 * 1024 * 1024;

/// Absolute paths of the three tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxmoxTools {
    pub pvesh: PathBuf,
    pub pct: PathBuf,
    pub qm: PathBuf,
}

impl ProxmoxTools {
    /// The tools at these paths (tests point them at fixtures).
    pub fn new(pvesh: PathBuf, pct: PathBuf, qm: PathBuf) -> Self {
        ProxmoxTools { pvesh, pct, qm }
    }

    /// Find `pvesh`, `pct` and `qm` in the directories of a `PATH` value (relative entries
    /// are ignored). `Err` names the first one missing.
    pub fn find_in(path_var: &OsStr) -> Result<ProxmoxTools, MissingTool> {
        let find = |name: &'static str| {
            std::env::split_paths(path_var)
                .filter(|dir| dir.is_absolute())
                .map(|dir| dir.join(name))
                .find(|path| is_executable(path))
                .ok_or(MissingTool(name))
        };
        Ok(ProxmoxTools {
            pvesh: find("pvesh")?,
            pct: find("pct")?,
            qm: find("qm")?,
        })
    }

    /// The process for `program args…`, ready for [`supervise`].
    pub fn command(program: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env_clear()
            .envs(FIXED_ENV)
            .current_dir("/")
            .stdin(Stdio::null())
            .process_group(0);
        cmd
    }

    /// Run `program args…` to its end within [`TOOL_TIMEOUT`] and [`TOOL_OUTPUT_CAP`].
    pub async fn call(
        program: &Path,
        args: &[&str],
        cancel: CancellationToken,
    ) -> Result<Captured, ExecError> {
        let limits = Limits {
            timeout: TOOL_TIMEOUT,
            output_cap: TOOL_OUTPUT_CAP,
        };
        capture(Self::command(program, args), limits, cancel).await
    }
}

/// A tool that is not on the `PATH`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MissingTool(pub &'static str);

fn is_executable(path: &Path) -> bool {
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Everything one tool process printed, and how it ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Output passed the cap (the process was killed there).
    pub truncated: bool,
    pub timed_out: bool,
    pub cancelled: bool,
}

impl Captured {
    /// Its stdout when it exited 0 with all its output, else why not (`what` names the
    /// call, as `pct config 141`).
    pub fn success(self, what: &str) -> Result<Vec<u8>, ExecError> {
        if self.timed_out {
            return Err(ExecError::Failed(format!(
                "`{what}` did not finish within {TOOL_TIMEOUT:?}"
            )));
        }
        if self.cancelled {
            return Err(ExecError::Failed(format!("`{what}` was cancelled")));
        }
        if self.truncated {
            return Err(ExecError::Failed(format!(
                "`{what}` printed more than {TOOL_OUTPUT_CAP} bytes"
            )));
        }
        match (self.exit_code, self.signal) {
            (Some(0), _) => Ok(self.stdout),
            (Some(code), _) => Err(ExecError::Failed(format!(
                "`{what}` exited with {code}: {}",
                self.message()
            ))),
            (None, Some(signal)) => Err(ExecError::Failed(format!(
                "`{what}` was killed by signal {signal}"
            ))),
            (None, None) => Err(ExecError::Failed(format!(
                "`{what}` ended without an exit status"
            ))),
        }
    }

    /// What the tool said about a failure: its stderr, else its stdout, trimmed and short.
    pub fn message(&self) -> String {
        let text = if self.stderr.iter().all(u8::is_ascii_whitespace) {
            &self.stdout
        } else {
            &self.stderr
        };
        let text = String::from_utf8_lossy(text);
        let text = text.trim();
        match text.char_indices().nth(500) {
            Some((cut, _)) => format!("{}…", &text[..cut]),
            None if text.is_empty() => "(no message)".to_owned(),
            None => text.to_owned(),
        }
    }
}

/// Run `command` under [`supervise`] and collect what it prints instead of streaming it.
pub async fn capture(
    command: Command,
    limits: Limits,
    cancel: CancellationToken,
) -> Result<Captured, ExecError> {
    let (tx, mut rx) = mpsc::channel(8);
    let run = async move { supervise("proxmox-tool", command, limits, cancel, &tx).await };
    let collect = async {
        let mut got = Captured::default();
        let mut rejected = None;
        while let Some(event) = rx.recv().await {
            match event.kind {
                Some(Kind::StdoutChunk(bytes)) => got.stdout.extend_from_slice(&bytes),
                Some(Kind::StderrChunk(bytes)) => got.stderr.extend_from_slice(&bytes),
                Some(Kind::Rejected(r)) => rejected = Some(r.reason),
                _ => {}
            }
        }
        (got, rejected)
    };
    let (outcome, (mut got, rejected)) = tokio::join!(run, collect);
    let Some(outcome) = outcome else {
        return Err(ExecError::NotStarted(
            rejected.unwrap_or_else(|| "the process did not start".to_owned()),
        ));
    };
    got.exit_code = outcome.exit_code;
    got.signal = outcome.signal;
    got.truncated = outcome.truncated;
    got.timed_out = outcome.timed_out;
    got.cancelled = outcome.cancelled;
    Ok(got)
}
