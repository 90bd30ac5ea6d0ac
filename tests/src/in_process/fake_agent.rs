//! A scripted agent on a real AgentLink stream. It answers commands by their text:
//! `refuse` → `Rejected{POLICY_BLOCKED}`; `hang` → started, then nothing; `exit3` → exit
//! code 3; `killed` → signal 9; anything else prints `hello\n` (in two chunks) and `warn`
//! on stderr and exits 0. Cancels it receives are reported on a channel. A [`Script`]
//! other than `ByCommand` makes one agent of a fleet hang or refuse whatever it gets
//! (fan-out sends every agent the same command); [`join`] enrolls and connects one such
//! agent with its own host name and labels.

use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;
use vigil_proto::agent::v1::{
    ExecEvent, Finished, Rejected, Started, agent_message, controller_message, exec_event, finished,
};

use super::TestController;
use super::clients::{Enrolled, FakeAgent, connect, enroll, hello};
use crate::wait_until;

/// True when `GET /api/agents` shows `id` as connected.
pub async fn connected(ctrl: &TestController, id: &str) -> bool {
    let agents: Value = ctrl
        .api(reqwest::Method::GET, "/api/agents")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    agents
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["id"] == id && a["connected"] == true)
}

fn finished(status: finished::Status) -> exec_event::Kind {
    exec_event::Kind::Finished(Finished {
        status: Some(status),
        duration_ms: 7,
        truncated: false,
    })
}

/// How a scripted agent answers commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Script {
    /// By the command's text (see the module documentation).
    ByCommand,
    /// Started, then nothing, whatever the command.
    Hang,
    /// `Rejected{POLICY_BLOCKED}`, whatever the command.
    Refuse,
}

/// What a scripted agent reports to its test.
#[derive(Debug, Clone)]
pub struct Reports {
    /// The request id of every cancel it receives.
    pub cancels: mpsc::UnboundedSender<String>,
    /// The command of every request it receives.
    pub commands: Option<mpsc::UnboundedSender<String>>,
}

/// Expects the HelloAck, then answers every command (see the module documentation).
pub async fn respond(agent: FakeAgent, cancels: mpsc::UnboundedSender<String>) {
    let reports = Reports {
        cancels,
        commands: None,
    };
    respond_with(agent, Script::ByCommand, reports).await;
}

/// Expects the HelloAck, then answers every command as `script` says.
pub async fn respond_with(mut agent: FakeAgent, script: Script, reports: Reports) {
    let cancels = reports.cancels;
    let ack = agent.recv().await.unwrap().unwrap();
    assert!(
        matches!(ack.kind, Some(controller_message::Kind::HelloAck(_))),
        "{ack:?}"
    );
    while let Ok(Some(message)) = agent.inbound.message().await {
        match message.kind {
            Some(controller_message::Kind::ExecRequest(request)) => {
                let command = match script {
                    Script::ByCommand => request.command.clone(),
                    Script::Hang => "hang".to_owned(),
                    Script::Refuse => "refuse".to_owned(),
                };
                if let Some(commands) = &reports.commands {
                    let _ = commands.send(request.command.clone());
                }
                let event = |kind| {
                    agent_message::Kind::ExecEvent(ExecEvent {
                        request_id: request.request_id.clone(),
                        kind: Some(kind),
                    })
                };
                if command.contains("refuse") {
                    let rejected = Rejected {
                        code: "POLICY_BLOCKED".into(),
                        reason: "the agent says no".into(),
                    };
                    agent
                        .send(event(exec_event::Kind::Rejected(rejected)))
                        .await;
                    continue;
                }
                agent
                    .send(event(exec_event::Kind::Started(Started {})))
                    .await;
                if command.contains("hang") {
                    continue;
                }
                for chunk in [&b"hel"[..], b"lo\n"] {
                    agent
                        .send(event(exec_event::Kind::StdoutChunk(chunk.to_vec())))
                        .await;
                }
                agent
                    .send(event(exec_event::Kind::StderrChunk(b"warn".to_vec())))
                    .await;
                let status = if command.contains("exit3") {
                    finished::Status::ExitCode(3)
                } else if command.contains("killed") {
                    finished::Status::Signal(9)
                } else {
                    finished::Status::ExitCode(0)
                };
                agent.send(event(finished(status))).await;
            }
            Some(controller_message::Kind::Cancel(cancel)) => {
                let _ = cancels.send(cancel.request_id);
            }
            _ => {}
        }
    }
}

/// One scripted agent of a fleet: its id and what it reports.
#[derive(Debug)]
pub struct FleetAgent {
    /// The agent's id.
    pub id: String,
    /// The request ids of the cancels it received.
    pub cancels: mpsc::UnboundedReceiver<String>,
    /// The commands it received.
    pub commands: mpsc::UnboundedReceiver<String>,
}

/// Enrolls an agent with a one-use token carrying `labels`; with a script, connects it
/// as `hostname` and waits until the API shows it connected. Without one it stays
/// enrolled and offline.
pub async fn join(
    ctrl: &TestController,
    hostname: &str,
    labels: &[(&str, &str)],
    script: Option<Script>,
) -> FleetAgent {
    let token = ctrl.token(1, 3600, labels).await;
    let agent = enroll(ctrl, &token, hostname, "").await.unwrap();
    let (cancel_tx, cancels) = mpsc::unbounded_channel();
    let (command_tx, commands) = mpsc::unbounded_channel();
    if let Some(script) = script {
        let mut first = hello(&agent.id, false);
        if let Some(agent_message::Kind::Hello(hello)) = &mut first.kind {
            hostname.clone_into(&mut hello.hostname);
        }
        let stream = connect(ctrl, &agent, first).await.unwrap();
        let reports = Reports {
            cancels: cancel_tx,
            commands: Some(command_tx),
        };
        tokio::spawn(respond_with(stream, script, reports));
        assert!(wait_until(Duration::from_secs(5), || connected(ctrl, &agent.id)).await);
    }
    FleetAgent {
        id: agent.id,
        cancels,
        commands,
    }
}

/// A controller with one enrolled, connected scripted agent, and the agent's cancels.
pub async fn setup(raw_exec: bool) -> (TestController, Enrolled, mpsc::UnboundedReceiver<String>) {
    let ctrl = TestController::start(raw_exec, Duration::from_secs(10)).await;
    let token = ctrl.token(1, 3600, &[]).await;
    let agent = enroll(&ctrl, &token, "test-host", "").await.unwrap();
    let stream = connect(&ctrl, &agent, hello(&agent.id, false))
        .await
        .unwrap();
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(respond(stream, tx));
    assert!(wait_until(Duration::from_secs(5), || connected(&ctrl, &agent.id)).await);
    (ctrl, agent, rx)
}
