//! The gateway at the TLS layer and enrollment, over real TLS on 127.0.0.1: a pinned
//! enrollment client gets an identity; tokens are enforced (expiry, uses, revocation, a
//! race for the last use); the handshake refuses clients without a certificate, with a
//! certificate from another CA, an expired one or a revoked one.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use tonic::Code;
use vigil_controller::pki::CertificateAuthority;
use vigil_proto::agent::v1::EnrollRequest;
use vigil_proto::agent::v1::enrollment_client::EnrollmentClient;
use vigil_shared::tls::{agent_id_from_cert, fingerprint};
use vigil_tests::gateway_handshake;
use vigil_tests::in_process::TestController;
use vigil_tests::in_process::clients::{
    agent_config, channel, csr, enroll, enroll_config, foreign_cert_config, no_cert_config,
};

const HEARTBEAT: Duration = Duration::from_secs(10);

fn der(pem: &str) -> CertificateDer<'static> {
    CertificateDer::from_pem_slice(pem.as_bytes()).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn enrollment_issues_an_identity_over_a_pinned_connection() {
    let ctrl = TestController::start(false, HEARTBEAT).await;
    let token = ctrl.token(1, 3600, &[("site", "home")]).await;
    let enrolled = enroll(&ctrl, &token, "node-1", "").await.unwrap();

    let cert = der(&enrolled.response.certificate_pem);
    assert_eq!(agent_id_from_cert(&cert).unwrap().to_string(), enrolled.id);
    assert_eq!(
        fingerprint(&der(&enrolled.response.ca_chain_pem)),
        ctrl.running.ca_fingerprint
    );
    assert_eq!(
        enrolled.response.labels.get("site").map(String::as_str),
        Some("home")
    );

    let text = std::fs::read_to_string(ctrl.dir.path().join("data/grant.key")).unwrap();
    let public = vigil_controller::pki::GrantKey::parse(&text)
        .unwrap()
        .public_bytes();
    assert_eq!(enrolled.response.grant_public_key, public.to_vec());

    let agents: serde_json::Value = ctrl
        .api(reqwest::Method::GET, "/api/agents")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(agents[0]["id"], enrolled.id.as_str());
    assert_eq!(agents[0]["hostname"], "node-1");
    assert_eq!(agents[0]["connected"], false);
    assert_eq!(agents[0]["labels"]["site"], "home");

    let wrong_pin = format!("sha256:{}", "0".repeat(64));
    assert!(
        channel(ctrl.running.grpc_addr, enroll_config(&wrong_pin))
            .await
            .is_err(),
        "a wrong pin must refuse the server"
    );
    ctrl.stop().await;
}

async fn refusal(ctrl: &TestController, token: &str) -> (Code, String) {
    match enroll(ctrl, token, "h", "").await {
        Ok(_) => panic!("enrollment with {token} succeeded"),
        Err(status) => (status.code(), status.message().to_owned()),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn enrollment_refusals_are_the_contract_statuses() {
    let ctrl = TestController::start(false, HEARTBEAT).await;
    let unauthenticated = |message: &str| (Code::Unauthenticated, message.to_owned());

    let bogus = format!("vjt_{}", "0".repeat(32));
    assert_eq!(
        refusal(&ctrl, &bogus).await,
        unauthenticated("join token is invalid")
    );
    assert_eq!(
        refusal(&ctrl, "not-a-token").await,
        unauthenticated("join token is invalid")
    );

    let expired = ctrl.token(5, -1, &[]).await;
    assert_eq!(
        refusal(&ctrl, &expired).await,
        unauthenticated("join token has expired")
    );

    let once = ctrl.token(1, 3600, &[]).await;
    enroll(&ctrl, &once, "h", "").await.unwrap();
    assert_eq!(
        refusal(&ctrl, &once).await,
        unauthenticated("join token has no uses left")
    );

    let revoked = ctrl.token(5, 3600, &[]).await;
    ctrl.running
        .agents
        .store()
        .revoke_join_token(&revoked, 0)
        .await
        .unwrap();
    assert_eq!(
        refusal(&ctrl, &revoked).await,
        unauthenticated("join token was revoked")
    );

    // A bad CSR is INVALID_ARGUMENT and does not use the token up.
    let token = ctrl.token(1, 3600, &[]).await;
    let client = channel(
        ctrl.running.grpc_addr,
        enroll_config(&ctrl.running.ca_fingerprint),
    )
    .await
    .unwrap();
    let request = EnrollRequest {
        token: token.clone(),
        csr_pem: "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n"
            .into(),
        hostname: "h".into(),
        ..Default::default()
    };
    let status = EnrollmentClient::new(client)
        .enroll(request)
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    enroll(&ctrl, &token, "h", "")
        .await
        .expect("the token still has its use");
    ctrl.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn racing_enrollments_never_share_the_last_use() {
    let ctrl = TestController::start(false, HEARTBEAT).await;
    for _ in 0..4 {
        let token = ctrl.token(1, 3600, &[]).await;
        let (a, b) = tokio::join!(
            enroll(&ctrl, &token, "a", ""),
            enroll(&ctrl, &token, "b", "")
        );
        let wins = [a.is_ok(), b.is_ok()].iter().filter(|ok| **ok).count();
        assert_eq!(wins, 1, "exactly one enrollment wins a one-use token");
        let loser = a.err().or(b.err()).unwrap();
        assert_eq!(loser.message(), "join token has no uses left");
    }
    let listed = ctrl.running.agents.store().list_agents(true).await.unwrap();
    assert_eq!(listed.len(), 4);
    ctrl.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_handshake_refuses_missing_foreign_expired_and_revoked_certificates() {
    let ctrl = TestController::start(false, HEARTBEAT).await;
    let port = ctrl.running.grpc_addr.port();
    let token = ctrl.token(1, 3600, &[]).await;
    let agent = enroll(&ctrl, &token, "node-1", "").await.unwrap();
    let ca_pem = agent.response.ca_chain_pem.clone();
    let own = || agent_config(&ca_pem, &agent.response.certificate_pem, &agent.key);

    gateway_handshake(port, own())
        .await
        .expect("the enrolled certificate is accepted");
    assert!(
        gateway_handshake(port, no_cert_config(&ca_pem))
            .await
            .is_err(),
        "no certificate"
    );
    assert!(
        gateway_handshake(port, foreign_cert_config(&ca_pem))
            .await
            .is_err(),
        "another CA"
    );

    // A certificate of our CA whose 30 days are over.
    let ca_key = std::fs::read_to_string(ctrl.dir.path().join("data/ca.key")).unwrap();
    let ca = CertificateAuthority::from_pem(&ca_pem, &ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let long_ago = time::OffsetDateTime::now_utc() - time::Duration::days(31);
    let old = ca
        .sign_agent_csr(&csr(&key), agent.id.parse().unwrap(), long_ago)
        .unwrap();
    assert!(
        gateway_handshake(port, agent_config(&ca_pem, &old.pem, &key))
            .await
            .is_err(),
        "expired"
    );

    let revoke = ctrl
        .api(
            reqwest::Method::POST,
            &format!("/api/agents/{}/revoke", agent.id),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(revoke.status(), 200);
    let body: serde_json::Value = revoke.json().await.unwrap();
    assert_eq!(body, serde_json::json!({"id": agent.id, "revoked": true}));
    assert!(gateway_handshake(port, own()).await.is_err(), "revoked");

    // Revocations survive a restart (they are in the database).
    let dir = ctrl.dir;
    ctrl.running.shutdown().await.unwrap();
    let config = vigil_controller::config::Config {
        heartbeat: HEARTBEAT,
        raw_exec: false,
        ..vigil_controller::config::Config::local(dir.path().join("data"))
    };
    let again = vigil_controller::server::start(&config).await.unwrap();
    assert!(
        gateway_handshake(again.grpc_addr.port(), own())
            .await
            .is_err(),
        "revoked after a restart"
    );
    again.shutdown().await.unwrap();
}
