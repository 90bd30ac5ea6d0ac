//! `POST /api/exec`: a remote read. The exec service ([`crate::exec`]) classifies, routes,
//! dispatches and audits; this handler parses the body and picks the answer's format.

use axum::extract::{Extension, State};
use axum::http::HeaderMap;
use axum::response::Response;
use serde::Deserialize;
use vigil_shared::policy::classify;

use super::ApiState;
use super::agents::parse_agent_id;
use super::auth::Principal;
use super::exec_output::respond;
use super::json_body::JsonBody;
use crate::exec::{ExecService, ExecSpec, MAX_TIMEOUT_S, Mode, Route, parse_target, require_read};
use crate::{Error, Result};

/// The body of `POST /api/exec`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecBody {
    /// The agent id. Without it, `target` is a resource id and the command is routed along
    /// the resource's chain (docs/inventory.md).
    #[serde(default)]
    pub agent: Option<String>,
    /// With `agent`: `host` (default), `lxc:ID`, `vm:ID`, `docker:NAME`,
    /// `lxc:ID/docker:NAME` or `pod:NS/NAME[/CONTAINER]`. Without: a resource id such as
    /// `lxc:delly:141` or `docker_container:media:3f2a9c0b1d2e`.
    #[serde(default)]
    pub target: Option<String>,
    /// One shell command.
    pub command: String,
    /// Timeout in seconds (default 30, at most 300).
    #[serde(default)]
    pub timeout_s: Option<u32>,
}

/// Checks the body's command and timeout.
pub fn check_command(command: &str, timeout_s: Option<u32>) -> Result<u32> {
    if command.trim().is_empty() {
        return Err(Error::InvalidInput("command is empty".into()));
    }
    let timeout_s = timeout_s.unwrap_or(0);
    if timeout_s > MAX_TIMEOUT_S {
        return Err(Error::InvalidInput(format!(
            "timeout_s {timeout_s} is over the maximum of {MAX_TIMEOUT_S}"
        )));
    }
    Ok(timeout_s)
}

/// `POST /api/exec`.
pub async fn exec(
    State(state): State<ApiState>,
    headers: HeaderMap,
    Extension(principal): Extension<Principal>,
    JsonBody(body): JsonBody<ExecBody>,
) -> Result<Response> {
    let timeout_s = check_command(&body.command, body.timeout_s)?;
    // The classifier decides first, whatever the agent or resource: a write is refused
    // (and audited) even when its target would not resolve.
    if let Err(refusal) = require_read(&classify(&body.command)) {
        let target = body.target.clone().unwrap_or_else(|| "host".into());
        return Err(state
            .exec
            .refuse(
                &principal.name,
                "exec",
                body.agent.clone(),
                target,
                &body.command,
                refusal,
            )
            .await);
    }
    let route = route(&state.exec, &body)?;
    let running = state
        .exec
        .start(ExecSpec {
            actor: principal.name.clone(),
            action: "exec",
            route,
            command: body.command,
            mode: Mode::Read,
            timeout_s,
            approval_id: None,
        })
        .await?;
    respond(running, &headers).await
}

/// Resolve the body's agent and target: explicit (`agent` given) or along the chain of the
/// resource `target` names.
pub fn route(exec: &ExecService, body: &ExecBody) -> Result<Route> {
    if let Some(agent) = &body.agent {
        return Ok(ExecService::route_explicit(
            parse_agent_id(agent)?,
            parse_target(body.target.as_deref())?,
        ));
    }
    let Some(text) = body
        .target
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
    else {
        return Err(Error::InvalidInput(
            "give agent (and optionally target), or target as a resource id".into(),
        ));
    };
    let id = exec.resource_named(text)?;
    exec.route(&id)
}
