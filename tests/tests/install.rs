//! The install script for real: a controller serving its API over TLS (`--http-tls`), the
//! install line it prints (curl with the key pin, piped to `sh`) into a throw-away prefix,
//! then the installed agent connecting and confining its reads. And a download whose bytes
//! do not match the announced SHA-256, which the script must refuse without installing
//! anything.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use vigil_tests::{bin, free_port, wait_until};

/// A child process killed on drop.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn sh(script: &str) -> (i32, String, String) {
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::null())
        .output()
        .expect("sh");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Starts `serve --http-tls` and returns it with an HTTPS client that trusts its CA.
async fn tls_controller(dir: &Path) -> (Guard, String, reqwest::Client, String) {
    let (http, grpc) = (free_port(), free_port());
    let agent_dir = bin("vigil-agent").parent().unwrap().to_path_buf();
    let log = std::fs::File::create(dir.join("controller.log")).unwrap();
    let child = Command::new(bin("vigil-controller"))
        .arg("serve")
        .arg("--data-dir")
        .arg(dir.join("data"))
        .args(["--http-listen", &format!("127.0.0.1:{http}")])
        .args(["--grpc-listen", &format!("127.0.0.1:{grpc}")])
        .arg("--http-tls")
        .arg("--agent-dir")
        .arg(&agent_dir)
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .expect("spawn the controller");
    let guard = Guard(child);
    let base = format!("https://127.0.0.1:{http}");
    let data = dir.join("data");
    let ready = wait_until(Duration::from_secs(30), || {
        let (data, base) = (data.clone(), base.clone());
        async move {
            let (Ok(ca), true) = (
                std::fs::read(data.join("ca.pem")),
                data.join("admin.token").exists(),
            ) else {
                return false;
            };
            let client = reqwest::Client::builder()
                .add_root_certificate(reqwest::Certificate::from_pem(&ca).unwrap())
                .build()
                .unwrap();
            client
                .get(format!("{base}/healthz"))
                .send()
                .await
                .is_ok_and(|r| r.status().is_success())
        }
    })
    .await;
    let log = || std::fs::read_to_string(dir.join("controller.log")).unwrap_or_default();
    assert!(ready, "controller not ready:\n{}", log());
    let ca = std::fs::read(data.join("ca.pem")).unwrap();
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&ca).unwrap())
        .build()
        .unwrap();
    let token = std::fs::read_to_string(data.join("admin.token")).unwrap();
    (guard, base, client, token.trim().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pinned_install_line_installs_an_agent_that_connects() {
    let tmp = tempfile::tempdir().unwrap();
    let (_ctrl, base, client, admin) = tls_controller(tmp.path()).await;
    let created: serde_json::Value = client
        .post(format!("{base}/api/join-tokens"))
        .bearer_auth(&admin)
        .json(&serde_json::json!({"uses": 1, "ttl": "10m", "labels": {"site": "test"}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let line = created["install"]
        .as_str()
        .expect("install line")
        .to_owned();
    assert!(line.contains("--pinnedpubkey sha256//"), "{line}");
    assert!(line.starts_with("curl -fsSL --insecure --pinnedpubkey sha256//"));
    assert!(created["token"].as_str().unwrap().starts_with("vjt_"));

    // A wrong pin: curl refuses the server, nothing is installed.
    let wrong = tmp.path().join("wrong");
    let bad_line = line.replace("sha256//", "sha256//AAAA");
    let (_, _, err) = sh(&format!(
        "{bad_line} --prefix {} --no-systemd",
        wrong.display()
    ));
    assert!(err.contains("pinned public key"), "{err}");
    assert!(!wrong.join("usr/local/bin/vigil-agent").exists());

    // The line as printed, into a throw-away prefix where an earlier install left the
    // separate read launcher earlier agents had.
    let prefix = tmp.path().join("root");
    let launcher = prefix.join("usr/local/bin/vigil-sandbox");
    std::fs::create_dir_all(launcher.parent().unwrap()).unwrap();
    std::fs::write(&launcher, b"#!/bin/sh\n").unwrap();
    let (code, out, err) = sh(&format!(
        "{line} --prefix {} --no-systemd",
        prefix.display()
    ));
    assert_eq!(code, 0, "install failed:\n{out}\n{err}");
    assert!(out.contains("SHA-256 verified for vigil-agent"), "{out}");
    let installed = prefix.join("usr/local/bin/vigil-agent");
    let state = prefix.join("var/lib/vigil-agent");
    assert_eq!(
        std::fs::read(&installed).unwrap(),
        std::fs::read(bin("vigil-agent")).unwrap()
    );
    let mode = std::fs::metadata(&installed).unwrap().permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o755
    );
    assert!(!launcher.exists(), "the earlier read launcher was left");
    let identity: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(state.join("identity.json")).unwrap())
            .unwrap();
    let id = identity["agent_id"].as_str().unwrap().to_owned();

    let agent_log = std::fs::File::create(tmp.path().join("agent.log")).unwrap();
    let _agent = Guard(
        Command::new(&installed)
            .arg("run")
            .arg("--state-dir")
            .arg(&state)
            .stdin(Stdio::null())
            .stdout(agent_log.try_clone().unwrap())
            .stderr(agent_log)
            .spawn()
            .unwrap(),
    );
    let connected = wait_until(Duration::from_secs(30), || {
        let (client, base, admin, id) = (client.clone(), base.clone(), admin.clone(), id.clone());
        async move {
            let Ok(r) = client
                .get(format!("{base}/api/agents"))
                .bearer_auth(&admin)
                .send()
                .await
            else {
                return false;
            };
            let agents: Vec<serde_json::Value> = r.json().await.unwrap_or_default();
            agents.iter().any(|a| {
                a["id"] == id.as_str() && a["connected"] == true && a["labels"]["site"] == "test"
            })
        }
    })
    .await;
    let agent_log = std::fs::read_to_string(tmp.path().join("agent.log")).unwrap_or_default();
    assert!(
        connected,
        "the installed agent did not connect:\n{agent_log}"
    );
    // It confines its reads itself, on a thread of its own.
    let agents: Vec<serde_json::Value> = client
        .get(format!("{base}/api/agents"))
        .bearer_auth(&admin)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let me = agents.iter().find(|a| a["id"] == id.as_str()).unwrap();
    assert_eq!(me["sandbox"]["launcher"], "thread", "{me}");
    assert!(agent_log.contains("launcher=thread"), "{agent_log}");

    // --uninstall --purge removes the binary and the state.
    let script = tmp.path().join("install.sh");
    std::fs::write(
        &script,
        client
            .get(format!("{base}/install.sh"))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap(),
    )
    .unwrap();
    let (code, out, err) = sh(&format!(
        "sh {} --uninstall --purge --no-systemd --prefix {}",
        script.display(),
        prefix.display()
    ));
    assert_eq!(code, 0, "{out}{err}");
    assert!(!installed.exists() && !state.exists());
}

/// A tiny HTTP server: the real install.sh, and an agent binary (a shell script that
/// succeeds) whose bytes do not match the X-Vigil-Sha256 header it is sent with.
async fn lying_server() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let script =
        std::fs::read(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../deploy/install.sh"))
            .unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let script = script.clone();
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&request).into_owned();
                let (status, body, extra) = if head.starts_with("GET /install.sh") {
                    ("200 OK", script, String::new())
                } else if head.starts_with("GET /download/vigil-agent?") {
                    let body = b"#!/bin/sh\necho not the agent\n".to_vec();
                    let sha = "ab".repeat(32);
                    ("200 OK", body, format!("X-Vigil-Sha256: {sha}\r\n"))
                } else {
                    ("404 Not Found", b"not here".to_vec(), String::new())
                };
                let response = format!(
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
                let _ = stream.write_all(&body).await;
                let _ = stream.shutdown().await;
            });
        }
    });
    port
}

/// The install line against the fake controller, into `prefix`.
async fn install_from(prefix: &Path) -> (i32, String, String) {
    let port = lying_server().await;
    sh(&format!(
        "curl -fsSL http://127.0.0.1:{port}/install.sh | sh -s -- --controller http://127.0.0.1:{port} \
         --insecure-http-ok --url https://127.0.0.1:1 --token vjt_00000000000000000000000000000000 \
         --ca-fingerprint sha256:00 --prefix {} --no-systemd",
        prefix.display()
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_that_does_not_match_its_checksum_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = tmp.path().join("root");
    let (code, out, err) = install_from(&prefix).await;
    assert_ne!(
        code, 0,
        "a tampered vigil-agent was accepted:\n{out}\n{err}"
    );
    assert!(err.contains("checksum mismatch"), "{err}");
    assert!(err.contains("vigil-agent"), "{err}");
    assert!(
        !prefix.join("usr/local/bin").exists(),
        "something was installed"
    );
    assert!(!prefix.join("var/lib/vigil-agent").exists());
}

#[tokio::test]
async fn join_tokens_are_admin_only_and_validated() {
    let ctrl = vigil_tests::Controller::start(vigil_tests::ControllerOptions::default()).await;
    let (code, out, err) = ctrl.cli(&["apitoken", "create", "--role", "operator", "--name", "ci"]);
    assert_eq!(code, 0, "{out}{err}");
    let operator = out.lines().last().unwrap().trim().to_owned();
    let admin = std::fs::read_to_string(ctrl.data_dir().join("admin.token")).unwrap();
    let url = format!("http://127.0.0.1:{}/api/join-tokens", ctrl.http_port);
    let client = reqwest::Client::new();
    let post = |token: String, body: serde_json::Value| {
        client
            .post(&url)
            .bearer_auth(token.trim().to_owned())
            .json(&body)
            .send()
    };
    let r = post(operator, serde_json::json!({})).await.unwrap();
    assert_eq!(r.status(), 403);
    let r = post(admin.clone(), serde_json::json!({"ttl": "25h"}))
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let r = post(admin.clone(), serde_json::json!({"uses": 1, "nope": 1}))
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let r = post(admin, serde_json::json!({"uses": 3})).await.unwrap();
    assert_eq!(r.status(), 201);
    let body: serde_json::Value = r.json().await.unwrap();
    let line = body["install"].as_str().unwrap();
    let base = format!("http://127.0.0.1:{}", ctrl.http_port);
    assert!(
        line.starts_with(&format!(
            "curl -fsSL {base}/install.sh | sh -s -- --controller {base} --insecure-http-ok"
        )),
        "{line}"
    );
    assert!(line.contains(&format!("--token {}", body["token"].as_str().unwrap())));
    assert!(line.contains("--ca-fingerprint sha256:"), "{line}");
}
