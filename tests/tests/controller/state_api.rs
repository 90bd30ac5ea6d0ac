//! Roles, approvals, audit, readiness and metrics over real HTTP, on SQLite and (when
//! `VIGIL_TEST_DATABASE_URL` is set; required under `CI`) on PostgreSQL, each in a
//! private schema.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use reqwest::Method;
use serde_json::{Value, json};
use vigil_controller::api::Role;
use vigil_controller::clock::unix_now;
use vigil_controller::config::Config;
use vigil_controller::server::{self, RunningController};
use vigil_controller::store::Store;
use vigil_controller::store::approvals::NewApproval;
use vigil_tests::db::{self, Cleanup};

/// A controller on one database, restartable.
struct Ctrl {
    running: Option<RunningController>,
    data_dir: PathBuf,
    database_url: Option<String>,
    admin: String,
}

impl Ctrl {
    async fn start(data_dir: PathBuf, database_url: Option<String>) -> Ctrl {
        let config = Config {
            database_url: database_url.clone(),
            ..Config::local(&data_dir)
        };
        let running = server::start(&config).await.unwrap();
        let admin = std::fs::read_to_string(data_dir.join("admin.token"))
            .unwrap()
            .trim()
            .to_owned();
        Ctrl {
            running: Some(running),
            data_dir,
            database_url,
            admin,
        }
    }

    fn store(&self) -> &Store {
        self.running.as_ref().unwrap().agents.store()
    }

    async fn restart(mut self) -> Ctrl {
        self.running.take().unwrap().shutdown().await.unwrap();
        Ctrl::start(self.data_dir.clone(), self.database_url.clone()).await
    }

    async fn token(&self, role: Role) -> String {
        let name = format!("{role}-token");
        self.store()
            .create_api_token(&name, role, unix_now())
            .await
            .unwrap()
            .0
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<&str>,
    ) -> (u16, Value) {
        let addr = self.running.as_ref().unwrap().http_addr;
        let mut request = reqwest::Client::new()
            .request(method, format!("http://{addr}{path}"))
            .header("content-type", "application/json")
            .header("accept", "application/json");
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.body(body.to_owned());
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    async fn approval(&self, ttl_s: i64, created: i64) -> String {
        let new = NewApproval {
            command: "systemctl restart nginx".into(),
            agent: Some("a1".into()),
            risk: "write".into(),
            reasons: vec!["restarts a service".into()],
            created_by: "assistant".into(),
            ttl_s,
            ..NewApproval::default()
        };
        self.store()
            .create_approval(&new, created)
            .await
            .unwrap()
            .id
    }

    async fn stop(mut self) {
        self.running.take().unwrap().shutdown().await.unwrap();
    }
}

/// A route, its body, and the status for a viewer, an operator and an admin.
type Case<'a> = (Method, &'a str, Option<&'a str>, u16, u16, u16);

fn code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or_default()
}

/// Each backend: (data dir guard, database URL, cleanup).
async fn backends() -> Vec<(tempfile::TempDir, Option<String>, Option<Cleanup>)> {
    let mut all = vec![(tempfile::tempdir().unwrap(), None, None)];
    if let Some((url, cleanup)) = db::pg_schema_url().await.unwrap() {
        all.push((tempfile::tempdir().unwrap(), Some(url), Some(cleanup)));
    }
    all
}

#[tokio::test(flavor = "multi_thread")]
async fn every_route_checks_its_role() {
    for (tmp, url, cleanup) in backends().await {
        let ctrl = Ctrl::start(tmp.path().join("data"), url).await;
        let viewer = ctrl.token(Role::Viewer).await;
        let operator = ctrl.token(Role::Operator).await;
        let admin = ctrl.admin.clone();
        let unknown_agent = "/api/agents/6f1c1f4e-9f57-4d3e-8d8e-2b1b0b0b0b0b";
        let revoke = format!("{unknown_agent}/revoke");
        let cases: [Case<'_>; 6] = [
            (Method::GET, "/api/agents", None, 200, 200, 200),
            (Method::GET, unknown_agent, None, 404, 404, 404),
            (Method::GET, "/api/ai/approvals", None, 200, 200, 200),
            (
                Method::POST,
                "/api/ai/approvals/nope/approve",
                None,
                403,
                404,
                404,
            ),
            (Method::POST, &revoke, None, 403, 403, 404),
            (Method::GET, "/api/audit", None, 403, 403, 200),
        ];
        for (method, path, body, v, o, a) in cases {
            for (token, want) in [(&viewer, v), (&operator, o), (&admin, a)] {
                let (status, answer) = ctrl.call(method.clone(), path, Some(token), body).await;
                assert_eq!(status, want, "{method} {path}: {answer}");
                if want == 403 {
                    assert_eq!(code(&answer), "FORBIDDEN");
                }
            }
            let (status, _) = ctrl.call(method.clone(), path, None, body).await;
            assert_eq!(status, 401, "{method} {path} without a token");
            let (status, _) = ctrl
                .call(method.clone(), path, Some("vat_wrong"), body)
                .await;
            assert_eq!(status, 401, "{method} {path} with a wrong token");
        }
        // POST /api/exec is a viewer route (refused by the classifier, not by the role).
        let body = json!({"agent": "x", "command": "rm -rf /"}).to_string();
        let (status, answer) = ctrl
            .call(Method::POST, "/api/exec", Some(&viewer), Some(&body))
            .await;
        assert_eq!((status, code(&answer)), (403, "POLICY_BLOCKED"));
        // A revoked token is refused.
        let tokens = ctrl.store().list_api_tokens().await.unwrap();
        let id = tokens
            .iter()
            .find(|t| t.name == "viewer-token")
            .unwrap()
            .id
            .clone();
        ctrl.store()
            .revoke_api_token(&id, unix_now())
            .await
            .unwrap();
        let (status, _) = ctrl
            .call(Method::GET, "/api/agents", Some(&viewer), None)
            .await;
        assert_eq!(status, 401);
        ctrl.stop().await;
        if let Some(c) = cleanup {
            c.finish().await.unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn approvals_are_decided_once_expire_and_survive_restart() {
    for (tmp, url, cleanup) in backends().await {
        let ctrl = Ctrl::start(tmp.path().join("data"), url).await;
        let operator = ctrl.token(Role::Operator).await;
        let id = ctrl.approval(600, unix_now()).await;
        let path = format!("/api/ai/approvals/{id}/approve");
        let mut racers = Vec::new();
        for _ in 0..50 {
            let (addr, token, path) = (
                ctrl.running.as_ref().unwrap().http_addr,
                operator.clone(),
                path.clone(),
            );
            racers.push(tokio::spawn(async move {
                let response = reqwest::Client::new()
                    .post(format!("http://{addr}{path}"))
                    .bearer_auth(token)
                    .send()
                    .await
                    .unwrap();
                let status = response.status().as_u16();
                (status, response.json::<Value>().await.unwrap())
            }));
        }
        let mut statuses = Vec::new();
        for racer in racers {
            let (status, body) = racer.await.unwrap();
            if status == 409 {
                assert_eq!(code(&body), "CONFLICT");
            }
            statuses.push(status);
        }
        assert_eq!(
            statuses.iter().filter(|s| **s == 200).count(),
            1,
            "{statuses:?}"
        );
        assert_eq!(
            statuses.iter().filter(|s| **s == 409).count(),
            49,
            "{statuses:?}"
        );

        let old = ctrl.approval(10, unix_now() - 100).await;
        let (status, body) = ctrl
            .call(
                Method::POST,
                &format!("/api/ai/approvals/{old}/approve"),
                Some(&operator),
                None,
            )
            .await;
        assert_eq!((status, code(&body)), (410, "APPROVAL_EXPIRED"));
        let (_, expired) = ctrl
            .call(
                Method::GET,
                "/api/ai/approvals?status=expired",
                Some(&operator),
                None,
            )
            .await;
        assert_eq!(expired.as_array().unwrap().len(), 1);

        // Deny: body checks, then a denial with a reason.
        let denied = ctrl.approval(600, unix_now()).await;
        let deny = format!("/api/ai/approvals/{denied}/deny");
        for bad in ["{not json", r#"{"reason":"x","extra":1}"#, ""] {
            let (status, body) = ctrl
                .call(Method::POST, &deny, Some(&operator), Some(bad))
                .await;
            assert_eq!((status, code(&body)), (400, "INVALID_INPUT"), "{bad:?}");
        }
        let huge = json!({ "reason": "x".repeat(100_000) }).to_string();
        let (status, _) = ctrl
            .call(Method::POST, &deny, Some(&operator), Some(&huge))
            .await;
        assert_eq!(status, 413, "oversized");
        let (status, body) = ctrl
            .call(
                Method::POST,
                &deny,
                Some(&operator),
                Some(r#"{"reason":"not now"}"#),
            )
            .await;
        assert_eq!((status, body["status"].as_str()), (200, Some("denied")));

        // A pending approval survives a restart.
        let pending = ctrl.approval(600, unix_now()).await;
        let ctrl = ctrl.restart().await;
        let (_, list) = ctrl
            .call(
                Method::GET,
                "/api/ai/approvals?status=pending",
                Some(&operator),
                None,
            )
            .await;
        let ids: Vec<&str> = list
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|a| a["id"].as_str())
            .collect();
        assert_eq!(ids, [pending.as_str()]);

        // Audit: one approval, one denial.
        let (status, rows) = ctrl
            .call(Method::GET, "/api/audit?since=0", Some(&ctrl.admin), None)
            .await;
        assert_eq!(status, 200);
        let actions: Vec<&str> = rows
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["action"].as_str())
            .collect();
        assert_eq!(actions, ["approval.approve", "approval.deny"]);
        ctrl.stop().await;
        if let Some(c) = cleanup {
            c.finish().await.unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn audit_rows_verify_and_tampering_is_named() {
    let bin = vigil_tests::bin("vigil-controller");
    for (tmp, url, cleanup) in backends().await {
        let data = tmp.path().join("data");
        let ctrl = Ctrl::start(data.clone(), url.clone()).await;
        let viewer = ctrl.token(Role::Viewer).await;
        let body = json!({"agent": "x", "command": "rm -rf /"}).to_string();
        for _ in 0..3 {
            ctrl.call(Method::POST, "/api/exec", Some(&viewer), Some(&body))
                .await;
        }
        let (status, ready) = ctrl.call(Method::GET, "/readyz", None, None).await;
        assert_eq!((status, ready["status"].as_str()), (200, Some("ready")));
        let addr = ctrl.running.as_ref().unwrap().http_addr;
        let metrics = reqwest::get(format!("http://{addr}/metrics"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(
            metrics.contains("vigil_http_requests_total{route=\"/api/exec\",status=\"403\"} 3"),
            "{metrics}"
        );
        let (_, rows) = ctrl
            .call(Method::GET, "/api/audit?limit=10", Some(&ctrl.admin), None)
            .await;
        let rows = rows.as_array().unwrap().clone();
        assert_eq!(rows.len(), 3);
        assert_eq!(
            (rows[0]["actor"].as_str(), rows[0]["outcome"].as_str()),
            (Some("viewer-token"), Some("refused"))
        );
        let store = ctrl.store().clone();

        let verify = |url: &Option<String>| {
            let mut command = std::process::Command::new(&bin);
            command
                .args(["audit", "verify", "--data-dir"])
                .arg(&data)
                .env_remove("VIGIL_DATABASE_URL");
            if let Some(url) = url {
                command.args(["--database-url", url]);
            }
            let out = command.output().unwrap();
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
            )
        };
        let (code0, out) = verify(&url);
        assert_eq!(code0, Some(0), "{out}");
        assert!(out.contains("OK: 3"), "{out}");
        sqlx::query("UPDATE audit SET command = 'uptime' WHERE seq = 2")
            .execute(store.pool())
            .await
            .unwrap();
        let (code1, out) = verify(&url);
        assert_eq!(code1, Some(1));
        assert!(out.contains("row 2"), "{out}");
        sqlx::query("UPDATE audit SET command = 'rm -rf /' WHERE seq = 2")
            .execute(store.pool())
            .await
            .unwrap();
        sqlx::query("DELETE FROM audit WHERE seq = 1")
            .execute(store.pool())
            .await
            .unwrap();
        let (code1, out) = verify(&url);
        assert_eq!(code1, Some(1));
        assert!(out.contains("row 2") && out.contains("deleted"), "{out}");
        ctrl.stop().await;
        if let Some(c) = cleanup {
            c.finish().await.unwrap();
        }
    }
}
