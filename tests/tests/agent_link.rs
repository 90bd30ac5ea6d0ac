//! End-to-end: a real controller process and real agent processes on 127.0.0.1, with real
//! certificates from the controller's CA. Enrollment, streaming, the agent's own guard,
//! identities at the TLS layer, and reconnecting after a controller restart.

#![allow(clippy::expect_used, clippy::unwrap_used)] // helpers outside #[test] functions

use serde_json::json;
use std::time::Duration;
use vigil_shared::grant::GrantBody;
use vigil_shared::ids::{AgentId, ExecTarget};
use vigil_tests::{
    Agent, AgentOptions, Controller, ControllerOptions, Identity, RawGrant, foreign_client_config,
    gateway_handshake, join_agent, processes_matching, wait_until,
};

const CONNECT: Duration = Duration::from_secs(30);

async fn setup(options: AgentOptions) -> (Controller, Agent) {
    let ctrl = Controller::start(ControllerOptions {
        raw_exec: true,
        ..Default::default()
    })
    .await;
    let agent = Agent::join(&ctrl, options).await;
    let id = agent.state.id.clone();
    let ok = wait_until(CONNECT, || ctrl.api.connected(&id)).await;
    assert!(
        ok,
        "agent never connected\ncontroller:\n{}\nagent:\n{}",
        ctrl.log(),
        agent.log()
    );
    (ctrl, agent)
}

fn stdout_of(events: &[vigil_tests::SseEvent]) -> String {
    events
        .iter()
        .filter(|e| e.event == "stdout")
        .map(|e| e.data.as_str())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn enroll_connect_run_a_read_and_stream_output_as_it_comes() {
    let (ctrl, agent) = setup(AgentOptions::default()).await;
    let id = &agent.state.id;

    let listed = ctrl.api.agents().await;
    let me = listed
        .iter()
        .find(|a| a["id"] == id.as_str())
        .expect("agent listed");
    assert_eq!(me["read_only"], false);
    assert!(
        me["hostname"].as_str().is_some_and(|h| !h.is_empty()),
        "{me}"
    );

    let out = ctrl
        .api
        .exec_json(id, "cat /proc/sys/kernel/ostype")
        .await
        .expect("read runs");
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.stdout.trim(), "Linux");
    assert!(!out.truncated);

    // A slow command, sent as an approved write, must stream: the first line arrives about
    // two seconds before the command ends.
    let cmd = "for i in 1 2 3; do echo $i; sleep 1; done";
    let grant = RawGrant::new(&ctrl.grant_key(), id, cmd);
    let events = ctrl
        .api
        .raw_exec_sse(id, "write", cmd, Some(&grant), json!({}))
        .await
        .expect("write with grant runs");
    let first = events
        .iter()
        .find(|e| e.event == "stdout")
        .expect("stdout event");
    let exit = events
        .iter()
        .find(|e| e.event == "exit")
        .expect("exit event");
    assert!(
        exit.at.duration_since(first.at) >= Duration::from_millis(1500),
        "output was not streamed: {events:?}"
    );
    assert_eq!(stdout_of(&events), "1\n2\n3\n");
    let exit: serde_json::Value = serde_json::from_str(&exit.data).expect("exit json");
    assert_eq!(exit["exit_code"], 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn timeout_kills_the_whole_process_tree() {
    let (ctrl, agent) = setup(AgentOptions::default()).await;
    let id = &agent.state.id;
    let marker = format!("sleep 100.{}", std::process::id());
    let cmd = format!("{marker} & {marker}");
    let grant = RawGrant::new(&ctrl.grant_key(), id, &cmd);
    let out = ctrl
        .api
        .raw_exec_json(id, "write", &cmd, Some(&grant), json!({"timeout_s": 2}))
        .await
        .expect("runs");
    assert_eq!(out.exit_code, None, "{out:?}");
    assert_eq!(out.signal, Some(9), "{out:?}");
    let gone = wait_until(Duration::from_secs(5), || async {
        processes_matching(&marker).is_empty()
    })
    .await;
    assert!(gone, "left behind: {:?}", processes_matching(&marker));
}

#[tokio::test(flavor = "multi_thread")]
async fn output_cap_sends_at_most_the_cap_and_marks_truncated() {
    let (ctrl, agent) = setup(AgentOptions::default()).await;
    let out = ctrl
        .api
        .exec_json(&agent.state.id, "yes | head -c 50000000")
        .await
        .expect("runs");
    assert!(out.truncated, "not marked truncated");
    assert!(
        out.stdout.len() <= 1024 * 1024,
        "{} bytes over the 1 MiB cap",
        out.stdout.len()
    );
    assert!(
        out.stdout.len() >= 512 * 1024,
        "suspiciously little output: {}",
        out.stdout.len()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_agent_refuses_what_it_must_refuse() {
    let (ctrl, agent) = setup(AgentOptions::default()).await;
    let id = &agent.state.id;
    let key = ctrl.grant_key();
    let code = |r: Result<vigil_tests::ExecOutcome, (u16, serde_json::Value)>| match r {
        Ok(o) => panic!("ran: {o:?}"),
        Err((_, body)) => body["error"]["code"].as_str().unwrap_or("").to_owned(),
    };

    let marker = format!("/tmp/vigil-e2e-{}", std::process::id());
    let write = format!("touch {marker}");
    assert_eq!(
        code(
            ctrl.api
                .raw_exec_json(id, "write", &write, None, json!({}))
                .await
        ),
        "APPROVAL_REQUIRED"
    );

    let other_cmd = RawGrant::new(&key, id, "touch /tmp/something-else");
    assert_eq!(
        code(
            ctrl.api
                .raw_exec_json(id, "write", &write, Some(&other_cmd), json!({}))
                .await
        ),
        "POLICY_BLOCKED"
    );

    let other_agent = RawGrant::new(&key, &AgentId::new_random().to_string(), &write);
    assert_eq!(
        code(
            ctrl.api
                .raw_exec_json(id, "write", &write, Some(&other_agent), json!({}))
                .await
        ),
        "POLICY_BLOCKED"
    );

    let mut past = RawGrant::new(&key, id, &write).body;
    past.issued_at -= 600;
    past.expires_at -= 600;
    let expired = RawGrant::signed(&key, past);
    assert_eq!(
        code(
            ctrl.api
                .raw_exec_json(id, "write", &write, Some(&expired), json!({}))
                .await
        ),
        "POLICY_BLOCKED"
    );

    let forged_key = vigil_shared::grant::signing_key_from_bytes(&[9; 32]);
    let forged = RawGrant::new(&forged_key, id, &write);
    assert_eq!(
        code(
            ctrl.api
                .raw_exec_json(id, "write", &write, Some(&forged), json!({}))
                .await
        ),
        "POLICY_BLOCKED"
    );
    assert!(
        !std::path::Path::new(&marker).exists(),
        "a refused write ran"
    );

    // A valid grant runs once; the same grant again is a replay.
    let good = RawGrant::new(&key, id, &write);
    let ran = ctrl
        .api
        .raw_exec_json(id, "write", &write, Some(&good), json!({}))
        .await
        .expect("valid grant runs");
    assert_eq!(ran.exit_code, Some(0));
    assert!(std::path::Path::new(&marker).exists());
    let _ = std::fs::remove_file(&marker);
    assert_eq!(
        code(
            ctrl.api
                .raw_exec_json(id, "write", &write, Some(&good), json!({}))
                .await
        ),
        "POLICY_BLOCKED"
    );
    assert!(
        !std::path::Path::new(&marker).exists(),
        "a replayed grant ran"
    );

    // Reads the agent classifies itself, whatever the controller said.
    assert_eq!(
        code(
            ctrl.api
                .raw_exec_json(id, "read", "tail -f /etc/hostname", None, json!({}))
                .await
        ),
        "UNBOUNDED_COMMAND"
    );
    assert_eq!(
        code(
            ctrl.api
                .raw_exec_json(id, "read", &write, None, json!({}))
                .await
        ),
        "POLICY_BLOCKED"
    );
    assert!(
        !std::path::Path::new(&marker).exists(),
        "a write sent as READ ran"
    );

    // The controller's own path refuses writes with the classifier's reasons.
    match ctrl.api.exec_json(id, "rm -rf /tmp/x").await {
        Ok(o) => panic!("write ran: {o:?}"),
        Err((status, body)) => {
            assert_eq!(status, 403, "{body}");
            assert_eq!(body["error"]["code"], "POLICY_BLOCKED");
            assert!(body.to_string().contains("rm"), "{body}");
        }
    }
    match ctrl.api.exec_json(id, "journalctl -f").await {
        Ok(o) => panic!("unbounded ran: {o:?}"),
        Err((status, body)) => {
            assert_eq!(status, 422, "{body}");
            assert_eq!(body["error"]["code"], "UNBOUNDED_COMMAND");
            assert!(
                body.to_string().contains("journalctl -n 200"),
                "no rewrite in {body}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_read_only_agent_refuses_every_write() {
    let (ctrl, agent) = setup(AgentOptions {
        read_only: true,
        ..Default::default()
    })
    .await;
    let id = &agent.state.id;
    let listed = ctrl.api.agents().await;
    assert!(
        listed
            .iter()
            .any(|a| a["id"] == id.as_str() && a["read_only"] == true),
        "{listed:?}"
    );
    let write = "true";
    let grant = RawGrant::new(&ctrl.grant_key(), id, write);
    match ctrl
        .api
        .raw_exec_json(id, "write", write, Some(&grant), json!({}))
        .await
    {
        Ok(o) => panic!("write ran on a read-only agent: {o:?}"),
        Err((_, body)) => assert_eq!(body["error"]["code"], "ACTION_NOT_ALLOWED", "{body}"),
    }
    let out = ctrl
        .api
        .exec_json(id, "uname -s")
        .await
        .expect("reads still run");
    assert_eq!(out.stdout.trim(), "Linux");
}

#[tokio::test(flavor = "multi_thread")]
async fn wrong_identities_are_refused_at_the_tls_layer() {
    let (ctrl, mut agent) = setup(AgentOptions::default()).await;
    let ca = ctrl.ca_pem();

    // The enrolled agent's own certificate is accepted.
    gateway_handshake(
        ctrl.grpc_port,
        foreign_client_config(&ca, Identity::StateDir(agent.state.path())),
    )
    .await
    .expect("enrolled certificate accepted");
    let no_cert =
        gateway_handshake(ctrl.grpc_port, foreign_client_config(&ca, Identity::None)).await;
    assert!(
        no_cert.is_err(),
        "a client without a certificate got through"
    );
    let foreign = gateway_handshake(
        ctrl.grpc_port,
        foreign_client_config(&ca, Identity::ForeignCa),
    )
    .await;
    assert!(
        foreign.is_err(),
        "a certificate from another CA got through"
    );

    // Revoking cuts the live stream and the certificate stops working at the handshake.
    let id = agent.state.id.clone();
    assert!(ctrl.api.revoke(&id).await.is_success());
    let cut = wait_until(Duration::from_secs(10), || async {
        !ctrl.api.connected(&id).await
    })
    .await;
    assert!(cut, "revoked agent still connected");
    let revoked = gateway_handshake(
        ctrl.grpc_port,
        foreign_client_config(&ca, Identity::StateDir(agent.state.path())),
    )
    .await;
    assert!(revoked.is_err(), "a revoked certificate got through");
    let exited = wait_until(Duration::from_secs(10), || {
        let alive = agent.alive();
        async move { !alive }
    })
    .await;
    assert!(
        exited,
        "the agent kept retrying after a goodbye without retry"
    );
    assert!(!ctrl.api.connected(&id).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn enrollment_refuses_expired_and_used_up_tokens() {
    let ctrl = Controller::start(ControllerOptions::default()).await;
    let dir = tempfile::tempdir().expect("tempdir");

    let once = ctrl.create_token(&["--uses", "1"]);
    let (code, out, err) = join_agent(&ctrl, &once, &dir.path().join("a"));
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = join_agent(&ctrl, &once, &dir.path().join("b"));
    assert_ne!(code, 0);
    assert!(format!("{out}{err}").contains("no uses left"), "{out}{err}");

    let short = ctrl.create_token(&["--ttl", "1s"]);
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let (code, out, err) = join_agent(&ctrl, &short, &dir.path().join("c"));
    assert_ne!(code, 0);
    assert!(format!("{out}{err}").contains("expired"), "{out}{err}");

    let bogus = "vjt_00000000000000000000000000000000";
    let (code, out, err) = join_agent(&ctrl, bogus, &dir.path().join("d"));
    assert_ne!(code, 0);
    assert!(format!("{out}{err}").contains("invalid"), "{out}{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn agents_reconnect_after_the_controller_restarts() {
    let (mut ctrl, agent) = setup(AgentOptions::default()).await;
    let id = agent.state.id.clone();
    ctrl.stop();
    tokio::time::sleep(Duration::from_secs(2)).await;
    ctrl.restart().await;
    // Back-off reaches at most a few seconds after a short outage.
    let back = wait_until(Duration::from_secs(20), || ctrl.api.connected(&id)).await;
    assert!(back, "agent did not reconnect\n{}", agent.log());
    let out = ctrl
        .api
        .exec_json(&id, "echo again")
        .await
        .expect("runs after restart");
    assert_eq!(out.stdout, "again\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn grants_bind_the_target() {
    let (ctrl, agent) = setup(AgentOptions::default()).await;
    let id = &agent.state.id;
    let cmd = "true";
    let mut body: GrantBody = RawGrant::new(&ctrl.grant_key(), id, cmd).body;
    body.target = ExecTarget::Lxc(141);
    let for_lxc = RawGrant::signed(&ctrl.grant_key(), body);
    match ctrl
        .api
        .raw_exec_json(id, "write", cmd, Some(&for_lxc), json!({}))
        .await
    {
        Ok(o) => panic!("ran with a grant for another target: {o:?}"),
        Err((_, body)) => assert_eq!(body["error"]["code"], "POLICY_BLOCKED", "{body}"),
    }
}

/// `run --join-url …` (what the container image and the DaemonSet use): the first start
/// enrolls with the token, a restart keeps that identity without using the token again
/// (it had one use), and the join flags without a token are a usage error.
#[tokio::test(flavor = "multi_thread")]
async fn run_enrolls_on_first_start_and_keeps_its_identity_after() {
    let ctrl = Controller::start(ControllerOptions::default()).await;
    let token = ctrl.create_token(&["--uses", "1"]);
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().join("state");
    let run = |run_no: u32, token: Option<&str>| {
        let mut cmd = std::process::Command::new(vigil_tests::bin("vigil-agent"));
        cmd.arg("run")
            .arg("--state-dir")
            .arg(&state)
            .args(["--join-url", &ctrl.gateway_url()])
            .args(["--join-ca-fingerprint", &ctrl.ca_fingerprint()])
            .env_remove("VIGIL_AGENT_TOKEN");
        if let Some(token) = token {
            cmd.env("VIGIL_AGENT_TOKEN", token);
        }
        vigil_tests::Proc::spawn(&mut cmd, dir.path().join(format!("run-{run_no}.log")))
    };
    let identity = || -> String {
        let text = std::fs::read_to_string(state.join("identity.json")).expect("identity.json");
        let value: serde_json::Value = serde_json::from_str(&text).expect("json");
        value["agent_id"].as_str().expect("agent_id").to_owned()
    };

    // Without a token the flags are refused before anything is written.
    let mut refused = run(0, None);
    assert!(
        wait_until(CONNECT, || std::future::ready(!refused.alive())).await,
        "run without a token kept going"
    );
    assert!(
        refused.output().contains("needs a join token"),
        "{}",
        refused.output()
    );
    assert!(!state.join("identity.json").exists());

    let mut first = run(1, Some(&token));
    let enrolled = || std::future::ready(state.join("identity.json").exists());
    let ok = wait_until(CONNECT, enrolled).await;
    assert!(ok, "no enrollment:\n{}", first.output());
    let id = identity();
    assert!(
        wait_until(CONNECT, || ctrl.api.connected(&id)).await,
        "never connected:\n{}",
        first.output()
    );
    first.stop();

    // The token is used up: a second enrollment would fail, so connecting again proves the
    // restart reused the identity.
    let mut second = run(2, Some(&token));
    assert!(
        wait_until(CONNECT, || ctrl.api.connected(&id)).await,
        "the restart did not reconnect:\n{}",
        second.output()
    );
    assert_eq!(identity(), id);
    assert_eq!(ctrl.api.agents().await.len(), 1, "a second agent enrolled");
    second.stop();
}
