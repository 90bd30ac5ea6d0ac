//! The read sandbox, end to end: the confinement as a program (`vigil-agent
//! sandbox-exec`) run directly proves what the kernel refuses (create, truncate, remove,
//! rename, bind, signals), and a real controller and agent prove that host reads, spawned
//! from a confined thread of the agent, run inside it — a hostile repository's `git
//! status` cannot write, reads carry no_new_privs and seccomp, scratch space works and is
//! removed, the agent itself stays unconfined — while approved writes run as they are.

#![allow(clippy::expect_used, clippy::unwrap_used)] // helpers outside #[test] functions

mod host_root;
mod launcher;
mod through_agent;

use serde_json::Value;
use std::path::Path;
use std::process::Command;
use vigil_tests::bin;

/// What `vigil-agent sandbox-exec --probe` says this kernel enforces.
pub fn probe() -> Value {
    let out = Command::new(bin("vigil-agent"))
        .args(["sandbox-exec", "--probe"])
        .output()
        .expect("probe runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("probe prints JSON")
}

pub fn has_landlock() -> bool {
    let report = probe();
    eprintln!("sandbox probe: {report}");
    report["landlock_abi"].as_u64().unwrap_or(0) > 0
}

/// `sh -c script` through `vigil-agent sandbox-exec` with `scratch` writable; (exit
/// code, stdout, stderr).
pub fn confined(scratch: &Path, script: &str) -> (i32, String, String) {
    let out = Command::new(bin("vigil-agent"))
        .args(["sandbox-exec", "--scratch"])
        .arg(scratch)
        .args(["--", "/bin/sh", "-c", script])
        .env_clear()
        .env(
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        )
        .output()
        .expect("launcher runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A repository whose `core.fsmonitor` hook writes `marker` (git runs it on `status`).
pub fn hostile_repo(dir: &Path, marker: &Path) {
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .expect("git");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&["init", "-q", "."]);
    std::fs::write(dir.join("file"), "one\n").unwrap();
    git(&["add", "file"]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-qm",
        "one",
    ]);
    std::fs::write(dir.join("file"), "two\n").unwrap();
    let hook = dir.join("fsmonitor.sh");
    std::fs::write(
        &hook,
        format!("#!/bin/sh\necho pwned > {}\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    git(&["config", "core.fsmonitor", hook.to_str().unwrap()]);
}
