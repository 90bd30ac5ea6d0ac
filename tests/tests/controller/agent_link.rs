//! The AgentLink stream over real mutual TLS with a fake agent: hello and ack, one live
//! stream per identity (a newer one replaces one gone silent), commands dispatched from the HTTP API and their events routed back
//! (JSON and server-sent events), cancellation when the HTTP client leaves, revocation,
//! heartbeat timeout and certificate renewal.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use serde_json::{Value, json};
use tonic::Code;
use vigil_proto::agent::v1::{Heartbeat, RenewRequest, agent_message, controller_message};
use vigil_tests::in_process::TestController;
use vigil_tests::in_process::clients::{agent_config, connect, csr, enroll, hello};
use vigil_tests::in_process::fake_agent::{connected, setup};
use vigil_tests::{gateway_handshake, wait_until};

const HEARTBEAT: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread")]
async fn commands_reach_the_agent_and_events_come_back_as_json_and_sse() {
    let (ctrl, agent, _cancels) = setup(false).await;
    let body = json!({"agent": agent.id, "command": "uptime"});

    let response = ctrl
        .api(reqwest::Method::POST, "/api/exec")
        .header("accept", "application/json")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let outcome: Value = response.json().await.unwrap();
    assert_eq!(
        outcome,
        json!({"exit_code": 0, "signal": null, "stdout": "hello\n", "stderr": "warn", "truncated": false, "duration_ms": 7, "queued_ms": 0})
    );

    let response = ctrl
        .api(reqwest::Method::POST, "/api/exec")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let events: Vec<eventsource_stream::Event> = response
        .bytes_stream()
        .eventsource()
        .map(|e| e.expect("an event"))
        .collect()
        .await;
    let names: Vec<&str> = events.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(names, ["stdout", "stdout", "stderr", "exit"]);
    let stdout: String = events
        .iter()
        .filter(|e| e.event == "stdout")
        .map(|e| e.data.as_str())
        .collect();
    assert_eq!(stdout, "hello\n");
    let exit: Value = serde_json::from_str(&events[3].data).unwrap();
    assert_eq!(
        exit,
        json!({"exit_code": 0, "signal": null, "truncated": false, "duration_ms": 7, "queued_ms": 0})
    );

    // The agent's own refusal is a 403 with the agent's code.
    let refused = json!({"agent": agent.id, "command": "echo refuse"});
    let response = ctrl
        .api(reqwest::Method::POST, "/api/exec")
        .json(&refused)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "POLICY_BLOCKED");
    assert_eq!(body["error"]["message"], "the agent says no");
    ctrl.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_goes_away_cancels_the_command() {
    let (ctrl, agent, mut cancels) = setup(false).await;
    let body = json!({"agent": agent.id, "command": "echo hang"});
    let response = ctrl
        .api(reqwest::Method::POST, "/api/exec")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    drop(response);
    let cancelled = tokio::time::timeout(Duration::from_secs(20), cancels.recv()).await;
    assert!(
        matches!(cancelled, Ok(Some(_))),
        "no Cancel reached the agent: {cancelled:?}"
    );
    ctrl.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_stream_and_a_foreign_hello_are_refused() {
    let ctrl = TestController::start(false, HEARTBEAT).await;
    let token = ctrl.token(2, 3600, &[]).await;
    let agent = enroll(&ctrl, &token, "a", "").await.unwrap();
    let other = enroll(&ctrl, &token, "b", "").await.unwrap();

    let mut first = connect(&ctrl, &agent, hello(&agent.id, true))
        .await
        .unwrap();
    let ack = first.recv().await.unwrap().unwrap();
    let Some(controller_message::Kind::HelloAck(ack)) = ack.kind else {
        panic!("no ack: {ack:?}")
    };
    assert_eq!(ack.heartbeat_interval_s, 10);
    let agents: Value = ctrl
        .api(reqwest::Method::GET, "/api/agents")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let me = agents
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == agent.id.as_str())
        .unwrap()
        .clone();
    assert_eq!(
        (me["connected"].clone(), me["read_only"].clone()),
        (json!(true), json!(true))
    );
    assert_eq!(me["version"], "0.1.0-test");

    let second = connect(&ctrl, &agent, hello(&agent.id, false))
        .await
        .expect_err("a second stream is refused");
    assert_eq!(
        (second.code(), second.message()),
        (Code::AlreadyExists, "agent is already connected")
    );

    let spoof = connect(&ctrl, &agent, hello(&other.id, false))
        .await
        .expect_err("a hello for another id is refused");
    assert_eq!(spoof.code(), Code::PermissionDenied, "{spoof:?}");

    drop(first);
    assert!(
        wait_until(Duration::from_secs(5), || async {
            !connected(&ctrl, &agent.id).await
        })
        .await
    );
    let mut again = connect(&ctrl, &agent, hello(&agent.id, false))
        .await
        .unwrap();
    assert!(
        again.recv().await.unwrap().is_some(),
        "reconnecting after the first stream ended works"
    );
    ctrl.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn revoking_says_goodbye_and_cuts_the_stream() {
    let ctrl = TestController::start(false, HEARTBEAT).await;
    let token = ctrl.token(1, 3600, &[]).await;
    let agent = enroll(&ctrl, &token, "a", "").await.unwrap();
    let mut stream = connect(&ctrl, &agent, hello(&agent.id, false))
        .await
        .unwrap();
    stream.recv().await.unwrap().unwrap();

    let response = ctrl
        .api(
            reqwest::Method::POST,
            &format!("/api/agents/{}/revoke", agent.id),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let goodbye = stream.recv().await.unwrap().unwrap();
    let Some(controller_message::Kind::Goodbye(goodbye)) = goodbye.kind else {
        panic!("no goodbye: {goodbye:?}")
    };
    assert!(!goodbye.retry);
    assert!(
        stream.recv().await.map(|m| m.is_none()).unwrap_or(true),
        "the stream ends after the goodbye"
    );

    let body = json!({"agent": agent.id, "command": "uptime"});
    let response = ctrl
        .api(reqwest::Method::POST, "/api/exec")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    let config = agent_config(
        &agent.response.ca_chain_pem,
        &agent.response.certificate_pem,
        &agent.key,
    );
    assert!(
        gateway_handshake(ctrl.running.grpc_addr.port(), config)
            .await
            .is_err()
    );
    ctrl.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_silent_stream_is_dropped_after_three_heartbeat_intervals() {
    let ctrl = TestController::start(false, Duration::from_secs(1)).await;
    let token = ctrl.token(1, 3600, &[]).await;
    let agent = enroll(&ctrl, &token, "a", "").await.unwrap();
    let mut stream = connect(&ctrl, &agent, hello(&agent.id, false))
        .await
        .unwrap();
    stream.recv().await.unwrap().unwrap();
    // Heartbeats keep it alive...
    for seq in 1..=4 {
        stream
            .send(agent_message::Kind::Heartbeat(Heartbeat {
                seq,
                unix_ms: 0,
            }))
            .await;
        tokio::time::sleep(Duration::from_millis(900)).await;
    }
    assert!(
        connected(&ctrl, &agent.id).await,
        "heartbeats keep the stream"
    );
    // ...silence ends it.
    let ended = stream.recv().await;
    assert!(
        matches!(&ended, Err(s) if s.code() == Code::DeadlineExceeded) || matches!(ended, Ok(None)),
        "{ended:?}"
    );
    assert!(
        wait_until(Duration::from_secs(2), || async {
            !connected(&ctrl, &agent.id).await
        })
        .await
    );
    ctrl.stop().await;
}

/// A stream silent for more than two heartbeat intervals (a half-open link) gives way to a
/// newer one of the same agent, which the controller then holds; the old one gets a
/// goodbye that tells it to reconnect.
#[tokio::test(flavor = "multi_thread")]
async fn a_newer_stream_replaces_one_gone_silent() {
    let ctrl = TestController::start(false, Duration::from_secs(1)).await;
    let token = ctrl.token(1, 3600, &[]).await;
    let agent = enroll(&ctrl, &token, "a", "").await.unwrap();
    let mut first = connect(&ctrl, &agent, hello(&agent.id, false))
        .await
        .unwrap();
    first.recv().await.unwrap().unwrap();
    tokio::time::sleep(Duration::from_millis(2400)).await;
    let mut second = connect(&ctrl, &agent, hello(&agent.id, false))
        .await
        .expect("the newer stream is taken");
    let ack = second.recv().await.unwrap().unwrap();
    assert!(matches!(
        ack.kind,
        Some(controller_message::Kind::HelloAck(_))
    ));
    let goodbye = first.recv().await;
    assert!(
        matches!(&goodbye, Ok(Some(m)) if matches!(&m.kind,
            Some(controller_message::Kind::Goodbye(g)) if g.retry)),
        "{goodbye:?}"
    );
    second
        .send(agent_message::Kind::Heartbeat(Heartbeat {
            seq: 1,
            unix_ms: 0,
        }))
        .await;
    assert!(connected(&ctrl, &agent.id).await);
    ctrl.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn renewal_signs_a_new_certificate_for_the_same_identity() {
    let ctrl = TestController::start(false, HEARTBEAT).await;
    let token = ctrl.token(1, 3600, &[]).await;
    let mut agent = enroll(&ctrl, &token, "a", "").await.unwrap();
    let mut stream = connect(&ctrl, &agent, hello(&agent.id, false))
        .await
        .unwrap();
    stream.recv().await.unwrap().unwrap();

    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    stream
        .send(agent_message::Kind::RenewRequest(RenewRequest {
            csr_pem: csr(&key),
        }))
        .await;
    let answer = stream.recv().await.unwrap().unwrap();
    let Some(controller_message::Kind::RenewResponse(renewed)) = answer.kind else {
        panic!("no renewal: {answer:?}")
    };
    assert_eq!(renewed.error, "");
    let new_der = CertificateDer::from_pem_slice(renewed.certificate_pem.as_bytes()).unwrap();
    assert_eq!(
        vigil_shared::tls::agent_id_from_cert(&new_der)
            .unwrap()
            .to_string(),
        agent.id
    );
    assert_ne!(renewed.certificate_pem, agent.response.certificate_pem);
    let stored = ctrl
        .running
        .agents
        .store()
        .get_agent(agent.id.parse().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        Some(stored.cert_serial),
        vigil_shared::tls::serial_and_expiry(&new_der).map(|(s, _)| s)
    );

    stream
        .send(agent_message::Kind::RenewRequest(RenewRequest {
            csr_pem: "garbage".into(),
        }))
        .await;
    let answer = stream.recv().await.unwrap().unwrap();
    let Some(controller_message::Kind::RenewResponse(refused)) = answer.kind else {
        panic!("no answer: {answer:?}")
    };
    assert!(refused.certificate_pem.is_empty() && !refused.error.is_empty());

    drop(stream);
    assert!(
        wait_until(Duration::from_secs(5), || async {
            !connected(&ctrl, &agent.id).await
        })
        .await
    );
    agent.key = key;
    agent.response.certificate_pem = renewed.certificate_pem;
    let mut renewed_stream = connect(&ctrl, &agent, hello(&agent.id, false))
        .await
        .unwrap();
    assert!(
        renewed_stream.recv().await.unwrap().is_some(),
        "the renewed certificate connects"
    );
    ctrl.stop().await;
}
