//! `GET /api/ai/approvals?status=…` (viewer) and `POST /api/ai/approvals/{id}/approve` and
//! `…/deny {reason}` (operator). [`crate::approvals::Approvals`] decides (atomically, once),
//! audits, counts, and runs an approved write in the background.

use axum::Json;
use axum::extract::{Extension, Path, Query, State};
use serde::Deserialize;

use super::ApiState;
use super::auth::Principal;
use super::json_body::JsonBody;
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
    let row = state
        .approvals
        .decide(id, decision, &principal.name, reason)
        .await?;
    Ok(Json(row))
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
