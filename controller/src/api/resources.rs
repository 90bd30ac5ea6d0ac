//! `GET /api/resources?q=&kind=&limit=` and `GET /api/resources/{id}`: the merged
//! inventory (docs/inventory.md), searched or one resource with its children and its
//! routing chain (whether each path's agent is connected now).

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use serde_json::{Value, json};
use vigil_shared::ids::AgentId;
use vigil_shared::resource::{Resource, ResourceId, ResourceKind};

use super::ApiState;
use crate::agents::Agents;
use crate::inventory::ResourceView;
use crate::{Error, Result};

/// Default and largest page.
pub const DEFAULT_LIMIT: usize = 200;
pub const MAX_LIMIT: usize = 5000;

/// Query of `GET /api/resources`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    /// Search text: id, name, alias, prefix or hyphen part; empty lists everything.
    #[serde(default)]
    pub q: String,
    /// Only this kind.
    #[serde(default)]
    pub kind: Option<String>,
    /// At most this many (default 200, at most 5000).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// The kind filter: absent or empty is every kind; anything else must be a kind.
pub fn parse_kind(kind: Option<&str>) -> Result<Option<ResourceKind>> {
    match kind.map(str::trim).filter(|k| !k.is_empty()) {
        None => Ok(None),
        Some(text) => text.parse().map(Some).map_err(Error::InvalidInput),
    }
}

/// The page size: default 200, between 1 and 5000.
pub fn parse_limit(limit: Option<usize>) -> Result<usize> {
    let limit = limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(Error::InvalidInput(format!(
            "limit {limit} must be between 1 and {MAX_LIMIT}"
        )));
    }
    Ok(limit)
}

/// One search result: `{id, kind, name, aliases, parent, status, agent}`, `agent` being
/// the agent of the first path of the chain (also the MCP resource index's entries).
pub fn summary(resource: &Resource) -> Value {
    json!({
        "id": resource.id,
        "kind": resource.kind,
        "name": resource.name,
        "aliases": resource.aliases,
        "parent": resource.parent,
        "status": resource.status,
        "agent": resource.paths.first().map(|p| &p.agent),
    })
}

/// `GET /api/resources`.
pub async fn list(
    State(state): State<ApiState>,
    query: std::result::Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<Value>> {
    let Query(query) = query.map_err(|e| Error::InvalidInput(e.body_text()))?;
    let kind = parse_kind(query.kind.as_deref())?;
    let limit = parse_limit(query.limit)?;
    let found = state.agents.inventory().search(&query.q, kind, limit);
    Ok(Json(Value::Array(found.iter().map(summary).collect())))
}

/// `GET /api/resources/{id}`.
pub async fn get(State(state): State<ApiState>, Path(id): Path<String>) -> Result<Json<Value>> {
    let id: ResourceId = id
        .trim()
        .parse()
        .map_err(|e: vigil_shared::resource::ResourceIdError| Error::InvalidInput(e.to_string()))?;
    let view = state
        .agents
        .inventory()
        .get(&id)
        .ok_or_else(|| Error::NotFound(format!("no resource {id}")))?;
    Ok(Json(detail(&state.agents, &view)))
}

/// One resource with its facts, children and routing chain (whether each path's agent
/// is connected now): `GET /api/resources/{id}` and the MCP resource of the same id.
pub fn detail(agents: &Agents, view: &ResourceView) -> Value {
    let chain: Vec<Value> = view
        .resource
        .paths
        .iter()
        .map(|path| {
            let connected = path
                .agent
                .parse::<AgentId>()
                .is_ok_and(|agent| agents.is_connected(agent));
            json!({
                "agent": path.agent,
                "target": path.target.to_string(),
                "via": path.via,
                "connected": connected,
            })
        })
        .collect();
    let r = &view.resource;
    json!({
        "id": r.id,
        "kind": r.kind,
        "name": r.name,
        "aliases": r.aliases,
        "parent": r.parent,
        "status": r.status,
        "facts": r.facts,
        "children": view.children,
        "chain": chain,
    })
}
