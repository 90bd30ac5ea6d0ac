//! `POST /api/exec`: a remote read. The command is classified here first and must be
//! provably read-only and bounded; only then is it sent to the agent as a READ, and the
//! agent classifies it again.

use axum::extract::{Extension, State};
use axum::http::HeaderMap;
use axum::response::Response;
use serde::Deserialize;
use vigil_proto::agent::v1::{ExecMode, ExecRequest};
use vigil_shared::ids::ExecTarget;
use vigil_shared::policy::{Classification, classify};

use super::ApiState;
use super::agents::parse_agent_id;
use super::auth::Principal;
use super::exec_output::{ResponseFormat, run};
use super::json_body::JsonBody;
use crate::audit::exec::ExecTrail;
use crate::audit::{self, Entry};
use crate::gateway::convert::target_to_proto;
use crate::{Error, Result};

/// Longest command timeout a caller may ask for, in seconds.
pub const MAX_TIMEOUT_S: u32 = 300;

/// The body of `POST /api/exec`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecBody {
    /// The agent id.
    pub agent: String,
    /// `host` (default), `lxc:ID`, `vm:ID`, `docker:NAME` or `pod:NS/NAME[/CONTAINER]`.
    #[serde(default)]
    pub target: Option<String>,
    /// One shell command.
    pub command: String,
    /// Timeout in seconds (default 30, at most 300).
    #[serde(default)]
    pub timeout_s: Option<u32>,
}

/// Parses an optional target (`host` when absent).
pub fn parse_target(target: Option<&str>) -> Result<ExecTarget> {
    match target.map(str::trim) {
        None | Some("") => Ok(ExecTarget::Host),
        Some(text) => text.parse().map_err(Error::InvalidInput),
    }
}

/// Refuses what may not run as a READ: not provably read-only (403), or read-only but
/// unbounded (422, with the rewrite when the classifier has one).
pub fn require_read(classification: &Classification) -> Result<()> {
    if !classification.intent.is_read_only() {
        return Err(Error::PolicyBlocked {
            reasons: classification.reasons.clone(),
        });
    }
    if !classification.boundedness.is_bounded() {
        return Err(Error::UnboundedCommand {
            reasons: classification.reasons.clone(),
            rewrite: classification.rewrite().map(str::to_owned),
            category: classification.category().map(|c| c.as_str()),
        });
    }
    Ok(())
}

/// `POST /api/exec`.
pub async fn exec(
    State(state): State<ApiState>,
    headers: HeaderMap,
    Extension(principal): Extension<Principal>,
    JsonBody(body): JsonBody<ExecBody>,
) -> Result<Response> {
    if body.command.trim().is_empty() {
        return Err(Error::InvalidInput("command is empty".into()));
    }
    let target = parse_target(body.target.as_deref())?;
    let target_text = body.target.clone().unwrap_or_else(|| "host".into());
    let timeout_s = body.timeout_s.unwrap_or(0);
    if timeout_s > MAX_TIMEOUT_S {
        return Err(Error::InvalidInput(format!(
            "timeout_s {timeout_s} is over the maximum of {MAX_TIMEOUT_S}"
        )));
    }
    let classification = classify(&body.command);
    if let Err(refusal) = require_read(&classification) {
        tracing::info!(code = refusal.api_code(), "refused a command");
        let mut entry = Entry::new(&principal.name, "exec", "refused").command(&body.command);
        entry.agent = Some(body.agent.clone());
        entry.target = Some(target_text);
        audit::record(state.agents.store(), entry).await;
        return Err(refusal);
    }
    let agent = parse_agent_id(&body.agent)?;
    let request = ExecRequest {
        request_id: String::new(),
        target: Some(target_to_proto(&target)),
        command: body.command,
        mode: ExecMode::Read as i32,
        grant: None,
        timeout_s,
        output_cap_bytes: 0,
    };
    let trail = ExecTrail::new(
        state.agents.store().clone(),
        state.metrics.clone(),
        &principal.name,
        "exec",
        &agent.to_string(),
        &target_text,
        &request.command,
    );
    run(
        &state.dispatcher,
        agent,
        request,
        ResponseFormat::from_headers(&headers),
        trail,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_pass_and_refusals_carry_reasons_and_rewrites() {
        assert!(require_read(&classify("uptime")).is_ok());
        let Err(Error::PolicyBlocked { reasons }) = require_read(&classify("rm -rf /tmp/x")) else {
            panic!("rm is not a read");
        };
        assert!(!reasons.is_empty());
        let Err(Error::UnboundedCommand { rewrite, .. }) = require_read(&classify("journalctl -f"))
        else {
            panic!("journalctl -f is unbounded");
        };
        assert!(rewrite.unwrap_or_default().contains("journalctl -n 200"));
    }

    #[test]
    fn targets_default_to_the_host() {
        assert_eq!(parse_target(None).unwrap(), ExecTarget::Host);
        assert_eq!(parse_target(Some("lxc:141")).unwrap(), ExecTarget::Lxc(141));
        assert!(parse_target(Some("ssh:x")).is_err());
    }
}
