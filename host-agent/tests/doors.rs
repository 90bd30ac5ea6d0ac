//! Daemons and the network behind read-only doors, with no classifier in the way: the
//! commands here are spawned straight through the read sandbox, as a classifier miss
//! would be. In the reads' namespace the container engine's socket is a door that
//! forwards only reads, every other UNIX socket on the host is masked, and a read opens
//! only the socket families its reach allows. Checked against a recording engine of the
//! test's own, the real Docker engine when it answers, and a local HTTP server. Needs root
//! (skipped otherwise, but not under CI).

#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::support;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixListener;
use std::sync::{Arc, Mutex};
use vigil_agent::exec::sandbox::HiddenPaths;
use vigil_agent::exec::sandbox::doors::{self, Door};
use vigil_agent::exec::sandbox::mountns::Plan;
use vigil_agent::exec::sandbox::thread;
use vigil_shared::policy::Reach;

/// A minimal HTTP/1.1 server (one request per connection) that records each request line
/// and answers `200 {}`: a UNIX-socket engine or a TCP server.
fn record(stream: impl Read + Write, seen: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    seen.lock().unwrap().push(line.trim().to_owned());
    let mut header = String::new();
    while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
        header.clear();
    }
    let _ = reader
        .get_mut()
        .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}");
}

async fn read(script: &str, reach: Reach, scratch: &std::path::Path) -> (i32, String) {
    let out = support::read(script, reach, scratch, false).await;
    (out.code, out.text())
}

fn docker_answers() -> bool {
    std::process::Command::new("docker")
        .args(["version", "--format", "{{.Server.Version}}"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_reach_daemons_only_through_read_only_doors() {
    if !support::root_or_skip("the door tests") {
        return;
    }
    let _turn = support::sandbox_turn().await;
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();

    // A recording "engine", and another daemon's socket that no rule names.
    let engine_path = dir.path().join("engine.sock");
    let engine_seen = Arc::new(Mutex::new(Vec::new()));
    let engine = UnixListener::bind(&engine_path).unwrap();
    let seen = engine_seen.clone();
    std::thread::spawn(move || {
        for stream in engine.incoming().flatten() {
            record(stream, &seen);
        }
    });
    let other_path = dir.path().join("other-daemon.sock");
    let other_seen = Arc::new(Mutex::new(Vec::new()));
    let other = UnixListener::bind(&other_path).unwrap();
    let seen = other_seen.clone();
    std::thread::spawn(move || {
        for stream in other.incoming().flatten() {
            record(stream, &seen);
        }
    });
    // A local HTTP server on TCP.
    let web = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let web_port = web.local_addr().unwrap().port();
    let web_seen = Arc::new(Mutex::new(Vec::new()));
    let seen = web_seen.clone();
    std::thread::spawn(move || {
        for stream in web.incoming().flatten() {
            record(stream, &seen);
        }
    });

    let door_dir = dir.path().join("doors");
    let door = door_dir.join("test-engine.sock");
    doors::engine::serve(&door, &engine_path).await.unwrap();
    let mut plan_doors = vec![Door {
        socket: door.clone(),
        covers: engine_path.clone(),
    }];
    let real_docker = docker_answers();
    if real_docker {
        plan_doors.extend(doors::start(&door_dir, None).await.list);
    } else {
        assert!(
            std::env::var_os("CI").is_none(),
            "the Docker engine must answer under CI"
        );
    }
    thread::set_plan(Plan {
        hidden: HiddenPaths::none(),
        doors: plan_doors,
        mask_sockets: true,
        root: None,
    });

    let engine_url = |path: &str| {
        format!(
            "curl -sS --max-time 5 --unix-socket {} http://engine{path}",
            engine_path.display()
        )
    };
    // Reads pass the door; everything that acts is refused there and never reaches the
    // engine.
    let script = format!(
        "{}; echo; {}; echo; {} -X POST; echo; {} -X DELETE",
        engine_url("/v1.47/containers/json"),
        engine_url("/v1.47/images/library/nginx:1/json"),
        engine_url("/v1.47/networks/create"),
        engine_url("/v1.47/containers/web"),
    );
    let (_, out) = read(&script, Reach::Sockets, &scratch).await;
    assert!(out.contains("refused by Vigil's read-only door"), "{out}");
    let engine_got = engine_seen.lock().unwrap().clone();
    assert_eq!(
        engine_got,
        vec![
            "GET /v1.47/containers/json HTTP/1.1".to_owned(),
            "GET /v1.47/images/library/nginx:1/json HTTP/1.1".to_owned(),
        ],
        "{out}"
    );

    // A socket that no rule names is not reachable at all.
    let (_, out) = read(
        &format!(
            "curl -sS --max-time 5 --unix-socket {} http://x/",
            other_path.display()
        ),
        Reach::Sockets,
        &scratch,
    )
    .await;
    assert!(
        other_seen.lock().unwrap().is_empty(),
        "reached another daemon: {out}"
    );

    // A read whose programs need no socket cannot open one; nor the network.
    let (_, out) = read(
        &engine_url("/v1.47/containers/json"),
        Reach::Local,
        &scratch,
    )
    .await;
    assert_eq!(engine_seen.lock().unwrap().len(), 2, "{out}");
    let web_url = format!("curl -sS --max-time 5 -X DELETE http://127.0.0.1:{web_port}/v1/items/1");
    let (_, out) = read(&web_url, Reach::Sockets, &scratch).await;
    assert!(
        web_seen.lock().unwrap().is_empty(),
        "a read without network reached it: {out}"
    );
    // With the network (curl's reads), a GET goes through.
    let get = format!("curl -sS --max-time 5 http://127.0.0.1:{web_port}/health");
    let (code, out) = read(&get, Reach::Network, &scratch).await;
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        web_seen.lock().unwrap().clone(),
        vec!["GET /health HTTP/1.1".to_owned()]
    );

    if real_docker {
        let name = format!("vigil-door-test-{}", std::process::id());
        let script = format!(
            "docker ps -q >/dev/null && echo listed; docker network create {name}; \
             docker run --rm --privileged busybox true; echo end"
        );
        let (_, out) = read(&script, Reach::Sockets, &scratch).await;
        assert!(out.contains("listed"), "docker ps through the door: {out}");
        assert!(out.contains("refused by Vigil's read-only door"), "{out}");
        let networks = std::process::Command::new("docker")
            .args(["network", "ls", "--format", "{{.Name}}"])
            .output()
            .unwrap();
        let networks = String::from_utf8_lossy(&networks.stdout);
        assert!(
            !networks.lines().any(|n| n == name),
            "the read created {name}"
        );
    }
}
