//! Notification channels over HTTP (admin): `GET /api/notify/channels` (secrets never
//! shown), `POST` one (created, or replaced by name), `DELETE /api/notify/channels/{name}`,
//! and `GET /api/notify/deliveries?status=…`, the outbox with its failures.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

use super::ApiState;
use super::json_body::JsonBody;
use crate::notify::{Channel, ChannelView};
use crate::{Error, Result};

/// Most deliveries one list answers.
const MAX_DELIVERIES: i64 = 500;

/// `GET /api/notify/channels`.
pub async fn list(State(state): State<ApiState>) -> Result<Json<Value>> {
    let channels = state.findings.notifier().channel_views().await?;
    Ok(Json(json!({ "channels": channels })))
}

/// `POST /api/notify/channels`: 201 when new, 200 when it replaced one.
pub async fn save(
    State(state): State<ApiState>,
    JsonBody(channel): JsonBody<Channel>,
) -> Result<(StatusCode, Json<ChannelView>)> {
    let notifier = state.findings.notifier();
    let created = notifier.save_channel(&channel).await?;
    tracing::info!(channel = %channel.name, created, "notification channel saved");
    let view = notifier
        .channel_views()
        .await?
        .into_iter()
        .find(|c| c.name == channel.name)
        .ok_or_else(|| Error::NotFound(format!("channel {:?} vanished", channel.name)))?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(view)))
}

/// `DELETE /api/notify/channels/{name}`.
pub async fn remove(State(state): State<ApiState>, Path(name): Path<String>) -> Result<StatusCode> {
    state.findings.notifier().delete_channel(&name).await?;
    tracing::info!(channel = %name, "notification channel deleted");
    Ok(StatusCode::NO_CONTENT)
}

/// The query of the deliveries.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeliveriesQuery {
    /// `pending`, `delivered` or `failed`; all when absent.
    pub status: Option<String>,
}

/// `GET /api/notify/deliveries`.
pub async fn deliveries(
    State(state): State<ApiState>,
    Query(query): Query<DeliveriesQuery>,
) -> Result<Json<Value>> {
    let status = query
        .status
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty());
    if let Some(status) = status
        && !matches!(status, "pending" | "delivered" | "failed")
    {
        return Err(Error::InvalidInput(format!(
            "unknown status {status:?} (pending, delivered or failed)"
        )));
    }
    let rows = state
        .findings
        .store()
        .deliveries(status, MAX_DELIVERIES)
        .await?;
    let deliveries: Vec<Value> = rows
        .iter()
        .map(|r| {
            json!({
                "id": r.id, "channel": r.channel, "event": r.event, "status": r.status,
                "attempts": r.attempts, "last_error": r.last_error,
                "created_at": crate::clock::rfc3339(r.created_at),
                "next_attempt_at": crate::clock::rfc3339(r.next_attempt_at),
                "done_at": r.done_at.map(crate::clock::rfc3339),
            })
        })
        .collect();
    Ok(Json(json!({ "deliveries": deliveries })))
}
