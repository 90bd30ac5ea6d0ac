//! The Findings tab: an alert's finding with its count in the header, its evidence on a
//! click, acknowledged by an operator, and the unattended budget.

use serde_json::json;

use super::browser::Browser;
use super::{DESKTOP, Env};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finding_is_counted_shown_and_acknowledged() {
    let env = Env::without_model().await;
    let name = env.host.hostname().await;
    let alert = json!({
        "version": "4", "status": "firing",
        "alerts": [{
            "status": "firing", "fingerprint": "0123456789abcdef",
            "labels": {"alertname": "ZpoolDegraded", "severity": "critical", "hostname": name},
            "annotations": {"summary": "pool tank is DEGRADED"},
            "startsAt": "2026-11-27T01:00:00Z"
        }]
    });
    let (code, body) = env
        .host
        .ctrl
        .api
        .post("/api/alerts/alertmanager", &alert)
        .await;
    assert_eq!(code, 200, "{body}");
    let Some(b) = Browser::start(&env.base(), DESKTOP.0, DESKTOP.1).await else {
        return;
    };
    b.sign_in(&env.token()).await;
    b.wait_text("[data-view=findings] .findings-count", "1")
        .await;
    b.click("[data-view=findings]").await;
    let row = b
        .wait_text(".finding .finding-summary", "pool tank is DEGRADED")
        .await;
    assert!(row.contains("DEGRADED"), "{row}");
    b.wait_text(".finding .finding-where", &name).await;
    b.wait_text(".budget", "Unattended model use").await;
    b.click(".finding .finding-head").await;
    b.wait_text(".finding .evidence", "alertname=ZpoolDegraded")
        .await;
    b.screenshot("findings-desktop").await;
    b.click(".finding .ack").await;
    b.wait_text(".finding-list", "No open findings").await;
    let (_, acked) = env
        .host
        .ctrl
        .api
        .get("/api/findings?status=acknowledged")
        .await;
    assert_eq!(acked["findings"][0]["acknowledged_by"], "admin", "{acked}");
    b.wait_js(
        "the header count to go",
        "return document.querySelector('[data-view=findings] .findings-count').hidden",
    )
    .await;
    b.close().await;
}
