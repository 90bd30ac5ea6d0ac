//! Tools of external MCP servers (`mcp__NAME__TOOL`, [`crate::mcp::external`]): a read
//! (a trusted server's tool that says it is read-only) is called at once; anything else
//! is a write, raised as an approval that shows the tool and its arguments and, approved,
//! is called by the approvals service. A result is redacted, capped and fenced as
//! untrusted data, like a host's output.

use serde_json::{Map, Value, json};

use super::read::untrusted;
use super::write::{raise_and_wait, refused_read_only};
use super::{Prepared, ToolRunner};
use crate::audit::{self, Entry};
use crate::mcp::external::ExternalResult;
use crate::store::approvals::NewApproval;
use crate::tools::class::ToolClass;
use crate::tools::envelope::{Envelope, ErrorCode};

/// The approval target of a server's tool calls.
pub fn approval_target(server: &str) -> String {
    format!("mcp:{server}")
}

/// The envelope of a result: `{server, tool, stdout (its text), truncated, exit_code}`,
/// the text under the name host output has so the knowledge and phantom checks read it
/// alike.
pub fn result_data(server: &str, tool: &str, result: &ExternalResult) -> Value {
    json!({
        "server": server,
        "tool": tool,
        "stdout": result.text,
        "truncated": result.truncated,
        "exit_code": i32::from(result.is_error),
    })
}

/// Runs a prepared call of an external tool.
pub(super) async fn run(runner: &ToolRunner, prepared: &Prepared) -> Envelope {
    let external = runner.assistant.external();
    let Some(tool) = external.find(&prepared.call.name) else {
        return Envelope::failed(
            ErrorCode::NotFound,
            format!(
                "{} is not offered now: its MCP server is not connected or no longer lists it",
                prepared.call.name
            ),
            true,
            json!({}),
        );
    };
    let args: Map<String, Value> = prepared.args.as_object().cloned().unwrap_or_default();
    // Re-classified since the call was prepared: the stricter class holds.
    let read = tool.class == ToolClass::Read && prepared.class == ToolClass::Read;
    if !read {
        if let Some(refused) = refused_read_only(runner) {
            return refused;
        }
        let reason = if external.trusted(&tool.server) {
            format!("{} does not say it is read-only", tool.name)
        } else {
            format!(
                "the MCP server {} is not marked trusted: each of its tools needs a person",
                tool.server
            )
        };
        let new = NewApproval {
            session_id: runner.session_id.clone(),
            command: format!("{} {}", tool.name, Value::Object(args)),
            target: Some(approval_target(&tool.server)),
            agent: None,
            risk: "medium".into(),
            reasons: vec![reason],
            diff: None,
            created_by: runner.actor.clone(),
            ttl_s: 0,
            tool_call_id: Some(prepared.call.id.clone()),
            resource_id: None,
            timeout_s: 0,
        };
        let shown = format!("MCP server {}", tool.server);
        return raise_and_wait(runner, prepared, new, shown).await;
    }
    let outcome = external.call(&tool, args.clone()).await;
    let label = match &outcome {
        Ok(result) if !result.is_error => "ok",
        Ok(_) => "failed",
        Err(_) => "error",
    };
    let entry = Entry::new(&runner.actor, "mcp.external", label).command(&format!(
        "{} {}",
        tool.name,
        Value::Object(args)
    ));
    audit::record(runner.assistant.store(), entry).await;
    match outcome {
        Ok(result) if !result.is_error => untrusted(Envelope::success(result_data(
            &tool.server,
            &tool.tool,
            &result,
        ))),
        Ok(result) => untrusted(Envelope::failed(
            ErrorCode::ExecutionFailed,
            format!("{} answered with an error", tool.name),
            false,
            result_data(&tool.server, &tool.tool, &result),
        )),
        Err(error) => Envelope::failed(ErrorCode::ExecutionFailed, error, true, json!({})),
    }
}
