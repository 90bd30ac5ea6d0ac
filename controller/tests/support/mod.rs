//! Shared support of the controller's integration tests: a controller on 127.0.0.1:0 with
//! its own data directory, and real TLS clients (a fingerprint-pinned enrollment client,
//! agent mTLS clients, raw handshake probes) built with rustls and rcgen at run time.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod clients;
pub mod fake_agent;

use std::collections::BTreeMap;
use std::time::Duration;

use tempfile::TempDir;
use vigil_controller::config::Config;
use vigil_controller::pki::join_token;
use vigil_controller::server::{self, RunningController};

/// A running controller and the directory it lives in.
pub struct TestController {
    pub running: RunningController,
    pub dir: TempDir,
    pub admin_token: String,
}

impl TestController {
    /// Starts a controller on ephemeral loopback ports.
    pub async fn start(raw_exec: bool, heartbeat: Duration) -> TestController {
        let dir = tempfile::tempdir().unwrap();
        let config = Config {
            heartbeat,
            raw_exec,
            ..Config::local(dir.path().join("data"))
        };
        let running = server::start(&config).await.unwrap();
        let admin_token = std::fs::read_to_string(dir.path().join("data/admin.token"))
            .unwrap()
            .trim()
            .to_owned();
        TestController {
            running,
            dir,
            admin_token,
        }
    }

    /// The CA certificate (PEM path).
    pub fn ca_pem_path(&self) -> std::path::PathBuf {
        self.dir.path().join("data/ca.pem")
    }

    /// `http://127.0.0.1:<port>`.
    pub fn http_url(&self) -> String {
        format!("http://{}", self.running.http_addr)
    }

    /// Creates a join token with `uses` uses valid for `ttl_s` seconds.
    pub async fn token(&self, uses: u32, ttl_s: i64, labels: &[(&str, &str)]) -> String {
        let token = join_token::generate().unwrap();
        let labels: BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let now = vigil_controller::clock::unix_now();
        self.running
            .agents
            .store()
            .insert_join_token(&token.hash, &labels, uses, now, now + ttl_s)
            .await
            .unwrap();
        token.token
    }

    /// An HTTP request builder with the admin token.
    pub fn api(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        reqwest::Client::new()
            .request(method, format!("{}{path}", self.http_url()))
            .bearer_auth(&self.admin_token)
    }

    /// Stops the controller.
    pub async fn stop(self) {
        self.running.shutdown().await.unwrap();
    }
}

/// Polls `check` every 50 ms until it is true or `timeout` passes.
pub async fn eventually<F, Fut>(timeout: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if check().await {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
