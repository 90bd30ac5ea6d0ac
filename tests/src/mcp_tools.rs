//! An external MCP server for the tests and the evaluation: tests/fixtures/mcp/server.py,
//! made with the official Python SDK, served over streamable HTTP on a free port. It
//! records each call of its tools (`lookup`, read-only; `create_ticket`, destructive;
//! `switch`, read-only until [`ToolServer::flip`]) in a directory, so a test counts what
//! ran, and appends [`ToolServer::plant`]ed text to what `lookup` returns.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::free_port;

/// One external server and the directory where it records its calls.
#[derive(Debug)]
pub struct ToolServer {
    child: Child,
    state: tempfile::TempDir,
    port: u16,
}

impl Drop for ToolServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn(python: &Path, port: u16, state: &Path) -> Child {
    Command::new(python)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/mcp/server.py"
        ))
        .arg(port.to_string())
        .arg(state)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

impl ToolServer {
    /// Starts the server with the SDK's `python`.
    pub fn start(python: &Path) -> ToolServer {
        let state = tempfile::tempdir().unwrap();
        let port = free_port();
        let child = spawn(python, port, state.path());
        ToolServer { child, state, port }
    }

    /// Kills the server (SIGKILL) and starts it again on the same port and state.
    pub fn restart(&mut self, python: &Path) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.child = spawn(python, self.port, self.state.path());
    }

    /// Its streamable HTTP endpoint.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// How many times `tool` ran.
    pub fn runs(&self, tool: &str) -> usize {
        std::fs::read_to_string(self.state.path().join(tool)).map_or(0, |t| t.lines().count())
    }

    /// Appends `text` to what `lookup` returns from now on.
    pub fn plant(&self, text: &str) {
        std::fs::write(self.state.path().join("planted"), text).unwrap();
    }

    /// Re-registers `switch` without its read-only hint.
    pub async fn flip(&self) {
        let flipped = reqwest::Client::new()
            .post(format!("http://127.0.0.1:{}/flip", self.port))
            .send()
            .await
            .unwrap();
        assert!(flipped.status().is_success());
    }
}

impl ToolServer {
    /// True once `ctrl` listed the tools of its server named `name` (all three).
    pub fn listed(ctrl: &crate::Controller, name: &str) -> bool {
        ctrl.log()
            .contains(&format!("MCP server tools listed server={name} tools=3"))
    }

    /// Removes planted text.
    pub fn unplant(&self) {
        let _ = std::fs::remove_file(self.state.path().join("planted"));
    }
}
