//! What the read sandbox's tests share: running `sh -c SCRIPT` the way the agent spawns a
//! host read, and the check that the test may run here (root, or skipped outside CI).

#![allow(dead_code, clippy::expect_used, clippy::unwrap_used)]

use std::path::Path;
use std::process::Stdio;
use vigil_agent::exec::sandbox::HiddenPaths;
use vigil_agent::exec::sandbox::mountns::Plan;
use vigil_agent::exec::sandbox::thread::{self, Confinement};
use vigil_shared::policy::Reach;

/// What a read printed and how it ended.
pub struct ReadOut {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl ReadOut {
    /// Standard output and error, one after the other.
    pub fn text(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

/// `sh -c script` spawned as a host read: confined, `scratch` the one writable place, the
/// sockets of `reach`, refused without the sandbox unless `allow_unsandboxed`.
pub async fn read(script: &str, reach: Reach, scratch: &Path, allow_unsandboxed: bool) -> ReadOut {
    let mut cmd = tokio::process::Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(script)
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let how = Confinement {
        scratch: Some(scratch.to_owned()),
        allow_unsandboxed,
        reach,
    };
    let out = thread::spawn(cmd, how)
        .await
        .expect("the read starts")
        .wait_with_output()
        .await
        .unwrap();
    ReadOut {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// True when this process runs as root. Otherwise says the test is skipped, and fails
/// under CI (where `what` must run).
pub fn root_or_skip(what: &str) -> bool {
    missing_or_skip(what, if is_root() { vec![] } else { vec!["root"] })
}

/// True when nothing is `missing`. Otherwise says the test is skipped, and fails under CI.
pub fn missing_or_skip(what: &str, missing: Vec<&str>) -> bool {
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{what} cannot run under CI: missing {missing:?}"
    );
    eprintln!("skipped: {what} needs {missing:?}");
    false
}

/// True when this process runs as root.
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
}

/// The reads' plan (what their namespace hides, its doors) is one per agent process, and
/// these tests share one process. A test that reads through the sandbox holds this guard
/// for its whole run, so no other test's plan is in force during its reads; the plan it
/// set is cleared when the guard goes.
pub struct SandboxTurn(#[allow(dead_code)] tokio::sync::MutexGuard<'static, ()>);

/// Wait for this test's turn at the read sandbox.
pub async fn sandbox_turn() -> SandboxTurn {
    static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    SandboxTurn(TURN.lock().await)
}

impl Drop for SandboxTurn {
    fn drop(&mut self) {
        thread::set_plan(Plan::hiding(HiddenPaths::none()));
    }
}
