//! `GET /api/agents` and `POST /api/agents/{id}/revoke`.

use axum::Json;
use axum::extract::{Path, State};
use serde_json::{Value, json};
use vigil_shared::ids::AgentId;

use super::ApiState;
use crate::agents::AgentView;
use crate::{Error, Result};

/// An agent id from a path or body; anything that is not one names no agent (404).
pub fn parse_agent_id(text: &str) -> Result<AgentId> {
    text.trim()
        .parse()
        .map_err(|_| Error::NotFound(format!("no agent with id {text:?}")))
}

/// `GET /api/agents`: every agent that is not revoked.
pub async fn list(State(state): State<ApiState>) -> Result<Json<Vec<AgentView>>> {
    Ok(Json(state.agents.list().await?))
}

/// `POST /api/agents/{id}/revoke`: `{id, revoked: true}`.
pub async fn revoke(State(state): State<ApiState>, Path(id): Path<String>) -> Result<Json<Value>> {
    let id = parse_agent_id(&id)?;
    state
        .agents
        .revoke(id, "revoked by an administrator")
        .await?;
    Ok(Json(json!({ "id": id.to_string(), "revoked": true })))
}
