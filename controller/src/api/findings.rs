//! Findings over HTTP: `GET /api/findings?status=…`, one finding, the header's summary
//! (viewer); `POST /api/findings/{id}/ack` and `/snooze {until}` and Alertmanager's
//! webhook `POST /api/alerts/alertmanager` (operator). [`crate::findings::Findings`]
//! decides; these handlers parse and shape.

use axum::Json;
use axum::extract::{Extension, Path, Query, Request, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

use super::ApiState;
use super::auth::Principal;
use super::json_body::JsonBody;
use crate::error::ApiCode;
use crate::findings::{AlertReport, FindingView};
use crate::{Error, Result};

/// Largest Alertmanager notification accepted, in bytes.
pub const MAX_ALERT_BODY_BYTES: usize = 4 * 1024 * 1024;

/// The query of the list.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    /// `open`, `acknowledged` or `resolved`; all when absent.
    pub status: Option<String>,
}

/// `GET /api/findings`.
pub async fn list(
    State(state): State<ApiState>,
    Query(query): Query<ListQuery>,
) -> Result<Json<Value>> {
    let status = query
        .status
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty() && *s != "all");
    let rows = state.findings.list(status).await?;
    let findings: Vec<FindingView> = rows.iter().map(FindingView::from).collect();
    Ok(Json(json!({ "findings": findings })))
}

/// `GET /api/findings/{id}`.
pub async fn get(
    State(state): State<ApiState>,
    Path(id): Path<String>,
) -> Result<Json<FindingView>> {
    Ok(Json(FindingView::from(&state.findings.get(&id).await?)))
}

/// `GET /api/findings/summary`: open findings (not snoozed) and the unattended budget.
pub async fn summary(State(state): State<ApiState>) -> Result<Json<Value>> {
    let open = state.findings.open_count().await?;
    let budget = state.investigator.budget().await?;
    Ok(Json(json!({ "open": open, "budget": budget })))
}

/// `POST /api/findings/{id}/ack`.
pub async fn ack(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<FindingView>> {
    let row = state.findings.acknowledge(&id, &principal.name).await?;
    Ok(Json(FindingView::from(&row)))
}

/// The body of a snooze: `until` as RFC 3339 or unix seconds.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnoozeBody {
    pub until: Value,
}

/// `POST /api/findings/{id}/snooze {until}`.
pub async fn snooze(
    State(state): State<ApiState>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<SnoozeBody>,
) -> Result<Json<FindingView>> {
    let until = match &body.until {
        Value::Number(n) => n.as_i64(),
        Value::String(text) => {
            time::OffsetDateTime::parse(text.trim(), &time::format_description::well_known::Rfc3339)
                .ok()
                .map(time::OffsetDateTime::unix_timestamp)
        }
        _ => None,
    }
    .ok_or_else(|| {
        Error::InvalidInput(
            "until must be an RFC 3339 time (2026-11-28T09:00:00Z) or unix seconds".into(),
        )
    })?;
    let row = state.findings.snooze(&id, until).await?;
    Ok(Json(FindingView::from(&row)))
}

/// `POST /api/alerts/alertmanager`: Alertmanager's webhook, version 4 (up to
/// [`MAX_ALERT_BODY_BYTES`]).
pub async fn alertmanager(
    State(state): State<ApiState>,
    request: Request,
) -> Result<(StatusCode, Json<AlertReport>)> {
    let too_large = || {
        Error::coded_with(
            ApiCode::PayloadTooLarge,
            format!("the notification is larger than {MAX_ALERT_BODY_BYTES} bytes"),
            json!({ "max_bytes": MAX_ALERT_BODY_BYTES }),
        )
    };
    // A declared length over the limit is refused before a byte is read.
    let declared = request
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_ALERT_BODY_BYTES as u64) {
        return Err(too_large());
    }
    let body = axum::body::to_bytes(request.into_body(), MAX_ALERT_BODY_BYTES)
        .await
        .map_err(|_| too_large())?;
    let report = state.findings.alertmanager(&body).await?;
    tracing::info!(
        firing = report.firing,
        resolved = report.resolved,
        unmatched = report.unmatched,
        "Alertmanager notification"
    );
    Ok((StatusCode::OK, Json(report)))
}
