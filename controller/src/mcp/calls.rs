//! One MCP tool call through the assistant's gates. The caller's role sets the level:
//! an operator's writes become approvals exactly as in `controlled` (whatever the
//! controller's ceiling: nothing an MCP client sends runs a write without a person), a
//! viewer's are refused as in `read_only`. Gate state (FSM, resolution, loop detection,
//! knowledge) is the MCP session's when the client keeps one; a call without a session
//! gets fresh state, and the resource its `resource_id` names is taken as chosen when it
//! names exactly one (a canonical id, or a name or alias of one resource).
//!
//! A write waits for its decision up to the wait bound; past it the call answers
//! `APPROVAL_REQUIRED` with the approval's id and how to decide it, and the approval stays:
//! approved later, it still runs once, and `approval_status` reports its outcome.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{Mutex, mpsc};
use tokio_util::sync::CancellationToken;

use crate::access::Principal;
use crate::approvals::ControlLevel;
use crate::assistant::Assistant;
use crate::assistant::events::ChatEvent;
use crate::assistant::state::SessionState;
use crate::assistant::tools_run::ToolRunner;
use crate::audit::{self, Entry};
use crate::llm::ToolCall;
use crate::roles::Role;
use crate::tools::envelope::{Envelope, ErrorCode};

/// Default seconds a write call waits for its decision (`--mcp-approval-wait-s`).
pub const DEFAULT_APPROVAL_WAIT_S: u64 = 60;
/// Longest client name kept for the audit trail.
const MAX_CLIENT_NAME: usize = 64;

/// Who calls: the API token and the MCP client it says it is.
#[derive(Debug, Clone)]
pub struct Caller {
    pub principal: Principal,
    /// The client's name from its `clientInfo` (`unknown client` when it gave none).
    pub client: String,
}

impl Caller {
    /// `principal`, through the client named `client` (cut and cleaned for the trail).
    pub fn new(principal: Principal, client: Option<&str>) -> Caller {
        let client: String = client
            .unwrap_or_default()
            .chars()
            .filter(|c| !c.is_control())
            .take(MAX_CLIENT_NAME)
            .collect();
        let client = client.trim();
        Caller {
            principal,
            client: if client.is_empty() {
                "unknown client".into()
            } else {
                client.to_owned()
            },
        }
    }

    /// The actor of the audit trail and of the approvals it raises.
    pub fn actor(&self) -> String {
        crate::access::mcp_actor(&self.principal.name, &self.client)
    }

    /// The level of this caller's calls: `controlled` for an operator (when the
    /// controller allows writes at all), `read_only` otherwise.
    fn level(&self, ceiling: ControlLevel) -> ControlLevel {
        if self.principal.role >= Role::Operator && ceiling >= ControlLevel::Controlled {
            ControlLevel::Controlled
        } else {
            ControlLevel::ReadOnly
        }
    }
}

/// Runs MCP tool calls (cheap to clone).
#[derive(Debug, Clone)]
pub struct McpCalls {
    assistant: Assistant,
    ceiling: ControlLevel,
    approval_wait: Duration,
}

impl McpCalls {
    /// Calls through `assistant`'s gates, at most at `ceiling`, a write waiting up to
    /// `approval_wait` for its decision.
    pub fn new(assistant: Assistant, ceiling: ControlLevel, approval_wait: Duration) -> Self {
        McpCalls {
            assistant,
            ceiling,
            approval_wait,
        }
    }

    /// The chat service the calls go through.
    pub fn assistant(&self) -> &Assistant {
        &self.assistant
    }

    /// Runs tool `name` with `arguments` for `caller`, in `gates` (the MCP session's,
    /// or fresh for a call without one: `in_session` false). Audited with the caller's
    /// token and client.
    pub async fn call(
        &self,
        caller: &Caller,
        gates: &Mutex<SessionState>,
        in_session: bool,
        name: &str,
        arguments: Value,
        cancel: CancellationToken,
    ) -> Envelope {
        let envelope = if name == super::catalog::APPROVAL_STATUS {
            self.approval_status(&arguments).await
        } else if name.starts_with(super::external::PREFIX) {
            // Other servers' tools are the assistant's, not offered to MCP clients.
            Envelope::blocked(
                ErrorCode::InvalidInput,
                format!("unknown tool {name:?}: Vigil's MCP server offers its own tools only"),
                json!({ "auto_recoverable": false }),
            )
        } else {
            self.run_tool(caller, gates, in_session, name, &arguments, cancel)
                .await
        };
        self.audit(caller, name, &arguments, &envelope).await;
        envelope
    }

    async fn run_tool(
        &self,
        caller: &Caller,
        gates: &Mutex<SessionState>,
        in_session: bool,
        name: &str,
        arguments: &Value,
        cancel: CancellationToken,
    ) -> Envelope {
        let call = ToolCall {
            id: format!("mcp_{}", uuid::Uuid::new_v4().simple()),
            name: name.to_owned(),
            arguments: arguments.to_string(),
        };
        let (events, mut heard) = mpsc::unbounded_channel();
        let runner = ToolRunner::for_client(
            self.assistant.clone(),
            caller.level(self.ceiling),
            caller.actor(),
            events,
            cancel,
        );
        let mut state = gates.lock().await;
        state.begin_turn();
        if !in_session {
            runner.adopt_named(&mut state, &call);
        }
        let run = runner.run_batch(&mut state, std::slice::from_ref(&call));
        tokio::pin!(run);
        let mut waiting: Option<(String, i64, tokio::time::Instant)> = None;
        loop {
            let deadline = waiting.as_ref().map(|(_, _, at)| *at);
            tokio::select! {
                outcomes = &mut run => {
                    return outcomes.into_iter().next().map_or_else(
                        || Envelope::failed(ErrorCode::Internal, "the call gave no answer", false, json!({})),
                        |outcome| outcome.envelope,
                    );
                }
                Some(event) = heard.recv() => match event {
                    ChatEvent::ApprovalNeeded(needed) => {
                        let at = tokio::time::Instant::now() + self.approval_wait;
                        waiting = Some((needed.approval_id, needed.expires_at, at));
                    }
                    // Decided: the write runs (or not), and the call answers its outcome.
                    ChatEvent::ApprovalResolved { .. } => waiting = None,
                    _ => {}
                },
                () = sleep_until(deadline) => {
                    let Some((id, expires_at, _)) = waiting.take() else { continue };
                    return pending(&id, expires_at);
                }
            }
        }
    }

    /// `approval_status`: the approval as `GET /api/ai/approvals/{id}` shows it.
    async fn approval_status(&self, arguments: &Value) -> Envelope {
        let id = arguments.get("approval_id").and_then(Value::as_str);
        let extra = arguments
            .as_object()
            .is_some_and(|map| map.keys().any(|k| k != "approval_id"));
        let Some(id) = id.filter(|id| !id.trim().is_empty() && !extra) else {
            return Envelope::blocked(
                ErrorCode::InvalidInput,
                "approval_status takes exactly one argument, approval_id (a string)",
                json!({ "auto_recoverable": false }),
            );
        };
        match self.assistant.approvals().get(id.trim()).await {
            Ok(Some(row)) => Envelope::success(serde_json::to_value(&row).unwrap_or_default()),
            Ok(None) => Envelope::failed(
                ErrorCode::NotFound,
                format!("no approval {id:?}"),
                false,
                json!({}),
            ),
            Err(error) => Envelope::failed(
                ErrorCode::of(&error),
                format!("cannot read the approval: {error}"),
                true,
                json!({}),
            ),
        }
    }

    async fn audit(&self, caller: &Caller, name: &str, arguments: &Value, envelope: &Envelope) {
        let outcome = match envelope.code() {
            None => "ok".to_owned(),
            Some(code) => format!("error: {}", code.as_str()),
        };
        let mut entry = Entry::new(&caller.actor(), "mcp.call", &outcome)
            .command(&format!("{name} {arguments}"));
        // The approval a write raised, or the one approval_status asked about.
        let approval = envelope
            .error_details()
            .and_then(|d| d.get("approval_id"))
            .or_else(|| envelope.data.as_ref().and_then(|d| d.get("approval_id")))
            .or_else(|| {
                (name == super::catalog::APPROVAL_STATUS)
                    .then(|| arguments.get("approval_id"))
                    .flatten()
            })
            .and_then(Value::as_str);
        if let Some(id) = approval {
            entry = entry.approval(id);
        }
        audit::record(self.assistant.store(), entry).await;
    }
}

/// Sleeps until `deadline`; forever when there is none.
async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The answer of a write whose decision did not come within the wait bound.
fn pending(id: &str, expires_at: i64) -> Envelope {
    Envelope::failed(
        ErrorCode::ApprovalRequired,
        format!(
            "approval {id} waits for a person's decision; nothing has run yet. A person decides \
             it in Vigil's web page (Approvals), its terminal chat, or with \
             `vigil-controller approvals approve {id}` (or deny); it expires at {expires_at} \
             (Unix time) if nobody does. Call approval_status with this approval_id for its \
             outcome; do not call the write again."
        ),
        false,
        json!({ "approval_id": id, "status": "pending", "expires_at": expires_at, "auto_recoverable": false }),
    )
}

/// Fresh gate state, for a call without a session or a new session.
pub fn fresh_gates() -> Arc<Mutex<SessionState>> {
    Arc::new(Mutex::new(SessionState::default()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::requested_through_mcp_by;

    fn principal(role: Role) -> Principal {
        Principal {
            name: "ci".into(),
            role,
        }
    }

    #[test]
    fn levels_follow_the_role_and_never_pass_controlled() {
        let operator = Caller::new(principal(Role::Operator), Some("ide"));
        assert_eq!(
            operator.level(ControlLevel::Autonomous),
            ControlLevel::Controlled
        );
        assert_eq!(
            operator.level(ControlLevel::ReadOnly),
            ControlLevel::ReadOnly
        );
        let viewer = Caller::new(principal(Role::Viewer), None);
        assert_eq!(
            viewer.level(ControlLevel::Autonomous),
            ControlLevel::ReadOnly
        );
        assert_eq!(viewer.actor(), "ci via MCP (unknown client)");
    }

    #[test]
    fn the_requesting_token_is_found_in_the_actor() {
        let actor = Caller::new(principal(Role::Operator), Some("ide")).actor();
        assert!(requested_through_mcp_by(&actor, "ci"));
        assert!(!requested_through_mcp_by(&actor, "c"));
        assert!(!requested_through_mcp_by(&actor, "admin"));
        assert!(!requested_through_mcp_by("ci (assistant s1)", "ci"));
    }

    #[test]
    fn client_names_are_cleaned_and_cut() {
        let caller = Caller::new(principal(Role::Admin), Some("evil\nname\u{7}x"));
        assert_eq!(caller.client, "evilnamex");
        let long = "a".repeat(500);
        assert_eq!(
            Caller::new(principal(Role::Admin), Some(&long))
                .client
                .len(),
            MAX_CLIENT_NAME
        );
    }

    #[test]
    fn a_pending_answer_names_the_approval_and_how_to_decide_it() {
        let envelope = pending("ap-1", 99);
        assert_eq!(envelope.code(), Some(ErrorCode::ApprovalRequired));
        let text = envelope.to_text();
        assert!(text.contains("approval_status") && text.contains("approvals approve ap-1"));
        assert_eq!(envelope.error_details().unwrap()["approval_id"], "ap-1");
    }
}
