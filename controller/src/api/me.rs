//! `GET /api/me`: who the token is and what it may do. Clients (the web page, the terminal
//! chat) use it to check a token at sign-in, to offer only the control levels the role and
//! the controller allow, and to say whether a model is configured.

use axum::Json;
use axum::extract::{Extension, State};
use serde_json::{Value, json};

use super::ApiState;
use super::auth::Principal;
use crate::approvals::ControlLevel;

/// `GET /api/me`: `{name, role, control_level, control_levels, model, version}`.
/// `control_level` is the default a new session gets; `control_levels` lists every level
/// this caller may choose; `model` is `{provider, model}` or null (direct mode only).
pub async fn me(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
) -> Json<Value> {
    let levels: Vec<&str> = [
        ControlLevel::ReadOnly,
        ControlLevel::Controlled,
        ControlLevel::Autonomous,
    ]
    .into_iter()
    .filter(|level| {
        ControlLevel::for_session(Some(*level), state.control_level, principal.role).is_ok()
    })
    .map(ControlLevel::as_str)
    .collect();
    let default = ControlLevel::for_session(None, state.control_level, principal.role)
        .map(ControlLevel::as_str)
        .unwrap_or("read_only");
    let model = state
        .assistant
        .provider()
        .map(|p| json!({ "provider": p.name(), "model": p.model() }));
    Json(json!({
        "name": principal.name,
        "role": principal.role.as_str(),
        "control_level": default,
        "control_levels": levels,
        "model": model,
        "version": env!("CARGO_PKG_VERSION"),
    }))
}
