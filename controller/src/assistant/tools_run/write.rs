//! Write tools: build the exact command, refuse it (`read_only`), raise an approval and
//! wait for a person (`controlled`), or run it at once with a signed grant
//! (`autonomous`). The approval shows the command, its target with the routing chain, the
//! classifier's risk and reasons, and for file edits a unified diff.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;
use vigil_shared::policy::classify;
use vigil_shared::resource::{Resource, ResourceKind};

use super::output::{OutputEvents, outcome_data};
use super::read::{exec_error, untrusted};
use super::{Prepared, ToolRunner};
use crate::approvals::{ControlLevel, Pending, WriteEvent, WriteResult};
use crate::assistant::events::{ApprovalNeeded, ChatEvent};
use crate::clock::unix_now;
use crate::exec::{DEADLINE_GRACE, ExecSpec, MAX_TIMEOUT_S, Mode};
use crate::store::approvals::NewApproval;
use crate::tools::commands;
use crate::tools::envelope::{Envelope, ErrorCode};

fn text<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn vmid(resource: &Resource) -> Option<u32> {
    resource.id.to_string().rsplit(':').next()?.parse().ok()
}

/// The command of a write call, the resource it runs in, and a diff for file edits.
async fn plan(
    runner: &ToolRunner,
    prepared: &Prepared,
) -> Result<(String, Resource, Option<String>), Envelope> {
    let args = &prepared.args;
    let target = prepared.target.clone().ok_or_else(|| {
        Envelope::blocked(
            ErrorCode::InvalidInput,
            "this action needs resource_id",
            json!({}),
        )
    })?;
    let parent = || super::read::parent(runner, &target);
    match (prepared.call.name.as_str(), prepared.action.as_str()) {
        ("control", "command") => Ok((text(args, "command").to_owned(), target, None)),
        ("control", "service") => Ok((
            commands::service(text(args, "service"), text(args, "operation")),
            target,
            None,
        )),
        ("control", "guest") => {
            let lxc = match target.kind {
                ResourceKind::Lxc => true,
                ResourceKind::Vm => false,
                _ => {
                    return Err(Envelope::blocked(
                        ErrorCode::InvalidInput,
                        format!("{} is not an LXC or VM", target.id),
                        json!({}),
                    ));
                }
            };
            let id = vmid(&target)
                .ok_or_else(|| Envelope::blocked(ErrorCode::InvalidInput, "no vmid", json!({})))?;
            Ok((
                commands::guest(lxc, id, text(args, "operation")),
                parent()?,
                None,
            ))
        }
        ("docker", "control") => {
            let name = if target.name.is_empty() {
                target.id.to_string()
            } else {
                target.name.clone()
            };
            let host = if target.kind == ResourceKind::DockerContainer {
                parent()?
            } else {
                target.clone()
            };
            Ok((
                commands::docker_control(&name, text(args, "operation")),
                host,
                None,
            ))
        }
        ("file_edit", action @ ("write" | "append")) => {
            let path = text(args, "path");
            let content = text(args, "content");
            let current = read_current(runner, prepared, path, &target).await;
            let new = if action == "append" {
                format!("{current}{content}")
            } else {
                content.to_owned()
            };
            let diff = commands::unified_diff(path, &current, &new);
            Ok((
                commands::write_file(path, content, action == "append"),
                target,
                Some(diff),
            ))
        }
        (tool, action) => Err(Envelope::blocked(
            ErrorCode::InvalidInput,
            format!("{tool} {action} is not a write"),
            json!({}),
        )),
    }
}

/// The file's current content for the diff (empty when it cannot be read).
async fn read_current(
    runner: &ToolRunner,
    prepared: &Prepared,
    path: &str,
    target: &Resource,
) -> String {
    let command = commands::read_file(path, Some(commands::EDIT_FILE_BYTES));
    let Ok(route) = runner.assistant.exec().route(&target.id) else {
        return String::new();
    };
    let spec = ExecSpec {
        actor: runner.actor.clone(),
        action: "tool.read",
        route,
        command,
        mode: Mode::Read,
        timeout_s: 0,
        approval_id: None,
    };
    match runner.assistant.exec().start(spec).await {
        Ok(running) => match running.collect(|_, _| {}).await {
            Ok(outcome) if outcome.succeeded() => outcome.stdout,
            _ => String::new(),
        },
        Err(error) => {
            tracing::debug!(%error, call = %prepared.call.id, "cannot read the file for the diff");
            String::new()
        }
    }
}

/// Runs a write call by the session's control level.
pub(super) async fn run(runner: &ToolRunner, prepared: &Prepared) -> Envelope {
    if !runner.proposes
        && let Some(refused) = refused_read_only(runner)
    {
        return refused;
    }
    let (command, resource, diff) = match plan(runner, prepared).await {
        Ok(planned) => planned,
        Err(envelope) => return envelope,
    };
    let route = match runner.assistant.exec().route(&resource.id) {
        Ok(route) => route,
        Err(error) => return exec_error(&error),
    };
    let classification = classify(&command);
    let new = NewApproval {
        session_id: runner.session_id.clone(),
        command: command.clone(),
        target: Some(route.target.to_string()),
        agent: Some(route.agent.to_string()),
        risk: classification.risk.as_str().into(),
        reasons: classification.reasons,
        diff,
        created_by: runner.actor.clone(),
        ttl_s: 0,
        tool_call_id: Some(prepared.call.id.clone()),
        resource_id: Some(resource.id.to_string()),
        timeout_s: 0,
    };
    let shown = format!("{} ({})", resource.id, route.audit_target());
    if runner.proposes {
        return propose(runner, prepared, new, shown).await;
    }
    raise_and_wait(runner, prepared, new, shown).await
}

/// An investigation's write: a pending approval for a person, not waited for. Nothing
/// runs unless a person approves it; approved later, it runs as any approved write.
async fn propose(
    runner: &ToolRunner,
    prepared: &Prepared,
    new: NewApproval,
    shown_target: String,
) -> Envelope {
    let pending = match runner.assistant.approvals().request(new).await {
        Ok(pending) => pending,
        Err(error) => return not_raised(&error),
    };
    let row = &pending.row;
    announce(runner, prepared, row, shown_target);
    Envelope::blocked(
        ErrorCode::ApprovalRequired,
        format!(
            "proposed as approval {}: a person decides; nothing runs unless they approve it",
            row.id
        ),
        json!({
            "approval_id": row.id, "status": "pending", "expires_at": row.expires_at,
            "recovery_hint": "say in your answer what the change does and why; do not ask again",
            "auto_recoverable": false,
        }),
    )
}

/// The answer when an approval could not be stored.
fn not_raised(error: &crate::Error) -> Envelope {
    Envelope::failed(
        ErrorCode::ExecutionFailed,
        format!("cannot raise the approval: {error}"),
        true,
        json!({}),
    )
}

/// Tells the stream that approval `row` waits for a person.
fn announce(
    runner: &ToolRunner,
    prepared: &Prepared,
    row: &crate::store::approvals::ApprovalRow,
    shown_target: String,
) {
    runner.emit(ChatEvent::ApprovalNeeded(ApprovalNeeded {
        approval_id: row.id.clone(),
        tool_call_id: prepared.call.id.clone(),
        command: row.command.clone(),
        target: shown_target,
        risk: row.risk.clone(),
        reasons: row.reasons.clone(),
        diff: row.diff.clone(),
        expires_at: row.expires_at,
    }));
}

/// The refusal of a write in a `read_only` session.
pub(super) fn refused_read_only(runner: &ToolRunner) -> Option<Envelope> {
    (runner.level == ControlLevel::ReadOnly).then(|| {
        Envelope::blocked(
            ErrorCode::ActionNotAllowed,
            "this session is read_only: changes are refused",
            json!({ "recovery_hint": "explain the change to the user instead; they can start a controlled session", "auto_recoverable": false }),
        )
    })
}

/// Raises the approval of `new` by the session's level (controlled: a person decides;
/// autonomous: decided at once), tells the stream, and waits for the outcome.
pub(super) async fn raise_and_wait(
    runner: &ToolRunner,
    prepared: &Prepared,
    new: NewApproval,
    shown_target: String,
) -> Envelope {
    let approvals = runner.assistant.approvals();
    let pending = if runner.level == ControlLevel::Autonomous {
        approvals
            .autonomous(new, &format!("{} (autonomous)", runner.actor))
            .await
    } else {
        approvals.request(new).await
    };
    let pending = match pending {
        Ok(pending) => pending,
        Err(error) => return not_raised(&error),
    };
    if runner.level == ControlLevel::Controlled {
        announce(runner, prepared, &pending.row, shown_target);
    }
    wait(runner, prepared, pending).await
}

/// Waits for the decision and the outcome.
pub(super) async fn wait(
    runner: &ToolRunner,
    prepared: &Prepared,
    mut pending: Pending,
) -> Envelope {
    let id = pending.row.id.clone();
    let controlled = runner.level == ControlLevel::Controlled;
    let expires_in = u64::try_from(pending.row.expires_at.saturating_sub(unix_now())).unwrap_or(0);
    let mut deadline = Instant::now() + Duration::from_secs(expires_in);
    let mut approved = false;
    let mut output = OutputEvents::new(runner, &prepared.call.id);
    loop {
        let event = tokio::select! {
            () = tokio::time::sleep_until(deadline) => None,
            () = runner.cancel.cancelled(), if !approved => {
                return Envelope::failed(ErrorCode::ExecutionFailed, format!("approval {id} was withdrawn: the turn was cancelled"), false, json!({ "approval_id": id }));
            }
            event = pending.next() => event,
        };
        match event {
            None if approved => {
                return Envelope::failed(
                    ErrorCode::Timeout,
                    format!("approval {id} was approved but its outcome did not arrive in time"),
                    false,
                    json!({ "approval_id": id }),
                );
            }
            None => {
                if controlled {
                    runner.emit(ChatEvent::ApprovalResolved {
                        approval_id: id.clone(),
                        decision: "expired".into(),
                        reason: None,
                    });
                }
                runner
                    .assistant
                    .exec()
                    .metrics()
                    .approval("approval_expired");
                return Envelope::failed(
                    ErrorCode::ApprovalRequired,
                    format!("approval {id} expired: nobody decided in time; nothing ran"),
                    false,
                    json!({ "approval_id": id }),
                );
            }
            Some(WriteEvent::Resolved {
                decision: "approved",
                reason,
            }) => {
                approved = true;
                deadline =
                    Instant::now() + Duration::from_secs(u64::from(MAX_TIMEOUT_S)) + DEADLINE_GRACE;
                if controlled {
                    runner.emit(ChatEvent::ApprovalResolved {
                        approval_id: id.clone(),
                        decision: "approved".into(),
                        reason,
                    });
                }
            }
            Some(WriteEvent::Resolved { decision, reason }) => {
                let reason_text = reason.clone().unwrap_or_else(|| "no reason given".into());
                if decision == "denied" {
                    runner.emit(ChatEvent::ApprovalResolved {
                        approval_id: id.clone(),
                        decision: "denied".into(),
                        reason,
                    });
                    return Envelope::blocked(
                        ErrorCode::ActionNotAllowed,
                        format!("Command denied: {reason_text}"),
                        json!({ "approval_id": id, "auto_recoverable": false }),
                    );
                }
                return Envelope::failed(
                    ErrorCode::ExecutionFailed,
                    format!("approval {id} was {decision}: {reason_text}"),
                    false,
                    json!({ "approval_id": id }),
                );
            }
            Some(WriteEvent::Output(stream, text)) => output.push(stream, &text),
            Some(WriteEvent::Finished(result)) => {
                output.finish();
                return finished(&id, result);
            }
        }
    }
}

fn finished(id: &str, result: WriteResult) -> Envelope {
    let Some(outcome) = result.outcome else {
        let code = match result.error_code.as_deref() {
            Some("AGENT_OFFLINE") => ErrorCode::AgentOffline,
            Some("TIMEOUT") => ErrorCode::Timeout,
            Some("POLICY_BLOCKED") => ErrorCode::PolicyBlocked,
            _ => ErrorCode::ExecutionFailed,
        };
        return Envelope::failed(code, result.summary, false, json!({ "approval_id": id }));
    };
    let data = outcome_data(&outcome, json!({ "approval_id": id }));
    if result.ok {
        untrusted(Envelope::success(data))
    } else {
        Envelope::failed(
            ErrorCode::ExecutionFailed,
            format!("the command ran and failed: {}", result.summary),
            false,
            data,
        )
    }
}
