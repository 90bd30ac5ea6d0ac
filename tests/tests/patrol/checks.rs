//! Patrol against real state: a small tmpfs filled past the disk threshold gives one
//! finding on the agent's host that repeats without duplicating, and resolves when the
//! space is freed; every patrol command went through the read path (audited as
//! `patrol.read` by `vigil-patrol`).

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use vigil_tests::{Agent, AgentOptions, Controller, ControllerOptions, wait_until};

use super::findings;

/// A 1 MiB tmpfs under /mnt (outside /tmp, which reads see as the agent's own),
/// unmounted on drop.
struct SmallFs(PathBuf);

impl SmallFs {
    fn mount() -> Option<SmallFs> {
        let dir = PathBuf::from(format!("/mnt/vigil-patrol-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(&dir)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let _ = std::fs::remove_dir(&dir);
            return None;
        }
        Some(SmallFs(dir))
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_full_filesystem_is_found_repeats_and_resolves() {
    let Some(fs) = SmallFs::mount() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "cannot mount a tmpfs (the test needs root)"
        );
        eprintln!("skipped: mounting a tmpfs needs root");
        return;
    };
    let ctrl = Controller::start(ControllerOptions {
        extra_args: vec!["--patrol".into(), "--patrol-interval-s".into(), "1".into()],
        ..Default::default()
    })
    .await;
    let agent = Agent::join_connected(&ctrl, AgentOptions::default()).await;
    let host_id = format!("host:{}", agent.state.id);
    let mount = fs.0.display().to_string();
    let ours = |list: Vec<serde_json::Value>| -> Vec<serde_json::Value> {
        list.into_iter()
            .filter(|f| {
                f["summary"]
                    .as_str()
                    .is_some_and(|s| s.starts_with(&format!("{mount} ")))
            })
            .collect()
    };

    std::fs::write(fs.0.join("filler"), vec![7u8; 950 * 1024]).unwrap();
    let repeated = wait_until(Duration::from_secs(60), || async {
        let found = ours(findings(&ctrl.api, "open", "disk").await);
        found.len() == 1 && found[0]["count"].as_i64().unwrap_or(0) >= 3
    })
    .await;
    assert!(repeated, "no repeating finding\n{}", ctrl.log());
    let found = ours(findings(&ctrl.api, "open", "disk").await).remove(0);
    assert_eq!(found["resource_id"], host_id.as_str(), "{found}");
    assert!(
        found["severity"] == "critical" || found["severity"] == "warning",
        "{found}"
    );
    let evidence = found["evidence"].as_str().unwrap();
    assert!(evidence.starts_with("$ df -P -T\n"), "{evidence}");
    assert!(evidence.contains(&mount), "{evidence}");

    std::fs::remove_file(fs.0.join("filler")).unwrap();
    let resolved = wait_until(Duration::from_secs(60), || async {
        ours(findings(&ctrl.api, "open", "disk").await).is_empty()
            && ours(findings(&ctrl.api, "resolved", "disk").await).len() == 1
    })
    .await;
    assert!(resolved, "never resolved\n{}", ctrl.log());
    let resolved = ours(findings(&ctrl.api, "resolved", "disk").await).remove(0);
    assert_eq!(resolved["id"], found["id"], "the same finding resolved");

    // Every patrol read went through the exec service's audit trail.
    let (code, audit) = ctrl.api.get("/api/audit?limit=1000").await;
    assert_eq!(code, 200, "{audit}");
    let rows: Vec<serde_json::Value> = audit
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r["action"] == "patrol.read")
        .collect();
    assert!(!rows.is_empty(), "{audit}");
    assert!(rows.iter().all(|r| r["actor"] == "vigil-patrol"), "{audit}");
    assert!(rows.iter().any(|r| r["command"] == "df -P -T"), "{audit}");

    // The CLI lists what the API lists.
    let (code, out, err) =
        ctrl.cli(&["findings", "--status", "resolved", "--url", ctrl.api.base()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("disk") && out.contains(&mount), "{out}");
    drop(agent);
}
