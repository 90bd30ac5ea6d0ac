//! The built `vigil-agent` binary, run as a person would.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::process::{Command, Output};

fn agent(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vigil-agent"))
        .args(args)
        .env_remove("VIGIL_AGENT_STATE_DIR")
        .env_remove("VIGIL_AGENT_CONFIG")
        .env_remove("VIGIL_AGENT_TOKEN")
        .output()
        .expect("run vigil-agent")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn help_explains_every_subcommand() {
    let out = agent(&["--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    for sub in ["join", "run", "install", "uninstall", "status", "version"] {
        assert!(help.contains(sub), "{sub} missing from\n{help}");
    }
    assert!(help.contains("Exit codes"));
    for sub in ["join", "run", "install", "uninstall", "status"] {
        let out = agent(&[sub, "--help"]);
        assert!(out.status.success(), "{sub} --help");
        assert!(text(&out.stdout).contains("--state-dir"), "{sub} --help");
    }
}

#[test]
fn status_of_an_empty_state_dir_is_not_enrolled() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    let out = agent(&["status", "--state-dir", path]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("enrolled:     no"),
        "{}",
        text(&out.stdout)
    );

    let out = agent(&["status", "--state-dir", path, "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["enrolled"], false);
    assert_eq!(json["connected"], false);
}

#[test]
fn join_against_a_closed_port_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("https://127.0.0.1:{port}");
    let fingerprint = format!("sha256:{}", "ab".repeat(32));
    let out = agent(&[
        "join",
        "--url",
        &url,
        "--token",
        "vjt_0123456789abcdef0123456789abcdef",
        "--ca-fingerprint",
        &fingerprint,
        "--state-dir",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("could not connect to {url}")),
        "{err}"
    );
    assert!(err.to_lowercase().contains("refused"), "{err}");
    assert!(!dir.path().join("identity.json").exists());
}

#[test]
fn bad_flags_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().to_str().unwrap();
    let out = agent(&[
        "join",
        "--url",
        "http://x",
        "--token",
        "t",
        "--ca-fingerprint",
        "sha256:00",
        "--state-dir",
        state,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("invalid --url"),
        "{}",
        text(&out.stderr)
    );

    let out = agent(&["run", "--state-dir", state]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("not enrolled"),
        "{}",
        text(&out.stderr)
    );

    let config = dir.path().join("agent.toml");
    std::fs::write(&config, "colour = 1\n").unwrap();
    let out = agent(&[
        "run",
        "--state-dir",
        state,
        "--config",
        config.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("colour"),
        "{}",
        text(&out.stderr)
    );

    let out = agent(&[
        "install",
        "--state-dir",
        state,
        "--unit-dir",
        state,
        "--no-start",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("not enrolled"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn run_records_its_state_and_stops_cleanly_on_sigterm() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    use std::time::{Duration, Instant};

    let dir = tempfile::tempdir().unwrap();
    let state = dir.path();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let identity = serde_json::json!({
        "agent_id": "0b6f3a52-0000-4000-8000-000000000001",
        "url": format!("https://127.0.0.1:{port}"),
        "enrolled_at": "2025-01-01T00:00:00Z",
        "labels": {}
    });
    std::fs::write(state.join("identity.json"), identity.to_string()).unwrap();
    let grant = vigil_shared::grant::signing_key_from_bytes(&[5; 32]).verifying_key();
    std::fs::write(state.join("grant.pub"), hex::encode(grant.to_bytes())).unwrap();
    for file in ["agent.key", "agent.pem", "ca.pem"] {
        std::fs::write(state.join(file), "not a pem").unwrap();
    }

    let mut child = Command::new(env!("CARGO_BIN_EXE_vigil-agent"))
        .args(["run", "--read-only", "--state-dir", state.to_str().unwrap()])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let status_file = state.join("status.json");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !status_file.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = agent(&["status", "--json", "--state-dir", state.to_str().unwrap()]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["enrolled"], true);
    assert_eq!(json["running"], true, "{json}");
    assert_eq!(json["connected"], false);
    assert_eq!(json["read_only"], true);
    assert_eq!(json["pid"], child.id());
    assert!(
        json["last_error"].as_str().unwrap().contains("certificate"),
        "{json}"
    );

    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        assert!(Instant::now() < deadline, "run did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(code, Some(0));
    let last: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&status_file).unwrap()).unwrap();
    assert_eq!(last["last_error"], "the agent stopped");
}
