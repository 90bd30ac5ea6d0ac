//! A real `vigil-fleet` process against a test controller, for the fleet suite.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::controller::Controller;
use crate::process::{Proc, bin};

/// A running simulator with its log (standard output and error together).
#[derive(Debug)]
pub struct FleetProcess {
    proc: Proc,
}

impl FleetProcess {
    /// Starts `vigil-fleet --agents N --state-dir DIR` against `ctrl`; with `token`, the
    /// controller's admin token is passed (without it, enrollment is impossible).
    pub fn start(
        ctrl: &Controller,
        state_dir: &Path,
        agents: usize,
        token: bool,
        log: &str,
    ) -> FleetProcess {
        let mut cmd = Command::new(bin("vigil-fleet"));
        cmd.arg("--url")
            .arg(ctrl.api.base())
            .arg("--agents")
            .arg(agents.to_string())
            .arg("--state-dir")
            .arg(state_dir)
            .env_remove("VIGIL_TOKEN")
            .env("RUST_LOG", "info");
        if token {
            cmd.arg("--token").arg(ctrl.api.token());
        }
        FleetProcess {
            proc: Proc::spawn(&mut cmd, state_dir.join(log)),
        }
    }

    /// The log so far.
    pub fn output(&self) -> String {
        self.proc.output()
    }

    /// How many times the exact line `connected N/N` was printed.
    pub fn all_connected_lines(&self, agents: usize) -> usize {
        let line = format!("connected {agents}/{agents}");
        self.output().lines().filter(|l| *l == line).count()
    }

    /// Waits until `connected N/N` was printed `times` times (or the process died).
    pub async fn wait_all_connected(
        &mut self,
        agents: usize,
        times: usize,
        timeout: Duration,
    ) -> bool {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline && self.proc.alive() {
            if self.all_connected_lines(agents) >= times {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        self.all_connected_lines(agents) >= times
    }

    /// The exit code once the process has ended.
    pub fn exit_code(&mut self) -> Option<i32> {
        self.proc
            .child
            .try_wait()
            .ok()
            .flatten()
            .and_then(|s| s.code())
    }

    /// SIGTERM, then the exit code (None when it had to be killed).
    pub fn terminate(&mut self) -> Option<i32> {
        let pid = self.proc.child.id().to_string();
        let _ = Command::new("kill").arg("-TERM").arg(pid).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.proc.child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.proc.stop();
        None
    }
}
