//! Host reads through a real controller and agent: facts, no_new_privs and seccomp, a
//! hostile repository, scratch space, all spawned from a confined thread of the agent
//! while the agent's own threads stay as they were; and an approved write, which runs as
//! it is.

use super::{has_landlock, hostile_repo};
use serde_json::json;
use std::path::Path;
use std::time::Duration;
use vigil_tests::{Agent, AgentOptions, Controller, ControllerOptions, RawGrant, wait_until};

const CONNECT: Duration = Duration::from_secs(30);

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
    wait_for_sandbox_facts(&ctrl, &id).await;
    let (code, me) = ctrl.api.get(&format!("/api/agents/{id}")).await;
    assert_eq!(code, 200, "{me}");
    let sandbox = &me["facts"]["sandbox"];
    let listed = ctrl.api.agents().await;
    let listed = listed.iter().find(|a| a["id"] == id.as_str()).unwrap();
    assert_eq!(&listed["sandbox"], sandbox);
    assert_eq!(sandbox["allow_unsandboxed_reads"], false, "{sandbox}");
    // Reads are spawned from a confined thread of the agent, and the log says so.
    assert_eq!(sandbox["launcher"], "thread", "{sandbox}");
    assert!(agent.log().contains("launcher=thread"), "{}", agent.log());
    if !landlock {
        assert_eq!(sandbox["level"], "none", "{sandbox}");
        let refused = ctrl.api.exec_json(&id, "cat /proc/self/status").await;
        let (_, body) = refused.expect_err("a read without Landlock is refused");
        assert_eq!(body["error"]["code"], "SANDBOX_UNAVAILABLE", "{body}");
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

    // The agent confined threads of its own for that read, and only those: its base
    // thread (confined once, it only starts the read threads) and the read's thread
    // (gone). Every other thread of the agent is unconfined.
    let pid = agent.pid().unwrap();
    let mut bases = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let path = task.unwrap().path().join("status");
        let Ok(status) = std::fs::read_to_string(&path) else {
            continue; // a thread that ended meanwhile
        };
        let name = status.lines().next().unwrap_or_default();
        if name.ends_with("vigil-read-base") {
            bases += 1;
            assert!(status.contains("NoNewPrivs:\t1"), "{name}\n{status}");
            assert!(status.contains("Seccomp:\t2"), "{name}\n{status}");
            continue;
        }
        if name.ends_with("vigil-read-spaw") {
            continue; // a read's thread in its last moments (it is confined too)
        }
        assert!(status.contains("NoNewPrivs:\t0"), "{name}\n{status}");
        assert!(status.contains("Seccomp:\t0"), "{name}\n{status}");
    }
    assert_eq!(bases, 1, "one base thread for all reads");

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

/// Waits until the agent's sandbox facts are listed by `GET /api/agents`.
async fn wait_for_sandbox_facts(ctrl: &Controller, id: &str) {
    let facts_seen = wait_until(CONNECT, || async {
        ctrl.api
            .agents()
            .await
            .iter()
            .any(|a| a["id"] == id && a["sandbox"]["level"].is_string())
    })
    .await;
    assert!(facts_seen, "{:?}", ctrl.api.agents().await);
}
