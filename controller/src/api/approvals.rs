//! `GET /api/ai/approvals?status=…` (viewer) and `POST /api/ai/approvals/{id}/approve` and
//! `…/deny {reason}` (operator). [`crate::approvals::Approvals`] decides (atomically, once),
//! audits, counts, and runs an approved write in the background.

use axum::Json;
use axum::extract::{Extension, Path, Query, State};
use axum::http::StatusCode;
use serde::Deserialize;
use vigil_shared::policy::classify;

use super::ApiState;
use super::auth::Principal;
use super::exec::{ExecBody, check_command, route};
use super::json_body::JsonBody;
use crate::approvals::ControlLevel;
use crate::error::ApiCode;
use crate::store::approvals::{ApprovalRow, ApprovalStatus, Decision, NewApproval};
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
    Ok(Json(state.approvals.list(status).await?))
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

/// `GET /api/ai/approvals/{id}`.
pub async fn get(
    State(state): State<ApiState>,
    Path(id): Path<String>,
) -> Result<Json<ApprovalRow>> {
    state
        .approvals
        .get(&id)
        .await?
        .map(Json)
        .ok_or_else(|| Error::NotFound(format!("no approval with id {id:?}")))
}

/// `POST /api/exec/write`: asks for a write through an approval, without any model (the
/// body is that of `POST /api/exec`). Answers `202` with the pending approval; a person
/// approves it, then it runs with a signed grant. Refused when the controller's control
/// level is `read_only`.
pub async fn request_write(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    JsonBody(body): JsonBody<ExecBody>,
) -> Result<(StatusCode, Json<ApprovalRow>)> {
    let timeout_s = check_command(&body.command, body.timeout_s)?;
    if state.control_level == ControlLevel::ReadOnly {
        return Err(Error::coded_with(
            ApiCode::PolicyBlocked,
            "the controller's control level is read_only: writes are refused",
            serde_json::json!({ "control_level": "read_only" }),
        ));
    }
    let route = route(&state.exec, &body)?;
    let classification = classify(&body.command);
    let pending = state
        .approvals
        .request(NewApproval {
            command: body.command,
            target: Some(route.target.to_string()),
            agent: Some(route.agent.to_string()),
            resource_id: route.resource.as_ref().map(ToString::to_string),
            risk: classification.risk.as_str().into(),
            reasons: classification.reasons,
            created_by: principal.name.clone(),
            timeout_s,
            ..NewApproval::default()
        })
        .await?;
    Ok((StatusCode::ACCEPTED, Json(pending.row.clone())))
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
