//! Real `vigil-agent` processes: join, run, status.

use crate::controller::Controller;
use crate::process::{Proc, bin, run};
use std::path::{Path, PathBuf};
use std::process::Command;
use tempfile::TempDir;

/// How to run an agent.
#[derive(Debug, Clone, Default)]
pub struct AgentOptions {
    pub read_only: bool,
    /// Lines of the agent's TOML config file, if any.
    pub config: Option<String>,
    /// Extra environment of the agent process (for example a `PATH` with fixtures first).
    pub env: Vec<(String, String)>,
    /// Extra `token create` options for the join token (for example `--label k=v`).
    pub token_args: Vec<String>,
    /// The `vigil-agent` binary to run; the built one when `None`.
    pub binary: Option<PathBuf>,
}

/// An enrolled agent's state directory.
#[derive(Debug)]
pub struct AgentState {
    dir: TempDir,
    pub id: String,
}

impl AgentState {
    /// A state directory `dir` that holds the identity `id` (enrolled by the caller).
    pub fn new(dir: TempDir, id: String) -> AgentState {
        AgentState { dir, id }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// A running agent.
#[derive(Debug)]
pub struct Agent {
    // Fields drop in order: the process (and its log) before the state directory.
    proc: Option<Proc>,
    pub state: AgentState,
    runs: u32,
}

/// `vigil-agent join` against a controller with a fresh state directory.
pub fn join(ctrl: &Controller, token: &str, state_dir: &Path) -> (i32, String, String) {
    run(Command::new(bin("vigil-agent"))
        .args([
            "join",
            "--url",
            &ctrl.gateway_url(),
            "--token",
            token,
            "--ca-fingerprint",
            &ctrl.ca_fingerprint(),
        ])
        .arg("--state-dir")
        .arg(state_dir))
}

impl Agent {
    /// [`Agent::join`], then wait (30 s at most) until the controller lists it as connected;
    /// fails the test with the agent's log otherwise.
    pub async fn join_connected(ctrl: &Controller, options: AgentOptions) -> Agent {
        let agent = Agent::join(ctrl, options).await;
        let id = agent.state.id.clone();
        let connected = crate::wait_until(std::time::Duration::from_secs(30), || {
            ctrl.api.connected(&id)
        })
        .await;
        assert!(
            connected,
            "agent never connected
{}",
            agent.log()
        );
        agent
    }

    /// Enroll with a new single-use token and start `vigil-agent run`.
    pub async fn join(ctrl: &Controller, options: AgentOptions) -> Agent {
        let token_args: Vec<&str> = options.token_args.iter().map(String::as_str).collect();
        let token = ctrl.create_token(&token_args);
        let dir = tempfile::Builder::new()
            .prefix("vigil-agent-")
            .tempdir()
            .expect("tempdir");
        let (code, out, err) = join(ctrl, &token, dir.path());
        assert_eq!(code, 0, "join failed:\n{out}\n{err}");
        let identity: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("identity.json")).expect("identity.json"),
        )
        .expect("json");
        let id = identity["agent_id"].as_str().expect("agent_id").to_owned();
        let mut agent = Agent {
            state: AgentState { dir, id },
            proc: None,
            runs: 0,
        };
        agent.start(&options);
        agent
    }

    /// Start `vigil-agent run` on a state directory the caller enrolled.
    pub fn run_enrolled(state: AgentState, options: &AgentOptions) -> Agent {
        let mut agent = Agent {
            state,
            proc: None,
            runs: 0,
        };
        agent.start(options);
        agent
    }

    /// Start (again) `vigil-agent run` on the state directory.
    pub fn start(&mut self, options: &AgentOptions) {
        self.stop();
        self.runs += 1;
        let binary = options.binary.clone().unwrap_or_else(|| bin("vigil-agent"));
        let mut cmd = Command::new(binary);
        cmd.arg("run")
            .arg("--state-dir")
            .arg(self.state.path())
            .env("RUST_LOG", "info,vigil_agent=debug");
        if options.read_only {
            cmd.arg("--read-only");
        }
        for (key, value) in &options.env {
            cmd.env(key, value);
        }
        if let Some(config) = &options.config {
            let path = self.state.path().join("test-config.toml");
            std::fs::write(&path, config).expect("config");
            cmd.arg("--config").arg(path);
        }
        let log = self.state.path().join(format!("agent-{}.log", self.runs));
        self.proc = Some(Proc::spawn(&mut cmd, log));
    }

    /// Stop the agent process.
    pub fn stop(&mut self) {
        if let Some(mut p) = self.proc.take() {
            p.stop();
        }
    }

    /// True while the agent process runs.
    pub fn alive(&mut self) -> bool {
        self.proc.as_mut().is_some_and(Proc::alive)
    }

    /// The agent process's id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.proc.as_ref().map(|p| p.child.id())
    }

    /// The exit code, once the process has ended.
    pub fn exit_code(&mut self) -> Option<i32> {
        self.proc
            .as_mut()
            .and_then(|p| p.child.try_wait().ok().flatten())
            .and_then(|s| s.code())
    }

    /// The agent's log so far.
    pub fn log(&self) -> String {
        self.proc.as_ref().map(Proc::output).unwrap_or_default()
    }

    /// A file of the state directory.
    pub fn file(&self, name: &str) -> PathBuf {
        self.state.path().join(name)
    }
}
