//! The link against a fake gateway over real TLS: join, run, commands, renewal, goodbye.

use super::*;
use crate::guard::request::grant_to_proto;
use crate::state::{CERT_FILE, KEY_FILE};
use crate::testing::gateway::{EXPIRED_TOKEN, FakeGateway, GOOD_TOKEN, Issuing};
use std::os::unix::fs::PermissionsExt;
use vigil_proto::agent::v1::{
    Cancel, ExecEvent, ExecMode, ExecRequest, Goodbye, agent_message, controller_message,
    exec_event, finished,
};
use vigil_shared::grant::{GrantBody, NONCE_LEN};
use vigil_shared::ids::ExecTarget;

const MONTH: i64 = 30 * 86_400;

fn fresh() -> Issuing {
    Issuing {
        age_s: 0,
        lifetime_s: MONTH,
    }
}

async fn join(gw: &FakeGateway, dir: &std::path::Path) -> Result<crate::state::Identity> {
    let options = JoinOptions::new(&gw.url(), GOOD_TOKEN, &gw.fingerprint(), StateDir::new(dir))?;
    enroll(&options).await
}

fn start(
    dir: &std::path::Path,
    read_only: bool,
) -> (CancellationToken, tokio::task::JoinHandle<Result<()>>) {
    let config = Config {
        read_only,
        ..Config::default()
    };
    let rt = Runtime::new(
        StateDir::new(dir),
        config,
        crate::platform::Platform::host_only(),
        crate::exec::ReadSandbox::off(),
    )
    .unwrap();
    let shutdown = CancellationToken::new();
    (shutdown.clone(), tokio::spawn(run(rt, shutdown)))
}

fn exec(id: &str, mode: ExecMode, command: &str) -> ExecRequest {
    ExecRequest {
        request_id: id.into(),
        target: Some(crate::guard::request::target_to_proto(&ExecTarget::Host)),
        command: command.into(),
        mode: mode as i32,
        timeout_s: 10,
        ..ExecRequest::default()
    }
}

fn write(gw: &FakeGateway, agent: &str, id: &str, command: &str, nonce: u8) -> ExecRequest {
    let now = crate::state::now_unix();
    let body = GrantBody {
        approval_id: "ap".into(),
        agent_id: agent.parse().unwrap(),
        target: ExecTarget::Host,
        command: command.as_bytes().to_vec(),
        issued_at: now,
        expires_at: now + 60,
        nonce: vec![nonce; NONCE_LEN],
    };
    let mut req = exec(id, ExecMode::Write, command);
    req.grant = Some(grant_to_proto(&body, &body.sign(&gw.grant_key)));
    req
}

/// The events of one request up to its last (Finished or Rejected).
async fn events_of(gw: &FakeGateway, id: &str) -> Vec<exec_event::Kind> {
    let mut kinds = Vec::new();
    loop {
        let event: ExecEvent = gw
            .expect(|k| match k {
                agent_message::Kind::ExecEvent(e) if e.request_id == id => Some(e),
                _ => None,
            })
            .await;
        let kind = event.kind.unwrap();
        let last = matches!(
            kind,
            exec_event::Kind::Finished(_) | exec_event::Kind::Rejected(_)
        );
        kinds.push(kind);
        if last {
            return kinds;
        }
    }
}

fn rejection(kinds: &[exec_event::Kind]) -> String {
    match kinds {
        [exec_event::Kind::Rejected(r)] => r.code.clone(),
        other => panic!("expected one Rejected, got {other:?}"),
    }
}

/// Live (not zombie) processes whose command line contains `marker`.
fn live_processes(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            let zombie = stat
                .rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z'));
            String::from_utf8_lossy(&cmdline).contains(marker) && !zombie
        })
        .count()
}

async fn send_exec(gw: &FakeGateway, req: ExecRequest) {
    gw.send(controller_message::Kind::ExecRequest(req)).await;
}

#[tokio::test]
async fn join_stores_an_identity_and_rejoin_names_the_previous_one() {
    let gw = FakeGateway::start(fresh()).await;
    let dir = tempfile::tempdir().unwrap();
    let first = join(&gw, dir.path()).await.unwrap();
    let state = StateDir::new(dir.path());
    let creds = state.load().unwrap();
    assert_eq!(creds.agent_id.to_string(), first.agent_id);
    assert_eq!(first.url, gw.url());
    assert_eq!(first.labels.get("site").map(String::as_str), Some("lab"));
    assert_eq!(creds.grant_key, gw.grant_key.verifying_key().to_bytes());
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(dir.path()), 0o700);
    assert_eq!(mode(&state.file(KEY_FILE)), 0o600);

    let second = join(&gw, dir.path()).await.unwrap();
    assert_ne!(second.agent_id, first.agent_id);
    let enrolls = gw.enrolls();
    assert_eq!(enrolls[0].previous_agent_id, "");
    assert_eq!(enrolls[1].previous_agent_id, first.agent_id);
    assert_eq!(enrolls[1].version, crate::VERSION);
    assert!(enrolls[1].csr_pem.contains("CERTIFICATE REQUEST"));
}

#[tokio::test]
async fn join_failures_are_explained() {
    let gw = FakeGateway::start(fresh()).await;
    let dir = tempfile::tempdir().unwrap();
    let state = || StateDir::new(dir.path());

    let wrong_pin = format!("sha256:{}", "ab".repeat(32));
    let options = JoinOptions::new(&gw.url(), GOOD_TOKEN, &wrong_pin, state()).unwrap();
    let error = enroll(&options).await.unwrap_err();
    assert!(matches!(error, Error::CaMismatch { .. }), "{error}");
    assert!(
        error
            .to_string()
            .contains("does not match --ca-fingerprint"),
        "{error}"
    );

    let options = JoinOptions::new(&gw.url(), EXPIRED_TOKEN, &gw.fingerprint(), state()).unwrap();
    let error = enroll(&options).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "enrollment refused: join token has expired"
    );

    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let url = format!("https://{closed}");
    let options = JoinOptions::new(&url, GOOD_TOKEN, &gw.fingerprint(), state()).unwrap();
    let error = enroll(&options).await.unwrap_err();
    assert!(matches!(error, Error::Connect { .. }), "{error}");
    assert!(error.to_string().contains(&url), "{error}");
    assert!(!state().is_enrolled(), "nothing is written on failure");
}

#[tokio::test]
async fn run_says_hello_then_runs_checked_commands_until_goodbye() {
    let gw = FakeGateway::start(fresh()).await;
    let dir = tempfile::tempdir().unwrap();
    let identity = join(&gw, dir.path()).await.unwrap();
    let (_shutdown, agent) = start(dir.path(), false);

    let hello = gw
        .expect(|k| match k {
            agent_message::Kind::Hello(h) => Some(h),
            _ => None,
        })
        .await;
    assert_eq!(hello.agent_id, identity.agent_id);
    assert_eq!(hello.capabilities, ["host"]);
    assert!(!hello.read_only);
    let facts = gw
        .expect(|k| match k {
            agent_message::Kind::Facts(f) => Some(f),
            _ => None,
        })
        .await;
    assert!(!facts.hostname.is_empty());
    let beat = gw
        .expect(|k| match k {
            agent_message::Kind::Heartbeat(h) => Some(h),
            _ => None,
        })
        .await;
    assert_eq!(beat.seq, 1);
    let status = StateDir::new(dir.path()).read_status().unwrap().unwrap();
    assert!(status.connected && status.pid == std::process::id());

    send_exec(&gw, exec("r1", ExecMode::Read, "echo hi")).await;
    let kinds = events_of(&gw, "r1").await;
    assert!(
        matches!(kinds[0], exec_event::Kind::Started(_)),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&exec_event::Kind::StdoutChunk(b"hi\n".to_vec())),
        "{kinds:?}"
    );
    assert!(
        matches!(kinds.last(), Some(exec_event::Kind::Finished(f)) if f.status == Some(finished::Status::ExitCode(0)))
    );

    send_exec(&gw, exec("r2", ExecMode::Write, "echo written")).await;
    assert_eq!(rejection(&events_of(&gw, "r2").await), "APPROVAL_REQUIRED");
    send_exec(&gw, exec("r3", ExecMode::Read, "rm -rf /tmp/nothing-here")).await;
    assert_eq!(rejection(&events_of(&gw, "r3").await), "POLICY_BLOCKED");

    let granted = write(&gw, &identity.agent_id, "r4", "echo written", 1);
    send_exec(&gw, granted.clone()).await;
    let kinds = events_of(&gw, "r4").await;
    assert!(
        kinds.contains(&exec_event::Kind::StdoutChunk(b"written\n".to_vec())),
        "{kinds:?}"
    );
    let replay = ExecRequest {
        request_id: "r5".into(),
        ..granted
    };
    send_exec(&gw, replay).await;
    assert_eq!(rejection(&events_of(&gw, "r5").await), "POLICY_BLOCKED");

    send_exec(&gw, exec("r6", ExecMode::Read, "sleep 20")).await;
    gw.expect(|k| match k {
        agent_message::Kind::ExecEvent(e) if e.request_id == "r6" => Some(()),
        _ => None,
    })
    .await;
    gw.send(controller_message::Kind::Cancel(Cancel {
        request_id: "r6".into(),
    }))
    .await;
    let kinds = events_of(&gw, "r6").await;
    assert!(
        matches!(kinds.last(), Some(exec_event::Kind::Finished(f)) if f.status == Some(finished::Status::Signal(9))),
        "{kinds:?}"
    );

    let bye = Goodbye {
        reason: "revoked by admin".into(),
        retry: false,
    };
    gw.send(controller_message::Kind::Goodbye(bye)).await;
    let ended = tokio::time::timeout(Duration::from_secs(10), agent)
        .await
        .unwrap()
        .unwrap();
    assert!(
        matches!(ended, Err(Error::Revoked(ref r)) if r == "revoked by admin"),
        "{ended:?}"
    );
    let status = StateDir::new(dir.path()).read_status().unwrap().unwrap();
    assert!(!status.connected);
    assert!(status.last_error.unwrap().contains("revoked"));
}

#[tokio::test]
async fn a_read_only_agent_says_so_and_refuses_granted_writes() {
    let gw = FakeGateway::start(fresh()).await;
    let dir = tempfile::tempdir().unwrap();
    let identity = join(&gw, dir.path()).await.unwrap();
    let (shutdown, agent) = start(dir.path(), true);
    let hello = gw
        .expect(|k| match k {
            agent_message::Kind::Hello(h) => Some(h),
            _ => None,
        })
        .await;
    assert!(hello.read_only);
    gw.expect(|k| match k {
        agent_message::Kind::Facts(_) => Some(()),
        _ => None,
    })
    .await;
    send_exec(
        &gw,
        write(&gw, &identity.agent_id, "w1", "touch /tmp/vigil-ro", 2),
    )
    .await;
    assert_eq!(rejection(&events_of(&gw, "w1").await), "ACTION_NOT_ALLOWED");

    // Eight reads run at once; the ninth is refused; stopping the agent kills them all.
    let marker = format!("60.{}", std::process::id());
    for i in 0..crate::guard::MAX_CONCURRENT {
        let id = format!("s{i}");
        send_exec(&gw, exec(&id, ExecMode::Read, &format!("sleep {marker}"))).await;
        gw.expect(|k| match k {
            agent_message::Kind::ExecEvent(e) if e.request_id == id => Some(()),
            _ => None,
        })
        .await;
    }
    send_exec(&gw, exec("s8", ExecMode::Read, "uptime")).await;
    assert_eq!(rejection(&events_of(&gw, "s8").await), "AGENT_BUSY");
    shutdown.cancel();
    let ended = tokio::time::timeout(Duration::from_secs(10), agent)
        .await
        .unwrap()
        .unwrap();
    assert!(ended.is_ok(), "{ended:?}");
    let mut left = 1;
    for _ in 0..40 {
        left = live_processes(&marker);
        if left == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(left, 0, "commands survived the agent's shutdown");
}

#[tokio::test]
async fn an_old_certificate_is_renewed_and_used_after_a_reconnect() {
    let gw = FakeGateway::start(Issuing {
        age_s: 21 * 86_400,
        lifetime_s: MONTH,
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    join(&gw, dir.path()).await.unwrap();
    let state = StateDir::new(dir.path());
    let old_cert = state.load().unwrap().cert_pem;
    let (shutdown, agent) = start(dir.path(), false);

    gw.expect(|k| match k {
        agent_message::Kind::RenewRequest(r) => Some(r),
        _ => None,
    })
    .await;
    let mut renewed = false;
    for _ in 0..100 {
        if state.load().unwrap().cert_pem != old_cert {
            renewed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(renewed, "agent.pem was not replaced");
    let validity =
        renew::Validity::of_pem(&std::fs::read_to_string(state.file(CERT_FILE)).unwrap()).unwrap();
    assert!(validity.renew_at() > crate::state::now_unix());

    gw.drop_stream().await;
    gw.expect(|k| match k {
        agent_message::Kind::Hello(h) => Some(h),
        _ => None,
    })
    .await;
    gw.expect(|k| match k {
        agent_message::Kind::Facts(_) => Some(()),
        _ => None,
    })
    .await;
    assert_eq!(gw.streams(), 2, "reconnected with the renewed certificate");
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(10), agent)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

#[test]
fn the_first_gateway_is_the_enrolled_one_else_spread_by_id() {
    let mut identity = crate::state::Identity {
        agent_id: String::new(),
        url: "https://b:8641".into(),
        enrolled_at: String::new(),
        labels: Default::default(),
        endpoints: Vec::new(),
    };
    let agent = vigil_shared::ids::AgentId::new_random();
    assert_eq!(super::first_gateway(&identity, agent), 0, "only the URL");
    identity.endpoints = ["https://a:8641", "https://b:8641", "https://c:8641"]
        .map(String::from)
        .to_vec();
    assert_eq!(
        super::first_gateway(&identity, agent),
        1,
        "the one enrolled through"
    );
    identity.url = "https://balancer:8641".into();
    let picked: std::collections::HashSet<usize> = (0..64)
        .map(|_| super::first_gateway(&identity, vigil_shared::ids::AgentId::new_random()))
        .collect();
    assert_eq!(
        picked.len(),
        3,
        "agents enrolled through a balancer spread: {picked:?}"
    );
}
