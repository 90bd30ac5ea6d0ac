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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_container_in_a_restart_loop_is_found_on_its_resource_and_resolves() {
    if !vigil_tests::docker::require() {
        return;
    }
    let looping = vigil_tests::docker::Container::run(
        "vigil-patrol-loop",
        "patrol-loop",
        &["--restart", "always", "--entrypoint", "/bin/false"],
    )
    .expect("docker run");
    let ctrl = Controller::start(ControllerOptions {
        extra_args: vec!["--patrol".into(), "--patrol-interval-s".into(), "1".into()],
        ..Default::default()
    })
    .await;
    let agent = Agent::join_connected(&ctrl, AgentOptions::default()).await;
    let subject = format!("container {} ", looping.name);
    let ours = |list: Vec<serde_json::Value>| -> Vec<serde_json::Value> {
        list.into_iter()
            .filter(|f| {
                f["summary"]
                    .as_str()
                    .is_some_and(|s| s.starts_with(&subject))
            })
            .collect()
    };
    let found = wait_until(Duration::from_secs(90), || async {
        let found = ours(findings(&ctrl.api, "open", "containers").await);
        found.len() == 1 && found[0]["count"].as_i64().unwrap_or(0) >= 2
    })
    .await;
    assert!(
        found,
        "no repeating finding\n{}\n{}",
        ctrl.log(),
        agent.log()
    );
    let finding = ours(findings(&ctrl.api, "open", "containers").await).remove(0);
    assert_eq!(finding["severity"], "critical", "{finding}");
    assert_eq!(finding["resource_name"], looping.name.as_str(), "{finding}");
    assert!(
        finding["resource_id"].as_str().is_some_and(
            |id| id.starts_with("docker_container:") && id.ends_with(looping.short_id())
        ),
        "the finding is on the container's resource: {finding}"
    );
    assert!(
        finding["evidence"].as_str().unwrap().contains("restarting"),
        "{finding}"
    );

    // Fixed: no more restarts, the container stays down, the finding resolves.
    vigil_tests::docker::docker_ok(&["update", "--restart=no", looping.id()]);
    let resolved = wait_until(Duration::from_secs(120), || async {
        ours(findings(&ctrl.api, "open", "containers").await).is_empty()
            && ours(findings(&ctrl.api, "resolved", "containers").await).len() == 1
    })
    .await;
    assert!(resolved, "never resolved\n{}", ctrl.log());
    drop(agent);
}

/// A self-signed certificate that expires `days` from now, and its key, as PEM.
fn certificate(days: i64) -> (String, String) {
    let mut params = rcgen::CertificateParams::new(vec!["site.lan".to_owned()]).unwrap();
    let now = time::OffsetDateTime::now_utc();
    params.not_before = now - time::Duration::days(30);
    params.not_after = now + time::Duration::days(days);
    let key = rcgen::KeyPair::generate().unwrap();
    (params.self_signed(&key).unwrap().pem(), key.serialize_pem())
}

/// `openssl s_server` on 127.0.0.1:`port` with the certificate in `dir`.
fn tls_server(dir: &std::path::Path, port: u16, days: i64) -> vigil_tests::Proc {
    let (cert, key) = certificate(days);
    std::fs::write(dir.join("server.pem"), cert).unwrap();
    std::fs::write(dir.join("server.key"), key).unwrap();
    vigil_tests::Proc::spawn(
        Command::new("openssl")
            .args(["s_server", "-quiet", "-www", "-accept"])
            .arg(format!("127.0.0.1:{port}"))
            .arg("-cert")
            .arg(dir.join("server.pem"))
            .arg("-key")
            .arg(dir.join("server.key")),
        dir.join(format!("s_server-{days}.log")),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn certificates_about_to_expire_in_a_file_and_on_a_port_are_found_and_resolve() {
    // Outside /tmp, which reads see as the agent's own.
    let dir = tempfile::Builder::new()
        .prefix("vigil-patrol-cert")
        .tempdir_in("/var/tmp")
        .unwrap();
    let file = dir.path().join("site.pem");
    std::fs::write(&file, certificate(3).0).unwrap();
    let port = vigil_tests::free_port();
    let mut server = tls_server(dir.path(), port, 10);
    // The agent reports the ports its host listens on when it starts.
    let listening = wait_until(Duration::from_secs(10), || async {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    })
    .await;
    assert!(
        listening,
        "openssl s_server did not start: {}",
        server.output()
    );
    let ctrl = Controller::start(ControllerOptions {
        extra_args: vec![
            "--patrol".into(),
            "--patrol-interval-s".into(),
            "1".into(),
            "--patrol-cert-files".into(),
            file.display().to_string(),
            "--patrol-tls-ports".into(),
            port.to_string(),
        ],
        ..Default::default()
    })
    .await;
    let agent = Agent::join_connected(&ctrl, AgentOptions::default()).await;
    let found = wait_until(Duration::from_secs(60), || async {
        let files = findings(&ctrl.api, "open", "certificates").await;
        let ports = findings(&ctrl.api, "open", "tls_ports").await;
        files.len() == 1 && files[0]["count"].as_i64().unwrap_or(0) >= 2 && ports.len() == 1
    })
    .await;
    assert!(found, "no findings\n{}", ctrl.log());
    let finding = findings(&ctrl.api, "open", "certificates").await.remove(0);
    assert_eq!(finding["severity"], "critical", "{finding}");
    let summary = finding["summary"].as_str().unwrap();
    assert_eq!(
        summary,
        format!("certificate {} expires in 2 days", file.display())
    );
    assert!(
        finding["evidence"].as_str().unwrap().contains("notAfter="),
        "{finding}"
    );
    let served = findings(&ctrl.api, "open", "tls_ports").await.remove(0);
    assert_eq!(served["severity"], "warning", "{served}");
    assert_eq!(
        served["summary"],
        format!("the certificate on port {port} expires in 9 days")
    );

    // Renewed: the file and the server's certificate.
    std::fs::write(&file, certificate(365).0).unwrap();
    server.stop();
    let _renewed = tls_server(dir.path(), port, 365);
    let resolved = wait_until(Duration::from_secs(60), || async {
        findings(&ctrl.api, "open", "certificates").await.is_empty()
            && findings(&ctrl.api, "open", "tls_ports").await.is_empty()
            && findings(&ctrl.api, "resolved", "certificates").await.len() == 1
            && findings(&ctrl.api, "resolved", "tls_ports").await.len() == 1
    })
    .await;
    assert!(resolved, "never resolved\n{}", ctrl.log());
    drop(agent);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_agent_offline_is_found_snoozed_and_resolves_when_it_is_back() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("controller.toml");
    // Minutes: a warning after 3 s offline, critical after an hour.
    std::fs::write(
        &config,
        "[patrol_checks.agent_offline]\nwarning = 0.05\ncritical = 60\n",
    )
    .unwrap();
    let ctrl = Controller::start(ControllerOptions {
        extra_args: vec![
            "--patrol".into(),
            "--patrol-interval-s".into(),
            "1".into(),
            "--config".into(),
            config.display().to_string(),
        ],
        ..Default::default()
    })
    .await;
    let mut agent = Agent::join_connected(&ctrl, AgentOptions::default()).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        findings(&ctrl.api, "open", "agent_offline")
            .await
            .is_empty(),
        "a connected agent is not offline"
    );
    agent.stop();
    let found = wait_until(Duration::from_secs(60), || async {
        findings(&ctrl.api, "open", "agent_offline").await.len() == 1
    })
    .await;
    assert!(found, "no finding\n{}", ctrl.log());
    let finding = findings(&ctrl.api, "open", "agent_offline").await.remove(0);
    assert_eq!(finding["severity"], "warning", "{finding}");
    assert_eq!(
        finding["resource_id"],
        format!("host:{}", agent.state.id).as_str()
    );

    // Snoozed: still open, no longer counted in the header.
    let id = finding["id"].as_str().unwrap().to_owned();
    let (code, out, err) = ctrl.cli(&[
        "findings",
        "snooze",
        &id,
        "--for",
        "2h",
        "--url",
        ctrl.api.base(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("snoozed until"), "{out}");
    let (_, summary) = ctrl.api.get("/api/findings/summary").await;
    assert_eq!(summary["open"], 0, "{summary}");
    let (code, body) = ctrl
        .api
        .post(
            &format!("/api/findings/{id}/snooze"),
            &serde_json::json!({"until": "2001-01-01T00:00:00Z"}),
        )
        .await;
    assert_eq!(code, 400, "a time in the past: {body}");

    agent.start(&AgentOptions::default());
    let resolved = wait_until(Duration::from_secs(60), || async {
        findings(&ctrl.api, "open", "agent_offline")
            .await
            .is_empty()
            && findings(&ctrl.api, "resolved", "agent_offline").await.len() == 1
    })
    .await;
    assert!(resolved, "never resolved\n{}", ctrl.log());
    let (code, body) = ctrl
        .api
        .post(&format!("/api/findings/{id}/ack"), &serde_json::json!({}))
        .await;
    assert_eq!(
        code, 409,
        "a resolved finding cannot be acknowledged: {body}"
    );
}
