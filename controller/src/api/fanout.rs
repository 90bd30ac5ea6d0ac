//! `POST /api/exec/fanout`: one read on many targets. The handler checks and classifies
//! the command once (a refusal is one audit row and nothing is sent), then the exec
//! service runs the fan-out ([`crate::exec::fanout`]). The answer is one JSON object
//! (`Accept: application/json`: `{results, summary}`, results in selection order) or a
//! `text/event-stream`: `start` `{targets}`, a `result` per target as it ends, then
//! `summary`. A client that goes away cancels the commands still running.

use std::collections::BTreeMap;
use std::convert::Infallible;

use axum::Json;
use axum::extract::{Extension, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream::{self, StreamExt};
use serde::Deserialize;
use serde_json::json;
use vigil_shared::policy::classify;

use super::ApiState;
use super::auth::Principal;
use super::exec::check_command;
use super::exec_output::ResponseFormat;
use super::json_body::JsonBody;
use crate::Result;
use crate::exec::fanout::{FANOUT_ACTION, Fanout, FanoutEvent, FanoutSpec, Selection};
use crate::exec::require_read;

/// The body of `POST /api/exec/fanout`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FanoutBody {
    /// Every enrolled, non-revoked agent's host.
    #[serde(default)]
    pub all: bool,
    /// Agent ids (their host) and resource ids (routed along their chain).
    #[serde(default)]
    pub targets: Vec<String>,
    /// Keep the targets whose agent carries every pair.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// One shell command; it must be a read.
    pub command: String,
    /// Timeout per target in seconds (default 30, at most 300).
    #[serde(default)]
    pub timeout_s: Option<u32>,
}

/// `POST /api/exec/fanout`.
pub async fn fanout(
    State(state): State<ApiState>,
    headers: HeaderMap,
    Extension(principal): Extension<Principal>,
    JsonBody(body): JsonBody<FanoutBody>,
) -> Result<Response> {
    let timeout_s = check_command(&body.command, body.timeout_s)?;
    let selection = Selection {
        all: body.all,
        targets: body.targets,
        labels: body.labels,
    };
    selection.check()?;
    if let Err(refusal) = require_read(&classify(&body.command)) {
        return Err(state
            .exec
            .refuse(
                &principal.name,
                FANOUT_ACTION,
                None,
                selection.describe(),
                &body.command,
                refusal,
            )
            .await);
    }
    let fanout = state
        .exec
        .fanout(FanoutSpec {
            actor: principal.name.clone(),
            selection,
            command: body.command,
            timeout_s,
        })
        .await?;
    Ok(match ResponseFormat::from_headers(&headers) {
        ResponseFormat::Json => Json(fanout.collect().await).into_response(),
        ResponseFormat::EventStream => events(fanout).into_response(),
    })
}

/// The fan-out as server-sent events. The response body drives it: when the client goes
/// away the body is dropped, and with it the fan-out.
fn events(fanout: Fanout) -> Sse<impl futures_util::Stream<Item = Result<Event, Infallible>>> {
    let start = json!({ "targets": fanout.targets() });
    let start = Event::default().event("start").data(start.to_string());
    let rest = fanout.map(|event| {
        let (name, data) = match &event {
            FanoutEvent::Result(result) => ("result", serde_json::to_string(result)),
            FanoutEvent::Summary(summary) => ("summary", serde_json::to_string(summary)),
        };
        Ok(Event::default().event(name).data(data.unwrap_or_default()))
    });
    Sse::new(stream::once(async { Ok(start) }).chain(rest)).keep_alive(KeepAlive::default())
}
