//! A scripted agent on a real AgentLink stream. It answers commands by their text:
//! `refuse` → `Rejected{POLICY_BLOCKED}`; `hang` → started, then nothing; `exit3` → exit
//! code 3; `killed` → signal 9; anything else prints `hello\n` (in two chunks) and `warn`
//! on stderr and exits 0. Cancels it receives are reported on a channel.

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

/// Expects the HelloAck, then answers every command (see the module documentation).
pub async fn respond(mut agent: FakeAgent, cancels: mpsc::UnboundedSender<String>) {
    let ack = agent.recv().await.unwrap().unwrap();
    assert!(
        matches!(ack.kind, Some(controller_message::Kind::HelloAck(_))),
        "{ack:?}"
    );
    while let Ok(Some(message)) = agent.inbound.message().await {
        match message.kind {
            Some(controller_message::Kind::ExecRequest(request)) => {
                let command = request.command.clone();
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
