//! `GET /metrics` (Prometheus text, no authentication: it is served on the loopback HTTP
//! listener; front it with a proxy that restricts it before exposing the API) and
//! `GET /readyz` (503 while the database does not answer). Label values are bounded: the
//! route template (never the raw path), the status code and a fixed set of outcomes.

use std::sync::Arc;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::ApiState;
pub use crate::metrics::Metrics;

/// Middleware: counts each request by its route template and status.
pub async fn count_requests(
    State(metrics): State<Arc<Metrics>>,
    request: Request,
    next: Next,
) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let response = next.run(request).await;
    metrics.http_request(route, response.status().as_u16());
    response
}

/// `GET /metrics`.
pub async fn metrics(State(state): State<ApiState>) -> Response {
    let text = state.metrics.render(state.agents.sessions().all().len());
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

/// `GET /readyz`: 200 when the database answers and this replica holds its lease, 503
/// otherwise (a load balancer then sends requests to another replica).
pub async fn readyz(State(state): State<ApiState>) -> Response {
    if state.cluster.is_fenced() || state.cluster.is_draining() {
        let reason = if state.cluster.is_fenced() {
            "fenced: this replica lost its database lease"
        } else {
            "draining: this replica is shutting down"
        };
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            axum::Json(json!({ "status": "unavailable", "reason": reason })),
        )
            .into_response();
    }
    if state.agents.database_answers().await {
        axum::Json(json!({ "status": "ready" })).into_response()
    } else {
        tracing::warn!("not ready: the database does not answer");
        (
            StatusCode::SERVICE_UNAVAILABLE,
            axum::Json(json!({ "status": "unavailable", "reason": "database unreachable" })),
        )
            .into_response()
    }
}
