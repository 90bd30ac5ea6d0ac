//! The built `vigil-sandbox` binary, the launcher of host reads, beside its fallback
//! `vigil-agent sandbox-exec`: the same flags, the same report, the same confinement.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::process::{Command, Output};

const SMALL: &str = env!("CARGO_BIN_EXE_vigil-sandbox");
const AGENT: &str = env!("CARGO_BIN_EXE_vigil-agent");

fn small(args: &[&str]) -> Output {
    Command::new(SMALL)
        .args(args)
        .env_clear()
        .output()
        .expect("run vigil-sandbox")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn both_launchers_report_the_same_enforcement() {
    let new = small(&["--probe"]);
    assert!(new.status.success(), "{}", text(&new.stderr));
    let report: serde_json::Value = serde_json::from_slice(&new.stdout).unwrap();
    assert!(report["landlock"].is_string(), "{report}");
    let old = Command::new(AGENT)
        .args(["sandbox-exec", "--probe"])
        .env_clear()
        .output()
        .unwrap();
    assert!(old.status.success(), "{}", text(&old.stderr));
    assert_eq!(new.stdout, old.stdout);
}

#[test]
fn the_command_runs_confined() {
    // --allow-unsandboxed so that this runs on a kernel without Landlock too;
    // no_new_privs and the seccomp filter do not depend on it.
    let out = small(&[
        "--allow-unsandboxed",
        "--",
        "/bin/sh",
        "-c",
        "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let status = text(&out.stdout);
    assert!(status.contains("NoNewPrivs:\t1"), "{status}");
    assert!(status.contains("Seccomp:\t2"), "{status}");
}

#[test]
fn bad_flags_and_missing_commands_fail_before_anything_runs() {
    for (args, says) in [
        (&["--bogus"][..], "unexpected argument"),
        (&["--scratch"][..], "--scratch needs a directory"),
        (&["--allow-unsandboxed"][..], "no command given"),
        (
            &["--allow-unsandboxed", "--", "/nonexistent/x"][..],
            "could not run",
        ),
    ] {
        let out = small(args);
        assert_eq!(out.status.code(), Some(126), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.starts_with("vigil-sandbox: "), "{err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
