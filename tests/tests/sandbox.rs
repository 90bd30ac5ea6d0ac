//! The read sandbox, end to end: the launcher (`vigil-agent sandbox-exec`) run directly
//! proves what the kernel refuses (create, truncate, remove, rename, bind, signals), and a
//! real controller and agent prove that host reads run inside it — a hostile repository's
//! `git status` cannot write, reads carry no_new_privs and seccomp, scratch space works
//! and is removed — while approved writes run as they are.

#![allow(clippy::expect_used, clippy::unwrap_used)] // helpers outside #[test] functions

use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use vigil_tests::{Agent, AgentOptions, Controller, ControllerOptions, RawGrant, bin, wait_until};

const CONNECT: Duration = Duration::from_secs(30);

/// What `sandbox-exec --probe` says this kernel enforces.
fn probe() -> Value {
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

fn has_landlock() -> bool {
    let report = probe();
    eprintln!("sandbox probe: {report}");
    report["landlock_abi"].as_u64().unwrap_or(0) > 0
}

/// `sh -c script` through the launcher with `scratch` writable; (exit code, stdout, stderr).
fn confined(scratch: &Path, script: &str) -> (i32, String, String) {
    let out = Command::new(bin("vigil-agent"))
        .arg("sandbox-exec")
        .arg("--scratch")
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
fn hostile_repo(dir: &Path, marker: &Path) {
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

async fn setup(tmp: &Path) -> (Controller, Agent) {
    let ctrl = Controller::start(ControllerOptions {
        raw_exec: true,
        ..Default::default()
    })
    .await;
    let agent = Agent::join(
        &ctrl,
        AgentOptions {
            env: vec![("TMPDIR".into(), tmp.display().to_string())],
            ..AgentOptions::default()
        },
    )
    .await;
    let id = agent.state.id.clone();
    let ok = wait_until(CONNECT, || ctrl.api.connected(&id)).await;
    assert!(ok, "agent never connected\n{}\n{}", ctrl.log(), agent.log());
    (ctrl, agent)
}

#[tokio::test(flavor = "multi_thread")]
async fn host_reads_through_the_agent_run_in_the_sandbox_and_writes_do_not() {
    let landlock = has_landlock();
    let tmp = tempfile::tempdir().unwrap();
    let (ctrl, agent) = setup(tmp.path()).await;
    let id = agent.state.id.clone();

    // The facts say what the kernel gave: in the list and in the agent's own facts.
    let facts_seen = wait_until(CONNECT, || async {
        ctrl.api
            .agents()
            .await
            .iter()
            .any(|a| a["id"] == id.as_str() && a["sandbox"]["level"].is_string())
    })
    .await;
    assert!(facts_seen, "{:?}", ctrl.api.agents().await);
    let (code, me) = ctrl.api.get(&format!("/api/agents/{id}")).await;
    assert_eq!(code, 200, "{me}");
    let sandbox = &me["facts"]["sandbox"];
    let listed = ctrl.api.agents().await;
    let listed = listed.iter().find(|a| a["id"] == id.as_str()).unwrap();
    assert_eq!(&listed["sandbox"], sandbox);
    assert_eq!(sandbox["allow_unsandboxed_reads"], false, "{sandbox}");
    if !landlock {
        assert_eq!(sandbox["level"], "none", "{sandbox}");
        let refused = ctrl.api.exec_json(&id, "cat /proc/self/status").await;
        let (_, body) = refused.expect_err("a read without Landlock is refused");
        assert!(body.to_string().contains("SANDBOX_UNAVAILABLE"), "{body}");
        return;
    }
    assert!(sandbox["landlock_abi"].as_u64().unwrap() >= 1, "{sandbox}");
    assert_eq!(sandbox["seccomp"], true, "{sandbox}");
    assert_eq!(sandbox["no_new_privs"], true, "{sandbox}");
    assert!(agent.log().contains("read sandbox"), "{}", agent.log());

    // A read carries no_new_privs and a seccomp filter.
    let out = ctrl
        .api
        .exec_json(&id, "cat /proc/self/status")
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(0), "{}", out.stderr);
    assert!(out.stdout.contains("NoNewPrivs:\t1"), "{}", out.stdout);
    assert!(out.stdout.contains("Seccomp:\t2"), "{}", out.stdout);

    // A hostile repository's git status: the answer comes, the hook writes nothing.
    let repo = tempfile::tempdir().unwrap();
    let marker = repo.path().join("PWNED");
    hostile_repo(repo.path(), &marker);
    let cmd = format!("git -C {} status --short", repo.path().display());
    let out = ctrl.api.exec_json(&id, &cmd).await.unwrap();
    assert_eq!(out.exit_code, Some(0), "{}", out.stderr);
    assert!(out.stdout.contains(" M file"), "{}", out.stdout);
    assert!(
        !marker.exists(),
        "the hostile repository wrote during a read"
    );

    // A read that needs scratch space gets it, and it is gone afterwards.
    let big = tmp.path().join("big.txt");
    let lines: String = (0..400_000u32).rev().map(|n| format!("{n:08}\n")).collect();
    std::fs::write(&big, lines).unwrap();
    let cmd = format!("sort -S 1M {} | head -n 2", big.display());
    let out = ctrl.api.exec_json(&id, &cmd).await.unwrap();
    assert_eq!(out.exit_code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "00000000\n00000001\n", "{}", out.stderr);
    let out = ctrl.api.exec_json(&id, "printenv TMPDIR").await.unwrap();
    let scratch = out.stdout.trim().to_owned();
    assert!(
        scratch.starts_with(&tmp.path().display().to_string()),
        "{scratch}"
    );
    let gone = wait_until(Duration::from_secs(5), || async {
        !Path::new(&scratch).exists()
            && std::fs::read_dir(tmp.path()).unwrap().all(|e| {
                !e.unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("vigil-read-")
            })
    })
    .await;
    assert!(gone, "a scratch directory outlived its read");

    // An approved write runs as it is: no sandbox.
    let write = format!(
        "grep NoNewPrivs /proc/self/status; touch {}",
        marker.display()
    );
    let grant = RawGrant::new(&ctrl.grant_key(), &id, &write);
    let out = ctrl
        .api
        .raw_exec_json(&id, "write", &write, Some(&grant), json!({}))
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(0), "{}", out.stderr);
    assert!(out.stdout.contains("NoNewPrivs:\t0"), "{}", out.stdout);
    assert!(marker.exists());
}
