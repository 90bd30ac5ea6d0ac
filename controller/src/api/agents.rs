//! `GET /api/agents`, `GET /api/agents/{id}`, `POST /api/agents/{id}/revoke` and
//! `PUT /api/agents/{id}/hidden-paths`.

use axum::Json;
use axum::extract::{Extension, Path, State};
use serde::Deserialize;
use serde_json::{Value, json};
use vigil_shared::ids::AgentId;

use super::ApiState;
use super::auth::Principal;
use super::json_body::JsonBody;
use crate::agents::AgentView;
use crate::audit::Entry;
use crate::clock::rfc3339;
use crate::{Error, Result};

/// An agent id from a path or body; anything that is not one names no agent (404).
pub fn parse_agent_id(text: &str) -> Result<AgentId> {
    text.trim()
        .parse()
        .map_err(|_| Error::NotFound(format!("no agent with id {text:?}")))
}

/// `GET /api/agents`: every agent that is not revoked.
pub async fn list(State(state): State<ApiState>) -> Result<Json<Vec<AgentView>>> {
    Ok(Json(state.agents.list()))
}

/// `POST /api/agents/{id}/revoke`: `{id, revoked: true}`.
pub async fn revoke(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    let id = parse_agent_id(&id)?;
    state
        .agents
        .revoke(id, "revoked by an administrator")
        .await?;
    let entry = Entry::new(&principal.name, "agent.revoke", "ok").agent(id);
    state.audit.record(entry).await;
    Ok(Json(json!({ "id": id.to_string(), "revoked": true })))
}

/// `GET /api/agents/{id}`: one agent (revoked ones too), with its facts and certificate.
pub async fn get(State(state): State<ApiState>, Path(id): Path<String>) -> Result<Json<Value>> {
    let id = parse_agent_id(&id)?;
    let row = state
        .agents
        .get(id)
        .ok_or_else(|| Error::NotFound(format!("no agent with id {id}")))?;
    let connected = state.agents.sessions().get(id).is_some();
    Ok(Json(json!({
        "id": id.to_string(),
        "hostname": &row.hostname,
        "connected": connected,
        "read_only": row.read_only,
        "labels": &row.labels,
        "version": &row.version,
        "last_seen": row.last_seen.map(rfc3339),
        "created_at": rfc3339(row.created_at),
        "revoked_at": row.revoked_at.map(rfc3339),
        "cert_serial": &row.cert_serial,
        "cert_expires_at": rfc3339(row.cert_expires_at),
        "facts": &row.facts,
        "hidden_paths": &row.hidden_paths,
        "capabilities": state.agents.sessions().get(id).map(|s| s.hello().capabilities.clone()),
        "inventory": state.agents.inventory().report(&id.to_string()),
    })))
}

/// The body of `PUT /api/agents/{id}/hidden-paths`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HiddenPathsBody {
    /// Absolute path patterns (`*` within one component), replacing the ones set before.
    pub paths: Vec<String>,
}

/// `PUT /api/agents/{id}/hidden-paths` (admin): replaces the paths this agent's reads
/// never see besides the agent's own list (which nothing here can shorten). The agent
/// applies them before any read sent after the response, and reports them in
/// `facts.sandbox.controller_hidden_paths`. `{id, hidden_paths, connected}`.
pub async fn set_hidden_paths(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<HiddenPathsBody>,
) -> Result<Json<Value>> {
    let id = parse_agent_id(&id)?;
    let paths = state.agents.set_hidden_paths(id, body.paths).await?;
    let entry = Entry::new(&principal.name, "agent.hidden_paths", "ok")
        .agent(id)
        .command(&format!("hide: {}", paths.join(" ")));
    state.audit.record(entry).await;
    Ok(Json(json!({
        "id": id.to_string(),
        "hidden_paths": paths,
        "connected": state.agents.sessions().get(id).is_some(),
    })))
}
