//! `GET /api/ai/approvals?status=…` (viewer) and `POST /api/ai/approvals/{id}/approve` and
//! `…/deny {reason}` (operator). Deciding is atomic in the store; each decision is audited
//! and counted.

use axum::Json;
use axum::extract::{Extension, Path, Query, State};
use serde::Deserialize;

use super::ApiState;
use super::auth::Principal;
use super::json_body::JsonBody;
use crate::audit::{self, Entry};
use crate::clock::unix_now;
use crate::store::approvals::{ApprovalRow, ApprovalStatus, Decision};
use crate::{Error, Result};

/// The query of the list.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    /// `pending` (default), `approved`, `denied`, `expired` or `all`.
    pub status: Option<String>,
}

/// The body of a denial.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DenyBody {
    /// Why (shown to the requester and audited).
    #[serde(default)]
    pub reason: Option<String>,
}

/// `GET /api/ai/approvals`.
pub async fn list(
    State(state): State<ApiState>,
    Query(query): Query<ListQuery>,
) -> Result<Json<Vec<ApprovalRow>>> {
    let status = match query.status.as_deref().map(str::trim) {
        None | Some("") => Some(ApprovalStatus::Pending),
        Some("all") => None,
        Some(text) => Some(ApprovalStatus::parse(text)?),
    };
    let rows = state
        .agents
        .store()
        .list_approvals(status, unix_now())
        .await?;
    Ok(Json(rows))
}

async fn decide(
    state: &ApiState,
    principal: &Principal,
    id: &str,
    decision: Decision,
    reason: Option<&str>,
) -> Result<Json<ApprovalRow>> {
    let store = state.agents.store();
    let (action, label) = match decision {
        Decision::Approve => ("approval.approve", "approved"),
        Decision::Deny => ("approval.deny", "denied"),
    };
    let result = store
        .decide_approval(id, decision, &principal.name, reason, unix_now())
        .await;
    let outcome = match &result {
        Ok(_) => label.to_owned(),
        Err(e) => e.api_code().to_ascii_lowercase(),
    };
    state.metrics.approval(&outcome);
    if let Ok(row) = &result {
        tracing::info!(approval = %row.id, by = %principal.name, outcome = %outcome, "approval decided");
        let mut entry = Entry::new(&principal.name, action, &outcome)
            .command(&row.command)
            .approval(&row.id);
        entry.agent.clone_from(&row.agent);
        entry.target.clone_from(&row.target);
        audit::record(store, entry).await;
    }
    result.map(Json)
}

/// `POST /api/ai/approvals/{id}/approve`.
pub async fn approve(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<ApprovalRow>> {
    decide(&state, &principal, &id, Decision::Approve, None).await
}

/// `POST /api/ai/approvals/{id}/deny`.
pub async fn deny(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<DenyBody>,
) -> Result<Json<ApprovalRow>> {
    let reason = body.reason.as_deref().map(str::trim);
    if reason.is_some_and(|r| r.len() > 2000) {
        return Err(Error::InvalidInput("reason is over 2000 bytes".into()));
    }
    decide(&state, &principal, &id, Decision::Deny, reason).await
}
