//! A real `vigil-controller serve` process on 127.0.0.1.

use crate::api::Api;
use crate::process::{Proc, bin, free_port, run, wait_until};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use tempfile::TempDir;

/// How to start a controller.
#[derive(Debug, Clone, Default)]
pub struct ControllerOptions {
    /// Enable `POST /api/raw-exec` so tests can send the agent requests the controller
    /// itself would never send.
    pub raw_exec: bool,
    /// Extra `serve` arguments.
    pub extra_args: Vec<String>,
    /// The HTTP API's port (a free one when `None`).
    pub http_port: Option<u16>,
    /// The agent gateway's port (a free one when `None`).
    pub grpc_port: Option<u16>,
}

/// A running controller with its own data directory and ports.
#[derive(Debug)]
pub struct Controller {
    // Fields drop in order: the process (and its log) before the data directory.
    proc: Option<Proc>,
    dir: TempDir,
    pub http_port: u16,
    pub grpc_port: u16,
    options: ControllerOptions,
    starts: u32,
    pub api: Api,
}

impl Controller {
    /// Start a controller on free ports and wait until its HTTP API answers.
    pub async fn start(options: ControllerOptions) -> Controller {
        let dir = tempfile::Builder::new()
            .prefix("vigil-ctrl-")
            .tempdir()
            .expect("tempdir");
        let http_port = options.http_port.unwrap_or_else(free_port);
        let grpc_port = options.grpc_port.unwrap_or_else(free_port);
        let api = Api::new(format!("http://127.0.0.1:{http_port}"), String::new());
        let mut c = Controller {
            dir,
            http_port,
            grpc_port,
            options,
            proc: None,
            starts: 0,
            api,
        };
        c.restart().await;
        c
    }

    /// The controller's process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.proc.as_ref().map(|p| p.child.id())
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        self.dir.path()
    }

    /// `https://127.0.0.1:<grpc port>`, the URL agents join.
    pub fn gateway_url(&self) -> String {
        format!("https://127.0.0.1:{}", self.grpc_port)
    }

    /// Kill the process with SIGKILL (no goodbye, no clean-up) and wait for it.
    pub fn kill(&mut self) {
        if let Some(mut p) = self.proc.take() {
            let _ = p.child.kill();
            let _ = p.child.wait();
        }
    }

    /// Stop the process with SIGTERM and give it `grace` to finish (a replica drains)
    /// before SIGKILL.
    pub fn stop_within(&mut self, grace: Duration) {
        if let Some(mut p) = self.proc.take() {
            p.stop_within(grace);
        }
    }

    /// Stop the process (SIGTERM, then SIGKILL).
    pub fn stop(&mut self) {
        if let Some(mut p) = self.proc.take() {
            p.stop();
        }
    }

    /// True while the process runs.
    pub fn alive(&mut self) -> bool {
        self.proc.as_mut().is_some_and(Proc::alive)
    }

    /// Start (again) with the same data directory and ports.
    pub async fn restart(&mut self) {
        self.stop();
        self.starts += 1;
        let mut cmd = Command::new(bin("vigil-controller"));
        cmd.arg("serve")
            .arg("--data-dir")
            .arg(self.dir.path())
            .arg("--http-listen")
            .arg(format!("127.0.0.1:{}", self.http_port))
            .arg("--grpc-listen")
            .arg(format!("127.0.0.1:{}", self.grpc_port))
            .env("RUST_LOG", "info,vigil_controller=debug");
        if self.options.raw_exec {
            cmd.arg("--test-raw-exec");
        }
        // Patrol runs only in the tests that ask for it: its reads would show up in the
        // audit trails and agent queues other tests count.
        if !self
            .options
            .extra_args
            .iter()
            .any(|a| a == "--patrol" || a.starts_with("--patrol="))
        {
            cmd.arg("--patrol=false");
        }
        cmd.args(&self.options.extra_args);
        let log = self
            .dir
            .path()
            .join(format!("controller-{}.log", self.starts));
        self.proc = Some(Proc::spawn(&mut cmd, log));
        let token_path = self.dir.path().join("admin.token");
        let health = format!("http://127.0.0.1:{}/healthz", self.http_port);
        let ready = wait_until(Duration::from_secs(30), || {
            let health = health.clone();
            let token_path = token_path.clone();
            async move {
                token_path.exists()
                    && reqwest::get(&health)
                        .await
                        .map(|r| r.status().is_success())
                        .unwrap_or(false)
            }
        })
        .await;
        let output = self.proc.as_ref().map(Proc::output).unwrap_or_default();
        assert!(ready, "controller did not become ready:\n{output}");
        let token = std::fs::read_to_string(&token_path).expect("admin.token");
        self.api = Api::new(
            format!("http://127.0.0.1:{}", self.http_port),
            token.trim().to_owned(),
        );
    }

    /// The controller's log so far.
    pub fn log(&self) -> String {
        self.proc.as_ref().map(Proc::output).unwrap_or_default()
    }

    /// Run a `vigil-controller` subcommand against this data directory.
    pub fn cli(&self, args: &[&str]) -> (i32, String, String) {
        run(Command::new(bin("vigil-controller"))
            .args(args)
            .arg("--data-dir")
            .arg(self.dir.path()))
    }

    /// A new API token with `role` (`viewer`, `operator`, `admin`) named `name`.
    pub fn create_api_token(&self, name: &str, role: &str) -> String {
        let (code, out, err) = self.cli(&["apitoken", "create", "--role", role, "--name", name]);
        assert_eq!(code, 0, "{out}{err}");
        out.lines().last().unwrap_or_default().trim().to_owned()
    }

    /// `token create` with the given options; returns the token (the last stdout line).
    pub fn create_token(&self, extra: &[&str]) -> String {
        let mut args = vec!["token", "create"];
        args.extend_from_slice(extra);
        let (code, out, err) = self.cli(&args);
        assert_eq!(code, 0, "token create failed: {out}{err}");
        out.lines().last().expect("token line").trim().to_owned()
    }

    /// `ca show`.
    pub fn ca_fingerprint(&self) -> String {
        let (code, out, err) = self.cli(&["ca", "show"]);
        assert_eq!(code, 0, "ca show failed: {out}{err}");
        out.trim().to_owned()
    }

    /// The controller's grant-signing key.
    pub fn grant_key(&self) -> vigil_shared::grant::GrantSigningKey {
        let text = std::fs::read_to_string(self.dir.path().join("grant.key")).expect("grant.key");
        vigil_controller::pki::GrantKey::parse(&text)
            .expect("grant.key")
            .signing_key()
            .clone()
    }

    /// The CA certificate path.
    pub fn ca_pem(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }
}
