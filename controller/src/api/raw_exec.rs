//! `POST /api/raw-exec`, served only with `serve --test-raw-exec`: forwards a request to the
//! agent exactly as given, without classifying it, so end-to-end tests can check the
//! agent's own guard (READ re-classification, grants, read-only mode). Never enable it in
//! production.

use axum::extract::{Extension, State};
use axum::http::HeaderMap;
use axum::response::Response;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::Deserialize;
use vigil_proto::agent::v1::{ExecMode, ExecRequest, Grant};

use super::ApiState;
use super::agents::parse_agent_id;
use super::auth::Principal;
use super::exec_output::respond;
use super::json_body::JsonBody;
use crate::exec::{Trail, parse_target};
use crate::gateway::convert::target_to_proto;
use crate::{Error, Result};

/// The body of `POST /api/raw-exec`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawExecBody {
    /// The agent id.
    pub agent: String,
    /// `read`, `write` or `unspecified`.
    pub mode: String,
    /// The command, sent as is.
    pub command: String,
    /// The target (default `host`; the empty string sends no target at all).
    #[serde(default)]
    pub target: Option<String>,
    /// Sent as is (0 means the agent's default).
    #[serde(default)]
    pub timeout_s: Option<u32>,
    /// Sent as is (0 means the agent's default).
    #[serde(default)]
    pub output_cap_bytes: Option<u64>,
    /// A grant, sent as is.
    #[serde(default)]
    pub grant: Option<RawGrant>,
}

/// A grant in JSON, bytes in standard base64.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGrant {
    /// The approval id.
    pub approval_id: String,
    /// The agent the grant is for (not checked here).
    pub agent_id: String,
    /// The target the grant is for.
    pub target: String,
    /// The granted command, base64.
    pub command_b64: String,
    /// Issue time (Unix seconds).
    pub issued_at: i64,
    /// Expiry (Unix seconds).
    pub expires_at: i64,
    /// The nonce, base64.
    pub nonce_b64: String,
    /// The Ed25519 signature, base64.
    pub signature_b64: String,
}

fn decode(field: &str, value: &str) -> Result<Vec<u8>> {
    BASE64
        .decode(value)
        .map_err(|e| Error::InvalidInput(format!("grant.{field} is not base64: {e}")))
}

impl RawGrant {
    fn to_proto(&self) -> Result<Grant> {
        Ok(Grant {
            approval_id: self.approval_id.clone(),
            agent_id: self.agent_id.clone(),
            target: Some(target_to_proto(&parse_target(Some(&self.target))?)),
            command: decode("command_b64", &self.command_b64)?,
            issued_at_unix: self.issued_at,
            expires_at_unix: self.expires_at,
            nonce: decode("nonce_b64", &self.nonce_b64)?,
            signature: decode("signature_b64", &self.signature_b64)?,
        })
    }
}

/// `POST /api/raw-exec`.
pub async fn raw_exec(
    State(state): State<ApiState>,
    headers: HeaderMap,
    Extension(principal): Extension<Principal>,
    JsonBody(body): JsonBody<RawExecBody>,
) -> Result<Response> {
    let mode = match body.mode.as_str() {
        "read" => ExecMode::Read,
        "write" => ExecMode::Write,
        "unspecified" => ExecMode::Unspecified,
        other => {
            return Err(Error::InvalidInput(format!(
                "mode {other:?} is not one of read, write, unspecified"
            )));
        }
    };
    let target_text = body.target.clone().unwrap_or_else(|| "host".into());
    let target = match body.target.as_deref() {
        Some("") => None,
        other => Some(target_to_proto(&parse_target(other)?)),
    };
    let grant = body.grant.as_ref().map(RawGrant::to_proto).transpose()?;
    let agent = parse_agent_id(&body.agent)?;
    tracing::warn!(%agent, mode = body.mode, "raw-exec: forwarding without classification (test only)");
    let request = ExecRequest {
        request_id: String::new(),
        target,
        command: body.command,
        mode: mode as i32,
        grant,
        timeout_s: body.timeout_s.unwrap_or(0),
        output_cap_bytes: body.output_cap_bytes.unwrap_or(0),
    };
    let trail = Trail {
        actor: &principal.name,
        action: "raw_exec",
        target: &target_text,
        approval_id: None,
    };
    let running = state.exec.start_request(agent, request, trail).await?;
    respond(running, &headers).await
}
