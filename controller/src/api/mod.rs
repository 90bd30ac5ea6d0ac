//! The HTTP API (axum): bearer authentication ([`auth`]), a span per request
//! ([`request_span`]), JSON bodies with a size limit ([`json_body`]), the agent routes
//! ([`agents`]) and remote execution ([`exec`], [`raw_exec`], [`exec_output`]). Every
//! error is an [`Error`](crate::Error) rendered as `{"error":{code,message,details}}`.
//! New route groups (approvals, audit, metrics) are added in [`router`].

pub mod agents;
pub mod auth;
pub mod exec;
pub mod exec_output;
pub mod json_body;
pub mod raw_exec;
pub mod request_span;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware;
use axum::routing::{get, post};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use auth::{AdminAuth, Principal, Role};
pub use exec_output::{ExecExit, ExecOutcome};

use crate::agents::Agents;
use crate::gateway::Dispatcher;
use crate::{Error, Result};

/// What the handlers share.
#[derive(Debug, Clone)]
pub struct ApiState {
    /// The agent registry.
    pub agents: Agents,
    /// Sends commands to agents.
    pub dispatcher: Dispatcher,
    /// The bearer-token check.
    pub auth: Arc<AdminAuth>,
}

/// Options that change which routes exist.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiOptions {
    /// Serve `POST /api/raw-exec` (end-to-end tests of the agent's guard only).
    pub raw_exec: bool,
}

/// The API's routes.
pub fn router(state: ApiState, options: ApiOptions) -> Router {
    let mut api = Router::new()
        .route("/api/agents", get(agents::list))
        .route("/api/agents/{id}/revoke", post(agents::revoke))
        .route("/api/exec", post(exec::exec));
    if options.raw_exec {
        api = api.route("/api/raw-exec", post(raw_exec::raw_exec));
    }
    let api = api.route_layer(middleware::from_fn_with_state(
        state.clone(),
        auth::require_token,
    ));
    Router::new()
        .route("/healthz", get(healthz))
        .merge(api)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(json_body::MAX_BODY_BYTES))
        .layer(middleware::from_fn(request_span::trace_request))
        .with_state(state)
}

/// Serves `router` on `listener` until `shutdown` is cancelled.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: CancellationToken,
) -> Result<()> {
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
    Error::Api {
        status: 405,
        code: "INVALID_INPUT".into(),
        message: "method not allowed on this route".into(),
        details: json!({}),
    }
}
