//! `vigil-agent run --host-root DIR`, as in a DaemonSet that mounts the node's `/` at
//! `/host`: a test-made root (the machine's `/usr`, `/dev` and `/proc` bound into a
//! directory with an `/etc` and a `/root` of its own, in a private mount namespace that
//! the agent starts in) is where host reads run, and what the agent describes. They see
//! its files by its own paths, its credential stores stay masked, the agent's files
//! outside it are out of reach, and an approved write is refused rather than run in the
//! agent's container.

use super::has_landlock;
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use vigil_tests::{Agent, AgentOptions, Controller, ControllerOptions, RawGrant};

const MARKER: &str = "vigil host root marker 5b1e";
const SECRET: &str = "vigil-host-root-secret-key-material";
const OS_NAME: &str = "Vigil Test Root 1";

/// Makes the root's own files and a wrapper that binds the machine's programs into it in
/// a private mount namespace and then runs the agent with `--host-root`.
fn host_root(dir: &Path) -> std::path::PathBuf {
    let root = dir.join("root");
    for sub in ["usr", "dev", "proc", "tmp", "etc", "root/.ssh", "var/lib"] {
        std::fs::create_dir_all(root.join(sub)).unwrap();
    }
    for (link, to) in [
        ("bin", "usr/bin"),
        ("sbin", "usr/sbin"),
        ("lib", "usr/lib"),
        ("lib64", "usr/lib64"),
    ] {
        if Path::new("/").join(to).exists() {
            std::os::unix::fs::symlink(to, root.join(link)).unwrap();
        }
    }
    std::fs::set_permissions(root.join("tmp"), std::fs::Permissions::from_mode(0o1777)).unwrap();
    for file in ["ld.so.cache", "passwd", "group"] {
        let _ = std::fs::copy(Path::new("/etc").join(file), root.join("etc").join(file));
    }
    std::fs::write(root.join("etc/vigil-marker"), MARKER).unwrap();
    std::fs::write(
        root.join("etc/os-release"),
        format!("PRETTY_NAME=\"{OS_NAME}\"\n"),
    )
    .unwrap();
    std::fs::write(root.join("root/.ssh/id_ed25519"), SECRET).unwrap();
    let wrapper = dir.join("agent-in-container");
    let script = format!(
        "#!/bin/sh\n\
         # The agent as in a container that mounts the host's root at {root}.\n\
         exec unshare --mount --propagation private -- sh -c '\n\
           set -e\n\
           for d in usr dev proc; do mount --rbind /$d {root}/$d; done\n\
           exec \"$0\" \"$@\" --host-root {root}\n\
         ' {agent} \"$@\"\n",
        root = root.display(),
        agent = vigil_tests::bin("vigil-agent").display(),
    );
    std::fs::write(&wrapper, script).unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    wrapper
}

fn is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

#[tokio::test(flavor = "multi_thread")]
async fn host_reads_run_in_the_host_root_with_its_secrets_masked() {
    if !is_root() || !has_landlock() {
        assert!(
            std::env::var_os("CI").is_none() || !is_root(),
            "CI runs as root with Landlock: the host-root test must run"
        );
        eprintln!("note: skipping the host-root test (needs root and Landlock)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let wrapper = host_root(dir.path());
    let ctrl = Controller::start(ControllerOptions {
        raw_exec: true,
        ..Default::default()
    })
    .await;
    let agent = Agent::join_connected(
        &ctrl,
        AgentOptions {
            binary: Some(wrapper),
            ..AgentOptions::default()
        },
    )
    .await;
    let id = agent.state.id.clone();

    // The agent describes the host by the root's files, not its own.
    let described = vigil_tests::wait_until(std::time::Duration::from_secs(30), || async {
        let (_, me) = ctrl.api.get(&format!("/api/agents/{id}")).await;
        me["facts"]["os_release"] == OS_NAME
    })
    .await;
    let (_, me) = ctrl.api.get(&format!("/api/agents/{id}")).await;
    assert!(described, "the facts name another OS: {me}");
    assert!(
        agent.log().contains("host reads run in the host's root"),
        "{}",
        agent.log()
    );

    // The root's own files, by the root's own paths.
    let out = ctrl
        .api
        .exec_json(&id, "cat /etc/vigil-marker")
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(0), "{}\n{}", out.stderr, agent.log());
    assert_eq!(out.stdout, MARKER);
    // Its credential stores are masked like a host's.
    let out = ctrl
        .api
        .exec_json(&id, "cat /root/.ssh/id_ed25519")
        .await
        .unwrap();
    assert_ne!(out.exit_code, Some(0), "{}", out.stdout);
    assert!(!out.stdout.contains(SECRET), "{}", out.stdout);
    // What lies outside the root (the agent's own program) is not there at all.
    let program = vigil_tests::bin("vigil-agent").display().to_string();
    let out = ctrl
        .api
        .exec_json(&id, &format!("ls {program}"))
        .await
        .unwrap();
    assert_ne!(
        out.exit_code,
        Some(0),
        "the agent's program is visible: {}",
        out.stdout
    );
    // Nor through /proc: another process's root (the machine's init, the agent itself,
    // whose root is the tree outside) is behind the ptrace check Landlock enforces, and so
    // is entering their mount namespace.
    let agent_pid = agent.pid().unwrap();
    for hostile in [
        format!("cat /proc/1/root{}", program),
        format!("ls /proc/{agent_pid}/root/"),
        "nsenter -t 1 -m ls /".to_owned(),
    ] {
        let out = ctrl.api.exec_json(&id, &hostile).await.unwrap();
        assert_ne!(out.exit_code, Some(0), "{hostile}: {}", out.stdout);
        assert!(out.stdout.is_empty(), "{hostile}: {}", out.stdout);
    }
    // Scratch space still works (the agent's temporary directory, bound into the root).
    let out = ctrl
        .api
        .exec_json(&id, "sort -S 1M /etc/vigil-marker")
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(0), "{}", out.stderr);

    // An approved write is refused: it would run in the agent's container, not on the host.
    let write = "touch /tmp/vigil-host-root-write";
    let grant = RawGrant::new(&ctrl.grant_key(), &id, write);
    let refused = ctrl
        .api
        .raw_exec_json(&id, "write", write, Some(&grant), json!({}))
        .await;
    let (_, body) = refused.expect_err("an approved write on the host is refused");
    assert_eq!(body["error"]["code"], "ACTION_NOT_ALLOWED", "{body}");
}
