//! A controller started in this process (`server::start`) on 127.0.0.1:0 with its own
//! data directory, for the controller suite (`tests/tests/controller`), and real
//! TLS clients of its gateway (a fingerprint-pinned enrollment client, agent mTLS clients,
//! a scripted agent on the AgentLink stream) built with rustls and rcgen at run time.

pub mod clients;
pub mod fake_agent;

use std::collections::BTreeMap;
use std::time::Duration;

use tempfile::TempDir;
use vigil_controller::config::Config;
use vigil_controller::pki::join_token;
use vigil_controller::server::{self, RunningController};

/// A running controller and the directory it lives in.
#[derive(Debug)]
pub struct TestController {
    /// The controller's handles and bound addresses.
    pub running: RunningController,
    /// Holds `data/` (the data directory).
    pub dir: TempDir,
    /// The admin bearer token from `data/admin.token`.
    pub admin_token: String,
}

impl TestController {
    /// Starts a controller on ephemeral loopback ports.
    pub async fn start(raw_exec: bool, heartbeat: Duration) -> TestController {
        Self::start_with(|config| Config {
            heartbeat,
            raw_exec,
            ..config
        })
        .await
    }

    /// Starts a controller on ephemeral loopback ports with the configuration `adjust`
    /// makes of the local defaults.
    pub async fn start_with(adjust: impl FnOnce(Config) -> Config) -> TestController {
        let dir = tempfile::tempdir().unwrap();
        let config = adjust(Config::local(dir.path().join("data")));
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
