//! The confinement run directly (`vigil-agent sandbox-exec`, the same code the agent
//! applies to a read's thread): what the kernel refuses a read, and what it still allows.

use super::{confined, has_landlock, hostile_repo, probe};
use std::process::Command;

#[test]
fn the_launcher_refuses_create_truncate_remove_rename_and_bind() {
    if !has_landlock() {
        // Without Landlock the launcher must refuse to run a read at all.
        let dir = tempfile::tempdir().unwrap();
        let (code, _, err) = confined(dir.path(), "true");
        assert_eq!(code, 126, "{err}");
        assert!(err.contains("--allow-unsandboxed-reads"), "{err}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "keep\n").unwrap();
    let d = dir.path().display();
    let cases = [
        ("create", format!("touch {d}/new")),
        ("create by redirect", format!("echo x > {d}/new")),
        ("truncate", format!(": > {d}/file")),
        ("append", format!("echo more >> {d}/file")),
        ("remove", format!("rm -f {d}/file")),
        ("rename", format!("mv {d}/file {d}/moved")),
        ("mkdir", format!("mkdir {d}/sub")),
        ("symlink", format!("ln -s /etc/passwd {d}/link")),
        ("fifo", format!("mkfifo {d}/fifo")),
        ("chmod", format!("chmod 777 {d}/file")),
        ("touch times", format!("touch -c {d}/file")),
        (
            "bind",
            "perl -e 'use Socket; socket(S,PF_INET,SOCK_STREAM,0) or die; \
             bind(S, pack_sockaddr_in(0, inet_aton(\"127.0.0.1\"))) or die \"bind: $!\"'"
                .to_owned(),
        ),
    ];
    for (what, script) in &cases {
        let (code, out, err) = confined(scratch.path(), script);
        assert_ne!(
            code, 0,
            "{what} succeeded in the sandbox: {script}\n{out}{err}"
        );
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep\n");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "the sandbox left files behind: {left:?}");

    // The scratch directory and /dev/null stay writable; reading stays possible.
    let s = scratch.path().display();
    let (code, out, err) = confined(
        scratch.path(),
        &format!(
            "echo hi > {s}/a && mkdir {s}/d && mv {s}/a {s}/d/b && cat {s}/d/b && echo x > /dev/null && cat {d}/file"
        ),
    );
    assert_eq!((code, out.as_str()), (0, "hi\nkeep\n"), "{err}");
}

#[test]
fn the_launcher_cannot_signal_processes_outside_the_sandbox() {
    if probe()["landlock_abi"].as_u64().unwrap_or(0) < 6 {
        eprintln!("skipped: signal scoping needs Landlock ABI 6");
        return;
    }
    let mut outside = Command::new("sleep").arg("30").spawn().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let (code, _, err) = confined(scratch.path(), &format!("kill -TERM {}", outside.id()));
    assert_ne!(code, 0, "{err}");
    assert!(outside.try_wait().unwrap().is_none(), "the signal got out");
    outside.kill().unwrap();
    outside.wait().unwrap();
}

#[test]
fn a_hostile_repository_runs_its_hook_outside_but_cannot_write_inside_the_launcher() {
    if !has_landlock() {
        eprintln!("skipped: no Landlock (covered by the refusal test)");
        return;
    }
    let repo = tempfile::tempdir().unwrap();
    let marker = repo.path().join("PWNED");
    hostile_repo(repo.path(), &marker);
    let scratch = tempfile::tempdir().unwrap();
    // No environment pins here: the kernel alone stops the hook.
    let (code, out, err) = confined(
        scratch.path(),
        &format!("git -C {} status --short", repo.path().display()),
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(" M file"), "{out}");
    assert!(
        !marker.exists(),
        "the fsmonitor hook wrote from inside the sandbox"
    );
    // Outside the sandbox the very same command does run the hook: the test is real.
    let status = Command::new("git")
        .arg("-C")
        .arg(repo.path())
        .args(["status", "--short"])
        .output()
        .unwrap();
    assert!(status.status.success());
    assert!(
        marker.exists(),
        "the hook never ran, so the test proves nothing"
    );
}

#[test]
fn seccomp_refuses_what_landlock_does_not_cover_even_in_scratch() {
    // Landlock allows everything in the scratch directory and does not handle mode,
    // owner or times at all, nor namespaces: the seccomp filter does. With Landlock or
    // without (--allow-unsandboxed is not needed: these run under a full sandbox when
    // Landlock is there, and the test is skipped otherwise).
    if !has_landlock() {
        eprintln!("skipped: no Landlock");
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let s = scratch.path().display();
    let (code, out, err) = confined(
        scratch.path(),
        &format!(
            "echo x > {s}/f; chmod 600 {s}/f && echo chmod-ok; touch -d @0 {s}/f && echo times-ok; \
             unshare -U true && echo unshare-ok; cat {s}/f"
        ),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "x\n", "{err}");
    for refused in ["chmod", "touch", "unshare"] {
        assert!(err.contains(refused), "{refused}: {err}");
    }
    assert!(err.contains("Operation not permitted"), "{err}");
}
