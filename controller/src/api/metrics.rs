//! `GET /metrics` (Prometheus text, no authentication: it is served on the loopback HTTP
//! listener; front it with a proxy that restricts it before exposing the API) and
//! `GET /readyz` (503 while the database does not answer). Label values are bounded: the
//! route template (never the raw path), the status code and a fixed set of outcomes.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use serde_json::json;

use super::ApiState;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HttpLabels {
    route: String,
    status: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: String,
}

/// Outcomes of approval decisions that get their own label value; others are `other`.
const APPROVAL_OUTCOMES: [&str; 5] = [
    "approved",
    "denied",
    "conflict",
    "approval_expired",
    "not_found",
];

/// The controller's metrics.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    http: Family<HttpLabels, Counter>,
    agents: Gauge,
    exec_latency: Histogram,
    approvals: Family<OutcomeLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Registers every metric.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("vigil");
        let http = Family::<HttpLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests by route template and status",
            http.clone(),
        );
        let agents = Gauge::default();
        registry.register(
            "agents_connected",
            "Agents with an open stream",
            agents.clone(),
        );
        let exec_latency = Histogram::new(exponential_buckets(0.005, 2.0, 14));
        registry.register(
            "exec_latency_seconds",
            "Time from POST /api/exec to its response head",
            exec_latency.clone(),
        );
        let approvals = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "approval_decisions",
            "Approval decisions by outcome",
            approvals.clone(),
        );
        Metrics {
            registry,
            http,
            agents,
            exec_latency,
            approvals,
        }
    }

    /// Counts an approval decision (`approved`, `denied`, or the error code).
    pub fn approval(&self, outcome: &str) {
        let outcome = if APPROVAL_OUTCOMES.contains(&outcome) {
            outcome
        } else {
            "other"
        };
        self.approvals
            .get_or_create(&OutcomeLabels {
                outcome: outcome.into(),
            })
            .inc();
    }

    /// Records the latency of one exec.
    pub fn exec(&self, elapsed: Duration) {
        self.exec_latency.observe(elapsed.as_secs_f64());
    }

    fn render(&self, connected: usize) -> String {
        self.agents
            .set(i64::try_from(connected).unwrap_or(i64::MAX));
        let mut text = String::new();
        if encode(&mut text, &self.registry).is_err() {
            tracing::error!("cannot encode the metrics");
        }
        text
    }
}

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
    metrics
        .http
        .get_or_create(&HttpLabels {
            route,
            status: response.status().as_u16().to_string(),
        })
        .inc();
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

/// `GET /readyz`: 200 when the database answers, 503 otherwise.
pub async fn readyz(State(state): State<ApiState>) -> Response {
    if state.agents.store().ping().await {
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
