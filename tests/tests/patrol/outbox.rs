//! The notification outbox: a delivery to a receiver that is down is retried with backoff
//! and its failures recorded, survives a controller restart, and arrives exactly once when
//! the receiver comes up. Channels made through the API are listed without their secret;
//! the configuration file's cannot be changed through it.

use std::time::Duration;

use serde_json::{Value, json};
use vigil_tests::{Controller, ControllerOptions, free_port, wait_until};

use super::Receiver;

fn alert(status: &str) -> Value {
    json!({
        "version": "4", "status": status, "receiver": "vigil", "groupLabels": {},
        "commonLabels": {}, "commonAnnotations": {}, "externalURL": "http://am",
        "alerts": [{
            "status": status,
            "labels": {"alertname": "BackupLate", "severity": "warning", "instance": "nowhere:9100"},
            "annotations": {"summary": "the nightly backup is late; DB_PASSWORD=hunter2hunter2"},
            "startsAt": "2026-11-27T01:00:00Z", "fingerprint": "aa11bb22cc33dd44"
        }]
    })
}

async fn deliveries(ctrl: &Controller, status: &str) -> Vec<Value> {
    let (code, body) = ctrl
        .api
        .get(&format!("/api/notify/deliveries?status={status}"))
        .await;
    assert_eq!(code, 200, "{body}");
    body["deliveries"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_waits_for_its_receiver_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("controller.toml");
    std::fs::write(
        &config,
        "[[notify_channels]]\nname = \"from-file\"\nkind = \"ntfy\"\nurl = \"http://127.0.0.1:9/x\"\nevents = [\"approval.needed\"]\n",
    )
    .unwrap();
    let mut ctrl = Controller::start(ControllerOptions {
        extra_args: vec!["--config".into(), config.display().to_string()],
        ..Default::default()
    })
    .await;
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/hook");
    let (code, body) = ctrl
        .api
        .post("/api/notify/channels", &json!({"name": "pager", "kind": "webhook", "url": url, "secret": "s3cret", "events": ["finding.new"]}))
        .await;
    assert_eq!(code, 201, "{body}");
    let (code, listed) = ctrl.api.get("/api/notify/channels").await;
    assert_eq!(code, 200);
    let names: Vec<&str> = listed["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["from-file", "pager"]);
    assert!(!listed.to_string().contains("s3cret"), "{listed}");
    let (code, body) = ctrl
        .api
        .post(
            "/api/notify/channels",
            &json!({"name": "from-file", "kind": "slack", "url": "http://x/"}),
        )
        .await;
    assert_eq!(code, 409, "{body}");
    assert_eq!(ctrl.api.delete("/api/notify/channels/from-file").await, 409);
    let (code, body) = ctrl
        .api
        .post(
            "/api/notify/channels",
            &json!({"name": "bad", "kind": "webhook", "url": "file:///etc/passwd"}),
        )
        .await;
    assert_eq!(code, 400, "{body}");

    // The receiver is down: the delivery fails, is recorded, and waits.
    let (code, report) = ctrl
        .api
        .post("/api/alerts/alertmanager", &alert("firing"))
        .await;
    assert_eq!(code, 200, "{report}");
    assert_eq!(report["firing"], 1);
    assert_eq!(report["unmatched"], 1, "no resource is named nowhere");
    let failed = wait_until(Duration::from_secs(30), || async {
        deliveries(&ctrl, "pending")
            .await
            .first()
            .is_some_and(|d| d["attempts"].as_i64() >= Some(1))
    })
    .await;
    assert!(failed, "no failed attempt\n{}", ctrl.log());
    let pending = deliveries(&ctrl, "pending").await.remove(0);
    assert_eq!(pending["last_error"], "cannot connect", "{pending}");

    ctrl.restart().await;
    let receiver = Receiver::start(port).await;
    let arrived = wait_until(Duration::from_secs(90), || async {
        !receiver.events("finding.new").is_empty()
    })
    .await;
    assert!(arrived, "never delivered\n{}", ctrl.log());
    tokio::time::sleep(Duration::from_secs(3)).await;
    let got = receiver.events("finding.new");
    assert_eq!(got.len(), 1, "delivered once");
    let message = got[0].json();
    assert_eq!(message["finding"]["check"], "alertmanager:BackupLate");
    let text = message["text"].as_str().unwrap();
    assert!(!text.contains("hunter2"), "secrets are redacted: {text}");
    assert_eq!(
        got[0].headers["x-vigil-signature"].to_str().unwrap(),
        vigil_controller::notify::deliver::signature("s3cret", &got[0].body)
    );
    let delivered = deliveries(&ctrl, "delivered").await;
    assert_eq!(delivered.len(), 1);
    assert!(
        delivered[0]["attempts"].as_i64() >= Some(2),
        "{delivered:?}"
    );

    // The channel's filter: a resolve is not an event it wants.
    let (code, _) = ctrl
        .api
        .post("/api/alerts/alertmanager", &alert("resolved"))
        .await;
    assert_eq!(code, 200);
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(receiver.events("finding.resolved").is_empty());
    assert_eq!(ctrl.api.delete("/api/notify/channels/pager").await, 204);
    assert_eq!(ctrl.api.delete("/api/notify/channels/pager").await, 404);
}
