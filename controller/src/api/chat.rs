//! The chat API: `POST /api/ai/chat` answers a `text/event-stream` of the events of DESIGN
//! §8 (keep-alive comments while a turn waits, for example for a decision), sessions and
//! their messages, and cancel. A client that goes away does not stop its turn.

use std::convert::Infallible;
use std::time::Duration;

use axum::Json;
use axum::extract::{Extension, Path, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio_stream::wrappers::UnboundedReceiverStream;

use super::ApiState;
use super::auth::Principal;
use super::json_body::JsonBody;
use crate::Result;
use crate::assistant::ChatBody;
use crate::store::chat::{MessageRow, SessionRow};

/// Interval of keep-alive comments on the chat stream.
pub const KEEP_ALIVE: Duration = Duration::from_secs(10);

/// `POST /api/ai/chat`.
pub async fn chat(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    JsonBody(body): JsonBody<ChatBody>,
) -> Result<Response> {
    let events = state.assistant.start_turn(principal, body).await?;
    let stream = UnboundedReceiverStream::new(events).map(|event| {
        Ok::<_, Infallible>(
            Event::default()
                .event(event.name())
                .data(event.data().to_string()),
        )
    });
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response())
}

/// `GET /api/ai/sessions`.
pub async fn list(State(state): State<ApiState>) -> Result<Json<Vec<Value>>> {
    let sessions = state.assistant.sessions().await?;
    Ok(Json(
        sessions.iter().map(|s| session_json(&state, s)).collect(),
    ))
}

fn session_json(state: &ApiState, session: &SessionRow) -> Value {
    let mut value = serde_json::to_value(session).unwrap_or_default();
    value["running"] = json!(state.assistant.is_running(&session.id));
    value
}

/// `GET /api/ai/sessions/{id}`.
pub async fn get(State(state): State<ApiState>, Path(id): Path<String>) -> Result<Json<Value>> {
    let row = state.assistant.session(&id).await?;
    Ok(Json(session_json(&state, &row)))
}

/// `DELETE /api/ai/sessions/{id}`: cancels a running turn, withdraws its approvals and
/// deletes the session with its messages.
pub async fn delete(State(state): State<ApiState>, Path(id): Path<String>) -> Result<StatusCode> {
    state.assistant.delete_session(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The body of `PATCH /api/ai/sessions/{id}`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RenameBody {
    /// The new title: 1 to 200 characters after trimming.
    pub title: String,
}

/// `PATCH /api/ai/sessions/{id}`: renames a session.
pub async fn rename(
    State(state): State<ApiState>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<RenameBody>,
) -> Result<Json<Value>> {
    let row = state.assistant.rename_session(&id, &body.title).await?;
    Ok(Json(session_json(&state, &row)))
}

/// `GET /api/ai/sessions/{id}/messages`.
pub async fn messages(
    State(state): State<ApiState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<MessageRow>>> {
    Ok(Json(state.assistant.messages(&id).await?))
}

/// `POST /api/ai/sessions/{id}/cancel`.
pub async fn cancel(State(state): State<ApiState>, Path(id): Path<String>) -> Result<Json<Value>> {
    let cancelled = state.assistant.cancel(&id).await?;
    Ok(Json(json!({ "session_id": id, "cancelled": cancelled })))
}
