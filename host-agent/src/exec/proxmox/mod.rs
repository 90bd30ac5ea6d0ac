//! The Proxmox exec backend (docs/inventory.md): `lxc:V` runs `pct exec V -- sh -c CMD`
//! and `lxc:V/docker:C` runs `pct exec V -- docker exec C sh -c CMD`, both supervised
//! exactly like a host command; `vm:V` runs `qm guest exec` ([`guest`]). argv is always a
//! list, never a local shell line. Before anything starts, a guest (or container) that does
//! not exist or is not running is refused with `NOT_FOUND`.

mod guest;
pub mod parse;
mod tools;

pub use guest::{GuestExecResult, parse_guest_exec};
pub use tools::{Captured, MissingTool, ProxmoxTools, TOOL_OUTPUT_CAP, TOOL_TIMEOUT, capture};

use super::{Backend, ExecError, Outcome, Run, supervise};
use crate::guard::{Refusal, RejectCode};
use futures_util::future::BoxFuture;
use std::process::Command;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use vigil_proto::agent::v1::exec_event::Kind;
use vigil_shared::ids::ExecTarget;

/// Runs commands in the LXCs and VMs of this node and in Docker containers inside LXCs.
#[derive(Debug, Clone)]
pub struct ProxmoxBackend {
    tools: Arc<ProxmoxTools>,
}

impl ProxmoxBackend {
    pub fn new(tools: Arc<ProxmoxTools>) -> Self {
        ProxmoxBackend { tools }
    }

    async fn run_now(&self, run: Run<'_>) -> Result<Outcome, Refusal> {
        let cancel = run.cancel.clone();
        match run.target {
            ExecTarget::Lxc(vmid) => {
                self.require_running(Guest::Lxc, *vmid, &cancel).await?;
                let vmid = vmid.to_string();
                let argv = ["exec", &vmid, "--", "sh", "-c", run.command];
                let command = ProxmoxTools::command(&self.tools.pct, &argv);
                supervised(run, command).await
            }
            ExecTarget::LxcDocker { vmid, container } => {
                self.require_running(Guest::Lxc, *vmid, &cancel).await?;
                self.require_container(*vmid, container, &cancel).await?;
                let vmid = vmid.to_string();
                let argv = [
                    "exec",
                    &vmid,
                    "--",
                    "docker",
                    "exec",
                    container,
                    "sh",
                    "-c",
                    run.command,
                ];
                let command = ProxmoxTools::command(&self.tools.pct, &argv);
                supervised(run, command).await
            }
            ExecTarget::Vm(vmid) => {
                self.require_running(Guest::Vm, *vmid, &cancel).await?;
                self.require_agent(*vmid, &cancel).await?;
                Ok(guest::run(&self.tools.qm, *vmid, run).await)
            }
            other => Err(Refusal {
                code: RejectCode::NotFound,
                reason: format!("the Proxmox backend cannot reach {other}"),
            }),
        }
    }

    /// `pct status V` / `qm status V`: the guest exists and says `status: running`.
    async fn require_running(
        &self,
        guest: Guest,
        vmid: u32,
        cancel: &CancellationToken,
    ) -> Result<(), Refusal> {
        let (program, tool, label) = match guest {
            Guest::Lxc => (&self.tools.pct, "pct", "LXC"),
            Guest::Vm => (&self.tools.qm, "qm", "VM"),
        };
        let vmid_text = vmid.to_string();
        let what = format!("{tool} status {vmid}");
        let got = ProxmoxTools::call(program, &["status", &vmid_text], cancel.clone()).await;
        let out = answer(got, &what, &format!("{label} {vmid}"))?;
        let status = String::from_utf8_lossy(&out)
            .lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix("status:")
                    .map(|s| s.trim().to_owned())
            })
            .unwrap_or_default();
        if status == "running" {
            Ok(())
        } else {
            let status = if status.is_empty() {
                "unknown"
            } else {
                &status
            };
            Err(not_found(format!(
                "{label} {vmid} is not running (status: {status})"
            )))
        }
    }

    /// `qm config V` enables the QEMU guest agent.
    async fn require_agent(&self, vmid: u32, cancel: &CancellationToken) -> Result<(), Refusal> {
        let vmid_text = vmid.to_string();
        let got = ProxmoxTools::call(&self.tools.qm, &["config", &vmid_text], cancel.clone()).await;
        let out = answer(got, &format!("qm config {vmid}"), &format!("VM {vmid}"))?;
        if parse::config(&String::from_utf8_lossy(&out)).agent {
            Ok(())
        } else {
            Err(not_found(format!(
                "VM {vmid} has no QEMU guest agent enabled (agent: 1 in its config)"
            )))
        }
    }

    /// `docker container inspect` inside the LXC: the container exists and is running.
    async fn require_container(
        &self,
        vmid: u32,
        container: &str,
        cancel: &CancellationToken,
    ) -> Result<(), Refusal> {
        if !container_name_ok(container) {
            return Err(not_found(format!(
                "{container:?} is not a Docker container name or id"
            )));
        }
        let vmid_text = vmid.to_string();
        let argv = [
            "exec",
            &vmid_text,
            "--",
            "docker",
            "container",
            "inspect",
            "--format",
            "{{.State.Status}}",
            container,
        ];
        let got = ProxmoxTools::call(&self.tools.pct, &argv, cancel.clone()).await;
        let label = format!("container {container} in LXC {vmid}");
        let out = answer(
            got,
            &format!("pct exec {vmid} -- docker container inspect"),
            &label,
        )?;
        let state = String::from_utf8_lossy(&out).trim().to_owned();
        if state == "running" {
            Ok(())
        } else {
            Err(not_found(format!(
                "{label} is not running (state: {state})"
            )))
        }
    }
}

impl Backend for ProxmoxBackend {
    fn run<'a>(&'a self, run: Run<'a>) -> BoxFuture<'a, Result<Outcome, Refusal>> {
        Box::pin(self.run_now(run))
    }
}

#[derive(Debug, Clone, Copy)]
enum Guest {
    Lxc,
    Vm,
}

fn not_found(reason: String) -> Refusal {
    Refusal {
        code: RejectCode::NotFound,
        reason,
    }
}

/// A pre-check's stdout; a tool that says no (non-zero exit) means `NOT_FOUND` with its
/// message, a tool that could not answer means `EXECUTION_FAILED`.
fn answer(got: Result<Captured, ExecError>, what: &str, label: &str) -> Result<Vec<u8>, Refusal> {
    let failed = |reason: String| Refusal {
        code: RejectCode::ExecutionFailed,
        reason,
    };
    let got = got.map_err(|e| failed(format!("`{what}` could not run: {e}")))?;
    match got.exit_code {
        Some(0) if !got.truncated => Ok(got.stdout),
        Some(code) if code != 0 && !got.timed_out && !got.cancelled => {
            Err(not_found(format!("{label}: {}", got.message())))
        }
        _ => Err(failed(
            got.success(what)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default(),
        )),
    }
}

/// Docker container names (`[a-zA-Z0-9][a-zA-Z0-9_.-]*`) and ids; nothing that could be
/// taken for an option.
fn container_name_ok(name: &str) -> bool {
    name.len() <= 256
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// [`supervise`] the command, relaying its events. `supervise` announces a process that
/// did not start with a `Rejected` event; that one is turned into the `Err` the [`Backend`]
/// contract asks for instead of being sent.
async fn supervised(run: Run<'_>, command: Command) -> Result<Outcome, Refusal> {
    let (tx, mut rx) = mpsc::channel(1);
    let (id, limits, cancel, events) = (run.request_id, run.limits, run.cancel, run.events);
    let supervised = async move { supervise(id, command, limits, cancel, &tx).await };
    let relay = async move {
        let mut refusal = None;
        while let Some(event) = rx.recv().await {
            if let Some(Kind::Rejected(r)) = &event.kind {
                refusal = Some(Refusal {
                    code: RejectCode::ExecutionFailed,
                    reason: r.reason.clone(),
                });
            } else if events.send(event).await.is_err() {
                break;
            }
        }
        refusal
    };
    match tokio::join!(supervised, relay) {
        (Some(outcome), _) => Ok(outcome),
        (None, refusal) => Err(refusal.unwrap_or_else(|| Refusal {
            code: RejectCode::ExecutionFailed,
            reason: "the command did not start".to_owned(),
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_names_that_could_be_options_are_refused() {
        for ok in ["media-jellyfin-1", "689b21f1c3ca", "a", "web_1.blue"] {
            assert!(container_name_ok(ok), "{ok}");
        }
        for bad in [
            "",
            "-it",
            "--privileged",
            "a b",
            "a;b",
            "a/b",
            "$(x)",
            ".hidden",
        ] {
            assert!(!container_name_ok(bad), "{bad}");
        }
    }

    #[test]
    fn pre_check_answers_map_to_refusal_codes() {
        let ok = Captured {
            exit_code: Some(0),
            stdout: b"status: running\n".to_vec(),
            ..Captured::default()
        };
        assert_eq!(
            answer(Ok(ok), "pct status 1", "LXC 1").unwrap(),
            b"status: running\n"
        );
        let missing = Captured {
            exit_code: Some(2),
            stderr: b"Configuration file 'nodes/delly/lxc/9.conf' does not exist\n".to_vec(),
            ..Captured::default()
        };
        let refusal = answer(Ok(missing), "pct status 9", "LXC 9").unwrap_err();
        assert_eq!(refusal.code, RejectCode::NotFound);
        assert_eq!(
            refusal.reason,
            "LXC 9: Configuration file 'nodes/delly/lxc/9.conf' does not exist"
        );
        let slow = Captured {
            signal: Some(9),
            timed_out: true,
            ..Captured::default()
        };
        let refusal = answer(Ok(slow), "pct status 9", "LXC 9").unwrap_err();
        assert_eq!(refusal.code, RejectCode::ExecutionFailed);
        assert!(
            refusal.reason.contains("did not finish"),
            "{}",
            refusal.reason
        );
        let refusal = answer(
            Err(ExecError::NotStarted("no such file".into())),
            "pct status 9",
            "LXC 9",
        )
        .unwrap_err();
        assert_eq!(refusal.code, RejectCode::ExecutionFailed);
    }
}
