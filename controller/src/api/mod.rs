//! The HTTP API (axum): bearer authentication ([`auth`]), a span per request
//! ([`request_span`]), JSON bodies with a size limit ([`json_body`]), the agent routes
//! ([`agents`]) and remote execution ([`exec`], [`fanout`], [`raw_exec`], [`exec_output`]). Every
//! error is an [`Error`](crate::Error) rendered as `{"error":{code,message,details}}`.
//! Approvals ([`approvals`]), the audit log ([`audit`]), readiness and metrics
//! ([`metrics`]) complete it; [`router`] puts each route in a group by the role it needs.

pub mod agents;
pub mod approvals;
pub mod audit;
pub mod auth;
pub mod chat;
pub mod cluster;
pub mod exec;
pub mod exec_output;
pub mod fanout;
pub mod findings;
pub mod grpc_chat;
pub mod install;
pub mod join_tokens;
pub mod json_body;
pub mod me;
pub mod metrics;
pub mod notify;
pub mod openai_compat;
pub mod rate;
#[cfg(feature = "raw-exec")]
pub mod raw_exec;
pub mod request_span;
pub mod resources;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware;
use axum::routing::{delete, get, post, put};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use crate::exec::{ExecExit, ExecOutcome};
pub use auth::{Principal, Role};
pub use metrics::Metrics;

use crate::access::Access;
use crate::agents::Agents;
use crate::approvals::{Approvals, ControlLevel};
use crate::assistant::Assistant;
use crate::audit::AuditLog;
use crate::error::ApiCode;
use crate::exec::ExecService;
use crate::{Error, Result};

/// What the handlers share.
#[derive(Debug, Clone)]
pub struct ApiState {
    /// The agent registry.
    pub agents: Agents,
    /// Routes, dispatches and audits commands.
    pub exec: ExecService,
    /// The approval lifecycle of writes.
    pub approvals: Approvals,
    /// The audit log.
    pub audit: AuditLog,
    /// API tokens: who a bearer token is.
    pub access: Access,
    /// The chat service.
    pub assistant: Assistant,
    /// The controller's control level (the ceiling of every session's).
    pub control_level: ControlLevel,
    /// Prometheus metrics.
    pub metrics: Arc<Metrics>,
    /// Each API token's request budget per class.
    pub rate: rate::RateLimits,
    /// This replica among the controller's replicas.
    pub cluster: crate::cluster::Cluster,
    /// The MCP server's settings (`/mcp`).
    pub mcp: crate::mcp::McpSettings,
    /// Findings of patrol checks and alerts.
    pub findings: crate::findings::Findings,
    /// Investigations and their budget.
    pub investigator: crate::findings::investigate::Investigator,
}

/// Options that change which routes exist.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiOptions {
    /// Serve `POST /api/raw-exec` (end-to-end tests of the agent's guard only; only in
    /// builds with the `raw-exec` feature).
    pub raw_exec: bool,
}

/// The API's routes.
pub fn router(state: ApiState, options: ApiOptions) -> Router {
    // Every route declares its role by the group it is in; costly ones also take from the
    // caller's rate limit (inside the role check, which names the caller).
    let limited = |class: rate::Class| {
        middleware::from_fn_with_state((state.rate.clone(), class), rate::limit)
    };
    let viewer = Router::new()
        .route("/api/me", get(me::me))
        .route("/api/agents", get(agents::list))
        .route("/api/agents/{id}", get(agents::get))
        .route(
            "/api/exec",
            post(exec::exec).route_layer(limited(rate::Class::Exec)),
        )
        .route(
            "/api/exec/fanout",
            post(fanout::fanout).route_layer(limited(rate::Class::Fanout)),
        )
        .route("/api/resources", get(resources::list))
        .route("/api/resources/{id}", get(resources::get))
        .route("/api/ai/approvals", get(approvals::list))
        .route("/api/ai/approvals/{id}", get(approvals::get))
        .route(
            "/api/ai/chat",
            post(chat::chat).route_layer(limited(rate::Class::Chat)),
        )
        .route("/api/ai/sessions", get(chat::list))
        .route(
            "/api/ai/sessions/{id}",
            get(chat::get).delete(chat::delete).patch(chat::rename),
        )
        .route("/api/ai/sessions/{id}/messages", get(chat::messages))
        .route("/api/ai/sessions/{id}/cancel", post(chat::cancel))
        .route("/api/findings", get(findings::list))
        .route("/api/findings/summary", get(findings::summary))
        .route("/api/findings/{id}", get(findings::get))
        .route("/v1/models", get(openai_compat::models))
        .route(
            "/v1/chat/completions",
            post(openai_compat::completions).route_layer(limited(rate::Class::Chat)),
        )
        .merge(crate::mcp::routes(&state).route_layer(limited(rate::Class::Exec)));
    let operator = Router::new()
        .route(
            "/api/exec/write",
            post(approvals::request_write).route_layer(limited(rate::Class::Exec)),
        )
        .route("/api/ai/approvals/{id}/approve", post(approvals::approve))
        .route("/api/ai/approvals/{id}/deny", post(approvals::deny))
        .route("/api/findings/{id}/ack", post(findings::ack))
        .route("/api/findings/{id}/snooze", post(findings::snooze))
        .route("/api/alerts/alertmanager", post(findings::alertmanager));
    let admin = Router::new()
        .route("/api/agents/{id}/revoke", post(agents::revoke))
        .route(
            "/api/agents/{id}/hidden-paths",
            put(agents::set_hidden_paths),
        )
        .route("/api/cluster", get(cluster::list))
        .route("/api/audit", get(audit::list))
        .route("/api/audit/verify", get(audit::verify))
        .route("/api/join-tokens", post(join_tokens::create))
        .route("/api/notify/channels", get(notify::list).post(notify::save))
        .route("/api/notify/channels/{name}", delete(notify::remove))
        .route("/api/notify/deliveries", get(notify::deliveries));
    // Only builds with the `raw-exec` feature (the test support's) have this route.
    #[cfg(feature = "raw-exec")]
    let admin = if options.raw_exec {
        admin.route(
            "/api/raw-exec",
            post(raw_exec::raw_exec).route_layer(limited(rate::Class::Exec)),
        )
    } else {
        admin
    };
    #[cfg(not(feature = "raw-exec"))]
    let _ = options;
    let guard = |router: Router<ApiState>, role: Role| {
        router.route_layer(middleware::from_fn_with_state(
            (state.clone(), role),
            auth::require_role,
        ))
    };
    let api = guard(viewer, Role::Viewer)
        .merge(guard(operator, Role::Operator))
        .merge(guard(admin, Role::Admin));
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(metrics::readyz))
        .route("/metrics", get(metrics::metrics))
        .route("/install.sh", get(install::script))
        .route("/download/vigil-agent", get(install::download))
        .merge(api)
        .merge(crate::web::router())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(json_body::MAX_BODY_BYTES))
        .layer(middleware::from_fn_with_state(
            state.metrics.clone(),
            metrics::count_requests,
        ))
        .layer(middleware::from_fn(request_span::trace_request))
        .with_state(state)
}

/// Serves `router` on `listener` until `shutdown` is cancelled. Connections send without
/// Nagle's delay: streamed events are small, and waiting for an ACK would hold each one
/// back up to 40 ms.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: CancellationToken,
) -> Result<()> {
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(|tcp| {
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "cannot set TCP_NODELAY");
        }
    });
    axum::serve(
        listener,
        router.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown.cancelled_owned())
    .await
    .map_err(|e| Error::Network(format!("HTTP server: {e}")))
}

async fn healthz() -> axum::Json<Value> {
    axum::Json(json!({ "status": "ok" }))
}

async fn not_found() -> Error {
    Error::NotFound("no such route".into())
}

async fn method_not_allowed() -> Error {
    Error::coded(
        ApiCode::MethodNotAllowed,
        "method not allowed on this route",
    )
}
