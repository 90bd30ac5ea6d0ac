//! Three controller replicas (real `vigil-controller serve` processes) on one PostgreSQL,
//! sharing one identity (`secrets init`), each with its internal link (`--cluster-listen`),
//! and real agents given the three gateways (`--gateway-endpoints`):
//!
//! - every replica lists the three (`GET /api/cluster`), each holding the agent that
//!   enrolled through it; a read on every agent through every replica runs (forwarded to
//!   the replica holding the agent); every replica lists every agent's host resource and
//!   routes a read to it by id; hidden paths set through one replica reach the agent
//!   another holds; a fan-out through one reaches all three;
//! - `kill -9` of a replica in the middle of an approved write it was running (on an agent
//!   another replica holds) and of a fan-out through another replica: the fan-out's read
//!   on its agent fails with `REPLICA_LOST` and the others succeed; its agent is back on
//!   another, its lease lapses, reads reach the agent again through the survivors, and
//!   the write is recorded `unknown` and never runs again;
//! - a replica cut from PostgreSQL (nftables drops its database connections) fences
//!   itself: `/readyz` says so, its agent moves, and when the link heals it serves again;
//! - the audit chain, appended by every replica, verifies;
//! - a rolling restart (SIGTERM each replica in turn) under steady reads through Debian's
//!   haproxy fails no read;
//! - a chat turn on one replica waits for an approval decided through another, and its
//!   write runs once; the session's next turn on a third keeps its gate state (the
//!   resolved resource is in that replica's prompt); a turn is one per session across
//!   replicas, and a cancel sent to another replica stops it; when the replica running a
//!   turn is killed, its approval decided elsewhere still runs once and the session goes
//!   on on another replica.
//!
//! Needs PostgreSQL (`VIGIL_TEST_DATABASE_URL`); the fencing part needs root and
//! nftables, the rolling restart haproxy. Without them the test says so and passes vacuously, except under `CI`.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use vigil_tests::partition::{Partition, can_partition};
use vigil_tests::{Agent, AgentOptions, AgentState, Controller, ControllerOptions, db, free_port};

/// Generous bounds: a lease is 10 s, an agent's first reconnect waits up to 1 s.
const MOVE: Duration = Duration::from_secs(45);

/// A TCP forwarder to PostgreSQL, so that one replica's database connections go through
/// a port of their own, which nftables can cut.
async fn database_proxy(target: String) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            let target = target.clone();
            tokio::spawn(async move {
                if let Ok(mut outbound) = TcpStream::connect(&target).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    port
}

/// `url` with its host and port replaced by 127.0.0.1:`port`, and the address it named.
fn through(url: &str, port: u16) -> (String, String) {
    let mut parsed = reqwest::Url::parse(url).unwrap();
    let target = format!(
        "{}:{}",
        parsed.host_str().unwrap(),
        parsed.port().unwrap_or(5432)
    );
    parsed.set_host(Some("127.0.0.1")).unwrap();
    parsed.set_port(Some(port)).unwrap();
    (parsed.to_string(), target)
}

fn run_cli(args: &[&str]) -> String {
    let out = std::process::Command::new(vigil_tests::bin("vigil-controller"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Enrolls an agent through `gateway` (a replica's port) with a token made through
/// `ctrl`'s API, then runs it.
async fn agent_through(ctrl: &Controller, gateway: u16, fingerprint: &str) -> Agent {
    let (status, created) = ctrl.api.post("/api/join-tokens", &json!({"uses": 1})).await;
    assert_eq!(status, 201, "{created}");
    let token = created["token"].as_str().unwrap();
    let dir = tempfile::Builder::new()
        .prefix("vigil-agent-")
        .tempdir()
        .unwrap();
    let joined = std::process::Command::new(vigil_tests::bin("vigil-agent"))
        .args(["join", "--url", &format!("https://127.0.0.1:{gateway}")])
        .args(["--token", token, "--ca-fingerprint", fingerprint])
        .arg("--state-dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        joined.status.success(),
        "{}",
        String::from_utf8_lossy(&joined.stderr)
    );
    let identity: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("identity.json")).unwrap())
            .unwrap();
    assert_eq!(
        identity["endpoints"].as_array().map(Vec::len),
        Some(3),
        "the agent was given every gateway: {identity}"
    );
    let id = identity["agent_id"].as_str().unwrap().to_owned();
    Agent::run_enrolled(AgentState::new(dir, id), &AgentOptions::default())
}

async fn cluster(ctrl: &Controller) -> Value {
    let (status, body) = ctrl.api.get("/api/cluster").await;
    assert_eq!(status, 200, "{body}");
    body
}

/// The replica of `view` with `id`.
fn replica<'a>(view: &'a Value, id: &str) -> Option<&'a Value> {
    view["replicas"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
}

async fn reads_through(ctrl: &Controller, agent: &str) -> bool {
    reads_through_api(&ctrl.api, agent).await
}

fn log_of(dir: &Path) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        if entry.file_name().to_string_lossy().ends_with(".log") {
            text.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
        }
    }
    text
}

/// Three replicas and an agent enrolled through each.
struct Replicas {
    tmp: tempfile::TempDir,
    replicas: Vec<Controller>,
    /// Each replica's id, as `GET /api/cluster` names it.
    ids: Vec<String>,
    agents: Vec<Agent>,
    agent_ids: Vec<String>,
    /// The port the third replica's database connections go through.
    proxy: u16,
    cleanup: db::Cleanup,
}

/// Starts three replicas on one PostgreSQL schema (the third reaching it through a
/// proxy of its own), each with `extra` flags too, and enrolls one agent through each;
/// waits until each replica holds its agent. `None` without PostgreSQL (outside CI).
async fn start_replicas(extra: &[String]) -> Option<Replicas> {
    let Some((url, cleanup)) = db::pg_schema_url().await.unwrap() else {
        eprintln!("skipping: no PostgreSQL (VIGIL_TEST_DATABASE_URL)");
        return None;
    };
    let tmp = tempfile::tempdir().unwrap();
    let secrets = tmp.path().join("secrets");
    let secrets = secrets.to_str().unwrap();
    let init = run_cli(&["secrets", "init", "--dir", secrets]);
    let fingerprint = init
        .lines()
        .find_map(|l| l.strip_prefix("CA fingerprint: "))
        .unwrap()
        .to_owned();
    assert!(Path::new(secrets).join("cluster-ca.key").exists());

    // The third replica reaches the database through a port of its own.
    let (_, target) = through(&url, 0);
    let proxy = database_proxy(target).await;
    let (proxied_url, _) = through(&url, proxy);
    let grpc: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let endpoints = grpc
        .iter()
        .map(|p| format!("127.0.0.1:{p}"))
        .collect::<Vec<_>>()
        .join(",");
    let mut replicas = Vec::new();
    for (i, port) in grpc.iter().enumerate() {
        let database = if i == 2 { &proxied_url } else { &url };
        let ctrl = Controller::start(ControllerOptions {
            grpc_port: Some(*port),
            extra_args: [
                "--secrets-dir",
                secrets,
                "--database-url",
                database,
                "--cluster-listen",
                &format!("127.0.0.1:{}", free_port()),
                "--gateway-endpoints",
                &endpoints,
            ]
            .map(String::from)
            .into_iter()
            .chain(extra.iter().cloned())
            .collect(),
            ..Default::default()
        })
        .await;
        replicas.push(ctrl);
    }
    let mut ids = Vec::new();
    for ctrl in &replicas {
        ids.push(cluster(ctrl).await["replica"].as_str().unwrap().to_owned());
    }
    let view = cluster(&replicas[0]).await;
    for id in &ids {
        let row = replica(&view, id).unwrap_or_else(|| panic!("{id} not listed: {view}"));
        assert_eq!(row["live"], true, "{view}");
        assert!(
            row["advertise_address"]
                .as_str()
                .is_some_and(|a| a.starts_with("127.0.0.1:")),
            "{view}"
        );
    }

    // One agent enrolled through each replica's gateway: each replica holds one.
    let mut agents = Vec::new();
    for (ctrl, port) in replicas.iter().zip(&grpc) {
        agents.push(agent_through(ctrl, *port, &fingerprint).await);
    }
    let agent_ids: Vec<String> = agents.iter().map(|a| a.state.id.clone()).collect();
    let spread = vigil_tests::wait_until(MOVE, || async {
        let view = cluster(&replicas[0]).await;
        ids.iter()
            .all(|id| replica(&view, id).is_some_and(|r| r["agents_held"] == 1))
    })
    .await;
    assert!(spread, "{}", cluster(&replicas[0]).await);
    Some(Replicas {
        tmp,
        replicas,
        ids,
        agents,
        agent_ids,
        proxy,
        cleanup,
    })
}

impl Replicas {
    async fn finish(self) {
        drop(self.agents);
        for mut ctrl in self.replicas {
            ctrl.stop();
        }
        self.cleanup.finish().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn three_replicas_share_the_fleet_forward_reads_and_survive_losing_one() {
    let Some(mut set) = start_replicas(&[]).await else {
        return;
    };
    let Replicas {
        tmp,
        replicas,
        ids,
        agents,
        agent_ids,
        proxy,
        ..
    } = &mut set;
    // Every agent through every replica: two of the three reads are forwarded.
    for ctrl in replicas.iter() {
        for agent in agent_ids.iter() {
            let ran =
                vigil_tests::wait_until(Duration::from_secs(10), || reads_through(ctrl, agent))
                    .await;
            assert!(
                ran,
                "a read on {agent} through {}: {:?}",
                ctrl.http_port,
                ctrl.api.exec_json(agent, "echo replica-read").await
            );
        }
    }
    // Every replica lists every agent's host, and routes a read to it by its id.
    for ctrl in replicas.iter() {
        for agent in agent_ids.iter() {
            let host = format!("host:{agent}");
            let listed = vigil_tests::wait_until(MOVE, || async {
                ctrl.api.resource(&host).await.is_some()
            })
            .await;
            assert!(listed, "{host} is not listed through {}", ctrl.http_port);
            let routed = ctrl.api.exec_resource_json(&host, "echo routed").await;
            assert!(
                matches!(&routed, Ok(o) if o.stdout.contains("routed")),
                "{host} through {}: {routed:?}",
                ctrl.http_port
            );
        }
    }
    // Hidden paths set through the first replica reach the agent the second holds.
    let hidden = tmp.path().join("hidden");
    std::fs::create_dir_all(&hidden).unwrap();
    std::fs::write(hidden.join("token"), "s3cret-token\n").unwrap();
    let cat = format!("cat {}", hidden.join("token").display());
    let shows = |ctrl: &Controller| {
        let (api, agent, cat) = (ctrl.api.clone(), agent_ids[1].clone(), cat.clone());
        async move {
            matches!(api.exec_json(&agent, &cat).await,
                     Ok(o) if o.stdout.contains("s3cret-token"))
        }
    };
    assert!(
        shows(&replicas[2]).await,
        "the file is readable before it is hidden"
    );
    let (status, body) = replicas[0]
        .api
        .raw_request(
            reqwest::Method::PUT,
            &format!("/api/agents/{}/hidden-paths", agent_ids[1]),
            &json!({"paths": [hidden.to_str().unwrap()]}).to_string(),
            Some(replicas[0].api.token()),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let gone = vigil_tests::wait_until(MOVE, || async { !shows(&replicas[2]).await }).await;
    assert!(
        gone,
        "the agent held by another replica still shows the hidden file"
    );
    assert!(!shows(&replicas[1]).await);

    let (status, fanout) = replicas[1]
        .api
        .fanout_json(&json!({"all": true, "command": "echo fanned"}))
        .await;
    assert_eq!(status, 200, "{fanout}");
    assert_eq!(fanout["summary"]["ok"], 3, "{fanout}");

    // A write on the first agent, approved through the second replica, which runs it (the
    // agent held by the first): the second is killed mid-write. The survivors record the
    // outcome as unknown once its lease lapses, and nothing runs the write again.
    let runs = tmp.path().join("runs");
    let marker = format!("sleep 297.{}", std::process::id());
    let command = format!(
        "echo run >> {}; {marker}; echo done >> {}",
        runs.display(),
        runs.display()
    );
    let (status, row) = replicas[1]
        .api
        .post(
            "/api/exec/write",
            &json!({"agent": agent_ids[0], "command": command}),
        )
        .await;
    assert_eq!(status, 202, "{row}");
    let approval = row["id"].as_str().unwrap().to_owned();
    let (status, body) = replicas[1]
        .api
        .post(&format!("/api/ai/approvals/{approval}/approve"), &json!({}))
        .await;
    assert!(status < 300, "{body}");
    let started = vigil_tests::wait_until(Duration::from_secs(20), || async {
        !vigil_tests::processes_matching(&marker).is_empty()
    })
    .await;
    assert!(started, "the write never started: {}", agents[0].log());

    // A fan-out through the first replica in flight too: its target on the second
    // replica's agent is forwarded there.
    let fanning = {
        let api = replicas[0].api.clone();
        tokio::spawn(async move {
            api.fanout_json(&json!({"all": true, "command": "sleep 3"}))
                .await
        })
    };
    tokio::time::sleep(Duration::from_secs(1)).await;

    // kill -9 the second replica: its agent comes back through another, its lease lapses.
    replicas[1].kill();
    let (status, fanned) = fanning.await.unwrap();
    assert_eq!(status, 200, "{fanned}");
    for result in fanned["results"].as_array().unwrap() {
        if result["agent"] == agent_ids[1].as_str() {
            assert_eq!(
                (result["status"].as_str(), result["error"]["code"].as_str()),
                (Some("failed"), Some("REPLICA_LOST")),
                "the read in flight on the killed replica fails clearly: {fanned}"
            );
        } else {
            assert_eq!(result["status"], "ok", "{fanned}");
        }
    }
    let moved = vigil_tests::wait_until(MOVE, || reads_through(&replicas[0], &agent_ids[1])).await;
    assert!(moved, "{}", agents[1].log());
    let lapsed = vigil_tests::wait_until(MOVE, || async {
        let view = cluster(&replicas[0]).await;
        replica(&view, &ids[1]).is_some_and(|r| r["live"] == false && r["state"] == "lapsed")
    })
    .await;
    assert!(lapsed, "{}", cluster(&replicas[0]).await);
    assert!(reads_through(&replicas[2], &agent_ids[1]).await);
    let path = format!("/api/ai/approvals/{approval}");
    let unknown = vigil_tests::wait_until(MOVE, || async {
        replicas[0].api.get(&path).await.1["run_state"] == "unknown"
    })
    .await;
    assert!(unknown, "{}", replicas[0].api.get(&path).await.1);
    let stopped = vigil_tests::wait_until(MOVE, || async {
        vigil_tests::processes_matching(&marker).is_empty()
    })
    .await;
    assert!(stopped, "the write kept running after its replica died");
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        std::fs::read_to_string(&runs).unwrap_or_default(),
        "run\n",
        "the write ran once, was stopped, and never ran again"
    );

    // The third replica cut from PostgreSQL fences itself; its agent moves.
    if can_partition() {
        let cut = Partition::cut(*proxy);
        let fenced = vigil_tests::wait_until(MOVE, || async {
            let (status, body) = replicas[2].api.get("/readyz").await;
            status == 503 && body["reason"].as_str().unwrap_or("").contains("fenced")
        })
        .await;
        assert!(fenced, "{}", log_of(replicas[2].data_dir()));
        let (status, refused) = replicas[2]
            .api
            .post(
                "/api/exec",
                &json!({"agent": agent_ids[0], "command": "echo x"}),
            )
            .await;
        assert_eq!(
            (status, refused["error"]["code"].as_str()),
            (503, Some("REPLICA_FENCED")),
            "{refused}"
        );
        let moved =
            vigil_tests::wait_until(MOVE, || reads_through(&replicas[0], &agent_ids[2])).await;
        assert!(moved, "{}", agents[2].log());
        cut.heal();
        let back = vigil_tests::wait_until(MOVE, || async {
            replicas[2].api.get("/readyz").await.0 == 200
        })
        .await;
        assert!(back, "{}", log_of(replicas[2].data_dir()));
        assert!(reads_through(&replicas[2], &agent_ids[0]).await);
    }

    let (status, verified) = replicas[0].api.get("/api/audit/verify").await;
    assert_eq!(status, 200, "{verified}");
    assert_eq!(verified["intact"], true, "{verified}");
    let text = run_cli(&[
        "cluster",
        "--url",
        replicas[0].api.base(),
        "--data-dir",
        replicas[0].data_dir().to_str().unwrap(),
    ]);
    assert!(
        text.contains("REPLICA") && text.contains("lapsed"),
        "{text}"
    );

    set.finish().await;
}

/// Debian's haproxy in front of the replicas' HTTP APIs, health-checking `/readyz`.
struct Haproxy {
    proc: vigil_tests::Proc,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Haproxy {
    fn start(replicas: &[Controller]) -> Option<Haproxy> {
        if std::process::Command::new("haproxy")
            .arg("-v")
            .output()
            .is_err()
        {
            assert!(
                std::env::var_os("CI").is_none(),
                "haproxy is missing under CI (.ci/run installs it)"
            );
            eprintln!("skipping: haproxy is not installed");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let servers: String = replicas
            .iter()
            .enumerate()
            .map(|(i, ctrl)| {
                format!(
                    "  server r{i} 127.0.0.1:{} check inter 250ms fall 1 rise 2\n",
                    ctrl.http_port
                )
            })
            .collect();
        let config = format!(
            "global\n  maxconn 512\n\
             defaults\n  mode http\n  timeout connect 2s\n  timeout client 60s\n  \
             timeout server 60s\n  retries 3\n  option redispatch\n  \
             retry-on conn-failure empty-response\n\
             frontend api\n  bind 127.0.0.1:{port}\n  default_backend vigil\n\
             backend vigil\n  balance roundrobin\n  option httpchk GET /readyz\n  \
             http-check expect status 200\n{servers}"
        );
        let path = dir.path().join("haproxy.cfg");
        std::fs::write(&path, config).unwrap();
        let mut cmd = std::process::Command::new("haproxy");
        cmd.arg("-db").arg("-f").arg(&path);
        let mut proc = vigil_tests::Proc::spawn(&mut cmd, dir.path().join("haproxy.log"));
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                proc.alive() && std::time::Instant::now() < deadline,
                "haproxy did not start: {}",
                proc.output()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(Haproxy {
            proc,
            port,
            _dir: dir,
        })
    }
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        self.proc.stop();
    }
}

/// A rolling restart (SIGTERM each replica in turn, start it again) under a steady stream
/// of reads through haproxy: each stopping replica drains (`/readyz` 503, its agents sent
/// to the others once idle, commands for them waiting for them there) and no read fails.
#[tokio::test(flavor = "multi_thread")]
async fn a_rolling_restart_under_steady_reads_through_haproxy_fails_no_request() {
    let Some(mut set) = start_replicas(&[]).await else {
        return;
    };
    let Some(haproxy) = Haproxy::start(&set.replicas) else {
        set.finish().await;
        return;
    };
    let api = vigil_tests::Api::new(
        format!("http://127.0.0.1:{}", haproxy.port),
        set.replicas[0].api.token().to_owned(),
    );
    let up = vigil_tests::wait_until(Duration::from_secs(20), || {
        reads_through_api(&api, &set.agent_ids[0])
    })
    .await;
    assert!(up, "{}", haproxy.proc.output());

    let stop = tokio_util::sync::CancellationToken::new();
    let mut load = Vec::new();
    for worker in 0..3 {
        let (api, agents, stop) = (api.clone(), set.agent_ids.clone(), stop.clone());
        load.push(tokio::spawn(async move {
            let (mut ok, mut failed) = (0u32, Vec::new());
            let mut i = worker;
            while !stop.is_cancelled() {
                let agent = &agents[i % agents.len()];
                i += 1;
                match api.exec_json(agent, "echo replica-read").await {
                    Ok(outcome) if outcome.exit_code == Some(0) => ok += 1,
                    other => failed.push(format!("{agent}: {other:?}")),
                }
            }
            (ok, failed)
        }));
    }
    for i in 0..3 {
        tokio::time::sleep(Duration::from_secs(2)).await;
        set.replicas[i].stop_within(Duration::from_secs(40));
        set.replicas[i].restart().await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    stop.cancel();
    let (mut ok, mut failed) = (0, Vec::new());
    for worker in load {
        let (done, failures) = worker.await.unwrap();
        ok += done;
        failed.extend(failures);
    }
    assert!(
        failed.is_empty(),
        "{} of {} reads failed during the rolling restart: {failed:#?}",
        failed.len(),
        ok as usize + failed.len()
    );
    assert!(ok > 30, "only {ok} reads ran");
    // Every agent is held by a live replica, and every replica serves.
    for agent in &set.agent_ids {
        assert!(reads_through_api(&api, agent).await);
    }
    let view = cluster(&set.replicas[0]).await;
    let live = view["replicas"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["live"] == true)
        .count();
    assert_eq!(live, 3, "{view}");
    drop(haproxy);
    set.finish().await;
}

async fn reads_through_api(api: &vigil_tests::Api, agent: &str) -> bool {
    matches!(api.exec_json(agent, "echo replica-read").await,
             Ok(outcome) if outcome.exit_code == Some(0) && outcome.stdout.contains("replica-read"))
}

/// Chat across replicas, with the scripted model behind all three.
#[tokio::test(flavor = "multi_thread")]
async fn a_turn_waits_for_an_approval_decided_elsewhere_and_its_state_moves_on() {
    use vigil_tests::chat::{named, scripted_llm_args};
    use vigil_tests::model_server::{Protocol, Reply, ScriptedModel};
    const TURN: Duration = Duration::from_secs(60);
    let model = ScriptedModel::start(Protocol::OpenAi).await;
    let Some(mut set) = start_replicas(&scripted_llm_args(&model, Protocol::OpenAi)).await else {
        return;
    };
    let host = format!("host:{}", set.agent_ids[0]);
    let reported = vigil_tests::wait_until(MOVE, || async {
        set.replicas[0].api.resource(&host).await.is_some()
    })
    .await;
    assert!(reported, "the first agent never reported its host");
    let file = set.tmp.path().join("approved");
    let command = format!("echo approved >> {}", file.display());
    let call = |name: &str, args: Value| (name.to_owned(), args);
    model.push(Reply::ToolCalls(vec![call(
        "query",
        json!({"action": "get", "resource_id": host}),
    )]));
    model.push(Reply::ToolCalls(vec![call(
        "control",
        json!({"action": "command", "resource_id": host, "command": command}),
    )]));
    model.push(Reply::ToolCalls(vec![call(
        "read",
        json!({"action": "exec", "resource_id": host, "command": format!("cat {}", file.display())}),
    )]));
    model.push(Reply::Text("The line is there.".into()));
    let stream = set.replicas[0]
        .api
        .chat(&json!({"message": "add the line"}))
        .await
        .unwrap();
    let session = stream.wait_for("session", TURN).await["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let needed = stream.wait_for("approval_needed", TURN).await;
    let approval = needed["approval_id"].as_str().unwrap().to_owned();
    // Decided through the second replica: the turn on the first goes on.
    let (status, body) = set.replicas[1]
        .api
        .post(&format!("/api/ai/approvals/{approval}/approve"), &json!({}))
        .await;
    assert_eq!(status, 200, "{body}");
    let events = stream.finish(TURN).await;
    assert_eq!(
        named(&events, "approval_resolved")[0]["decision"],
        "approved"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "approved\n",
        "ran once"
    );
    let (_, row) = set.replicas[2]
        .api
        .get(&format!("/api/ai/approvals/{approval}"))
        .await;
    assert_eq!(row["run_state"], "done", "{row}");

    // The next turn, on the third replica, has the resolved resource in its prompt.
    model.push(Reply::Text("Still there.".into()));
    let before = model.request_count();
    let next = set.replicas[2]
        .api
        .chat(&json!({"message": "and now?", "session_id": session}))
        .await
        .unwrap();
    next.finish(TURN).await;
    let prompt = model.requests()[before].to_string();
    assert!(
        prompt.contains("commands run via") && prompt.contains(&host),
        "the third replica's prompt lacks the resolved resource: {prompt}"
    );

    // A turn waiting on the first replica: a second turn elsewhere is refused, and a
    // cancel sent to the second stops it and withdraws its approval.
    model.push(Reply::ToolCalls(vec![call(
        "control",
        json!({"action": "command", "resource_id": host, "command": command}),
    )]));
    model.push(Reply::Text("Cancelled.".into()));
    let waiting = set.replicas[0]
        .api
        .chat(&json!({"message": "once more", "session_id": session}))
        .await
        .unwrap();
    let needed = waiting.wait_for("approval_needed", TURN).await;
    let second = needed["approval_id"].as_str().unwrap().to_owned();
    let refused = set.replicas[2]
        .api
        .chat(&json!({"message": "me too", "session_id": session}))
        .await
        .expect_err("a second turn in the session is refused");
    assert_eq!(refused.0, 409, "{}", refused.1);
    let (status, body) = set.replicas[1]
        .api
        .post(&format!("/api/ai/sessions/{session}/cancel"), &json!({}))
        .await;
    assert_eq!(status, 200, "{body}");
    waiting.finish(TURN).await;
    let (_, row) = set.replicas[1]
        .api
        .get(&format!("/api/ai/approvals/{second}"))
        .await;
    assert_eq!(row["status"], "withdrawn", "{row}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "approved\n");

    // A turn on the second replica waits for an approval, and the replica is killed. The
    // approval, decided through the first, still runs, once; the session takes a new
    // turn on the third once the dead replica's claim on it has lapsed.
    let orphan = set.tmp.path().join("orphan");
    let command = format!("echo orphan >> {}", orphan.display());
    let host1 = format!("host:{}", set.agent_ids[1]);
    let reported = vigil_tests::wait_until(MOVE, || async {
        set.replicas[1].api.resource(&host1).await.is_some()
    })
    .await;
    assert!(reported, "the second agent never reported its host");
    // The cancelled turn left its scripted answer unread.
    model.clear();
    model.push(Reply::ToolCalls(vec![call(
        "query",
        json!({"action": "get", "resource_id": host1}),
    )]));
    model.push(Reply::ToolCalls(vec![call(
        "control",
        json!({"action": "command", "resource_id": host1, "command": command}),
    )]));
    let doomed = set.replicas[1]
        .api
        .chat(&json!({"message": "write it", "session_id": session}))
        .await
        .unwrap();
    let needed = doomed.wait_for("approval_needed", TURN).await;
    let third = needed["approval_id"].as_str().unwrap().to_owned();
    set.replicas[1].kill();
    drop(doomed);
    let (status, body) = set.replicas[0]
        .api
        .post(&format!("/api/ai/approvals/{third}/approve"), &json!({}))
        .await;
    assert_eq!(status, 200, "{body}");
    let ran = vigil_tests::wait_until(MOVE, || async {
        std::fs::read_to_string(&orphan).is_ok_and(|text| text == "orphan\n")
    })
    .await;
    assert!(
        ran,
        "the approved write of the dead replica's turn never ran"
    );
    model.push(Reply::Text("Done.".into()));
    let deadline = std::time::Instant::now() + MOVE;
    let next = loop {
        match set.replicas[2]
            .api
            .chat(&json!({"message": "and?", "session_id": session}))
            .await
        {
            Ok(stream) => break stream,
            Err((409, _)) if std::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            Err(other) => panic!("the dead replica's turn still holds the session: {other:?}"),
        }
    };
    next.finish(TURN).await;
    assert_eq!(
        std::fs::read_to_string(&orphan).unwrap(),
        "orphan\n",
        "ran once"
    );
    set.finish().await;
}
