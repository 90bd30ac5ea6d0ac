//! The read confinement, both ways the agent has it: on threads of the agent (a base
//! thread confined once, and a read thread per read from which the read is spawned:
//! [`thread::spawn`]), and as the hidden program `vigil-agent sandbox-exec` (diagnosis).
//! Both enforce the same thing; the agent's other threads are left as they were.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::support;

use std::process::{Command, Output};
use vigil_agent::exec::sandbox::thread;

const AGENT: &str = env!("CARGO_BIN_EXE_vigil-agent");

fn sandbox_exec(args: &[&str]) -> Output {
    Command::new(AGENT)
        .arg("sandbox-exec")
        .args(args)
        .env_clear()
        .output()
        .expect("run vigil-agent sandbox-exec")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The lines of `/proc/self/status` a confined process shows differently.
const STATUS: &str = "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status";

#[test]
fn the_program_and_the_agents_thread_probe_report_the_same_enforcement() {
    let out = sandbox_exec(&["--probe"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let program: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(program["landlock"].is_string(), "{program}");
    let mut in_agent = serde_json::to_value(thread::probe(None).unwrap().report).unwrap();
    // The program makes no mount namespace; a read thread's hides what it is given.
    assert_eq!(program["hidden"], false, "{program}");
    in_agent["hidden"] = program["hidden"].clone();
    assert_eq!(program, in_agent);
}

#[test]
fn the_program_runs_its_command_confined() {
    // --allow-unsandboxed so that this runs on a kernel without Landlock too;
    // no_new_privs and the seccomp filter do not depend on it.
    let out = sandbox_exec(&["--allow-unsandboxed", "--", "/bin/sh", "-c", STATUS]);
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
        let out = sandbox_exec(args);
        assert_eq!(out.status.code(), Some(126), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.starts_with("vigil-agent sandbox-exec: "), "{err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// `sh -c script` spawned the way the agent spawns a host read, with `scratch` writable.
async fn confined_sh(script: &str, scratch: &std::path::Path) -> (i32, String, String) {
    let out = support::read(script, vigil_shared::policy::Reach::Network, scratch, true).await;
    (out.code, out.stdout, out.stderr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_spawned_from_a_confined_thread_is_confined_and_the_agent_is_not() {
    let _turn = support::sandbox_turn().await;
    let base = tempfile::tempdir().unwrap();
    let scratch = base.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let outside = base.path().join("outside");
    let landlock =
        thread::probe(None).unwrap().report.landlock != vigil_agent::exec::sandbox::Enforced::None;

    let script = format!(
        "{STATUS}; echo x > {out} && echo wrote-outside; echo y > {s}/f && echo wrote-scratch",
        out = outside.display(),
        s = scratch.display()
    );
    let (code, stdout, stderr) = confined_sh(&script, &scratch).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("NoNewPrivs:\t1"), "{stdout}");
    assert!(stdout.contains("Seccomp:\t2"), "{stdout}");
    assert!(stdout.contains("wrote-scratch"), "{stdout}");
    if landlock {
        assert!(!stdout.contains("wrote-outside"), "{stdout}");
        assert!(!outside.exists());
    }

    // Everything else in this process keeps its rights: this thread, a runtime worker,
    // and a thread started afterwards.
    let on_worker = tokio::spawn(async { own_status() }).await.unwrap();
    let later = std::thread::spawn(own_status).join().unwrap();
    for status in [own_status(), on_worker, later] {
        assert!(status.contains("NoNewPrivs:\t0"), "{status}");
        assert!(status.contains("Seccomp:\t0"), "{status}");
    }
    std::fs::write(&outside, b"the agent may write").unwrap();

    // Each read gets a thread of its own, so Landlock domains do not pile up: a second
    // read with another scratch directory writes there, and not in the first one.
    let second = base.path().join("second");
    std::fs::create_dir(&second).unwrap();
    let script = format!(
        "{STATUS}; echo z > {two}/g && echo wrote-second; echo z > {one}/g && echo wrote-first",
        two = second.display(),
        one = scratch.display()
    );
    let (_, again, _) = confined_sh(&script, &second).await;
    assert!(again.contains("NoNewPrivs:\t1"), "{again}");
    assert!(again.contains("wrote-second"), "{again}");
    if landlock {
        assert!(!again.contains("wrote-first"), "{again}");
    }
}

fn own_status() -> String {
    std::fs::read_to_string("/proc/thread-self/status").unwrap()
}
