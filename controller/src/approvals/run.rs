//! Running one approved write, at most once: the database claim decides who runs it; the
//! grant is signed just before dispatch; the outcome goes on the approval, into the audit
//! chain (the exec trail names the approval), and to the waiting turn or the session.

use serde::Serialize;
use serde_json::json;
use vigil_shared::ids::{AgentId, ExecTarget};

use super::{Approvals, WriteEvent, sign_grant};
use crate::clock::unix_now;
use crate::exec::{ExecOutcome, ExecSpec, Mode, Route};
use crate::store::Store;
use crate::store::approvals::{ApprovalRow, RunState};
use crate::tools::envelope::ErrorCode;
use crate::{Error, Result};

/// How an approved write ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WriteResult {
    /// True when the command ran and exited 0.
    pub ok: bool,
    /// The command's result when it ran to an end.
    pub outcome: Option<ExecOutcome>,
    /// The error code when it could not run (`AGENT_OFFLINE`, `TIMEOUT`, an agent's code).
    pub error_code: Option<String>,
    /// One sentence.
    pub summary: String,
}

impl Approvals {
    /// Runs approval `id` if it is approved and nobody ran it yet; otherwise does nothing.
    pub async fn run(&self, id: &str) -> Option<WriteResult> {
        match self.store().claim_run(id, &self.inner.replica).await {
            Ok(true) => {}
            Ok(false) => {
                tracing::debug!(
                    approval = id,
                    "not running: not approved, or already claimed"
                );
                return None;
            }
            Err(error) => {
                tracing::error!(%error, approval = id, "cannot claim the run of an approval");
                return None;
            }
        }
        let row = match self.store().get_approval(id, unix_now()).await {
            Ok(Some(row)) => row,
            other => {
                tracing::error!(approval = id, ?other, "a claimed approval vanished");
                return None;
            }
        };
        let result = match self.dispatch(&row).await {
            Ok(outcome) => {
                let summary = match (outcome.exit_code, outcome.signal) {
                    (Some(code), _) => format!("ran; exit code {code}"),
                    (None, Some(signal)) => format!("ran; killed by signal {signal}"),
                    (None, None) => "ran; no exit status".into(),
                };
                WriteResult {
                    ok: outcome.succeeded(),
                    outcome: Some(outcome),
                    error_code: None,
                    summary,
                }
            }
            Err(error) => WriteResult {
                ok: false,
                outcome: None,
                error_code: Some(ErrorCode::of(&error).as_str().into()),
                summary: format!("did not run to an end: {error}"),
            },
        };
        let exit_code = result
            .outcome
            .as_ref()
            .and_then(|o| o.exit_code)
            .map(i64::from);
        let (state, label) = match (&result.outcome, result.error_code.as_deref()) {
            (Some(_), _) => (RunState::Done, if result.ok { "ok" } else { "failed" }),
            // The agent went away mid-command: whether it wrote is unknown.
            (None, Some("AGENT_OFFLINE" | "TIMEOUT")) => (RunState::Unknown, "unknown"),
            (None, _) => (RunState::Done, "failed"),
        };
        self.inner.exec.metrics().write_run(label);
        let text = outcome_text(&row, &result);
        if let Err(error) = self
            .store()
            .finish_run(&row.id, state, exit_code, &text)
            .await
        {
            tracing::error!(%error, approval = %row.id, "cannot record the outcome of a write");
        }
        tracing::info!(approval = %row.id, outcome = label, summary = %result.summary, "approved write ended");
        if !self.notify(&row.id, WriteEvent::Finished(result.clone())) {
            append_outcome(self.store(), &row, &text).await;
        }
        Some(result)
    }

    async fn dispatch(&self, row: &ApprovalRow) -> Result<ExecOutcome> {
        if row.agent.is_none()
            && let Some(server) = row.target.as_deref().and_then(|t| t.strip_prefix("mcp:"))
        {
            return self.call_external(row, server).await;
        }
        let agent: AgentId = row
            .agent
            .as_deref()
            .unwrap_or_default()
            .parse()
            .map_err(|_| {
                Error::InvalidInput(format!("approval {} names no valid agent", row.id))
            })?;
        let target: ExecTarget = row
            .target
            .as_deref()
            .unwrap_or("host")
            .parse()
            .map_err(Error::InvalidInput)?;
        let grant = sign_grant(
            &self.inner.pki.grant,
            &row.id,
            agent,
            &target,
            &row.command,
            unix_now(),
        )?;
        let resource = row.resource_id.as_deref().and_then(|r| r.parse().ok());
        let running = self
            .inner
            .exec
            .start(ExecSpec {
                actor: row.decided_by.clone().unwrap_or_else(|| "approval".into()),
                action: "approval.run",
                route: Route {
                    agent,
                    target,
                    resource,
                },
                command: row.command.clone(),
                mode: Mode::Write(Box::new(grant)),
                timeout_s: u32::try_from(row.timeout_s).unwrap_or(0),
                approval_id: Some(row.id.clone()),
            })
            .await?;
        let id = row.id.clone();
        running
            .collect(|stream, text| {
                self.notify(&id, WriteEvent::Output(stream, text.to_owned()));
            })
            .await
    }
}

impl Approvals {
    /// Runs an approved call of an external MCP tool (`command` is `mcp__NAME__TOOL
    /// {arguments}`): its result stands for output, an error answer for a failed exit.
    async fn call_external(&self, row: &ApprovalRow, server: &str) -> Result<ExecOutcome> {
        let started = std::time::Instant::now();
        let (name, arguments) = row.command.split_once(' ').unwrap_or((&row.command, "{}"));
        let arguments: serde_json::Map<String, serde_json::Value> = serde_json::from_str(arguments)
            .map_err(|e| {
                Error::InvalidInput(format!("approval {} has no valid arguments: {e}", row.id))
            })?;
        let external = &self.inner.external;
        let tool = external
            .find(name)
            .filter(|tool| tool.server == server)
            .ok_or_else(|| {
                Error::coded(
                    crate::error::ApiCode::ExecutionFailed,
                    format!(
                        "{name} is not offered now: the MCP server {server} is not connected or no longer lists it"
                    ),
                )
            })?;
        let outcome = external.call(&tool, arguments).await;
        let actor = row.decided_by.clone().unwrap_or_else(|| "approval".into());
        let label = match &outcome {
            Ok(result) if !result.is_error => "ok",
            Ok(_) => "failed",
            Err(_) => "error",
        };
        let entry = crate::audit::Entry::new(&actor, "mcp.external", label)
            .command(&row.command)
            .approval(&row.id);
        crate::audit::record(self.store(), entry).await;
        let result =
            outcome.map_err(|e| Error::coded(crate::error::ApiCode::ExecutionFailed, e))?;
        Ok(ExecOutcome {
            stdout: result.text,
            stderr: String::new(),
            exit: crate::exec::ExecExit {
                exit_code: Some(i32::from(result.is_error)),
                signal: None,
                truncated: result.truncated,
                duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                queued_ms: 0,
            },
        })
    }
}

fn outcome_text(row: &ApprovalRow, result: &WriteResult) -> String {
    let mut text = format!("Approved write `{}`: {}", row.command, result.summary);
    if let Some(outcome) = &result.outcome {
        for (name, output) in [("output", &outcome.stdout), ("errors", &outcome.stderr)] {
            let output = vigil_shared::redact::redact(output).text;
            let tail = tail_chars(&output, OUTCOME_TAIL_CHARS);
            if !tail.trim().is_empty() {
                text.push_str(&format!("\n{name} (end):\n{tail}"));
            }
        }
    }
    text
}

/// Characters of each output stream kept in an approval's recorded outcome.
const OUTCOME_TAIL_CHARS: usize = 4000;

fn tail_chars(text: &str, n: usize) -> &str {
    let count = text.chars().count();
    match text.char_indices().nth(count.saturating_sub(n)) {
        Some((at, _)) if count > n => &text[at..],
        _ => text,
    }
}

/// Appends the outcome of an approval whose turn no longer waits to its session, so the
/// next turn and the message list see it.
pub(super) async fn append_outcome(store: &Store, row: &ApprovalRow, text: &str) {
    let Some(session) = row.session_id.as_deref() else {
        return;
    };
    let data = json!({ "approval_id": row.id, "tool_call_id": row.tool_call_id, "kind": "approval_outcome" });
    if let Err(error) = store
        .append_message(session, "event", text, Some(&data), unix_now())
        .await
    {
        tracing::error!(%error, approval = %row.id, "cannot append an approval's outcome to its session");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tails_keep_the_last_characters() {
        assert_eq!(tail_chars("abcdef", 3), "def");
        assert_eq!(tail_chars("ab", 3), "ab");
        assert_eq!(tail_chars("€€€€", 2), "€€");
    }
}
