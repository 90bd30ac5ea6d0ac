//! `POST /mcp` (and the `GET`/`DELETE` of a streamable HTTP session): the SDK's streamable
//! HTTP service behind the API's bearer tokens (any role; the role decides what is
//! offered), the caller's rate limit, and an Origin check. The specification asks servers
//! to validate Origin against DNS rebinding: a request carrying an `Origin` header must
//! name one of `--mcp-allowed-origins` (none by default), one without it (every non-browser
//! client) passes. The check is ours rather than the SDK's so a refusal is the API's
//! structured `403 FORBIDDEN`; the SDK's Host allow-list is off because every request
//! needs a token a rebinding page cannot have.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::header::ORIGIN;
use axum::middleware::{self, Next};
use axum::response::Response;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;

use super::calls::{DEFAULT_APPROVAL_WAIT_S, McpCalls};
use super::handler::VigilMcp;
use crate::api::ApiState;
use crate::error::ApiCode;
use crate::{Error, Result};

/// The route.
pub const PATH: &str = "/mcp";

/// Settings of the MCP server.
#[derive(Debug, Clone)]
pub struct McpSettings {
    /// How long a write call waits for its decision before answering that it is pending.
    pub approval_wait: Duration,
    /// Browser origins allowed to call `/mcp` (`scheme://host[:port]`).
    pub allowed_origins: Vec<String>,
}

impl Default for McpSettings {
    fn default() -> Self {
        McpSettings {
            approval_wait: Duration::from_secs(DEFAULT_APPROVAL_WAIT_S),
            allowed_origins: Vec::new(),
        }
    }
}

/// `/mcp`, to be put behind the viewer role's guard.
pub fn routes(state: &ApiState) -> Router<ApiState> {
    let calls = McpCalls::new(
        state.assistant.clone(),
        state.control_level,
        state.mcp.approval_wait,
    );
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .disable_allowed_origins();
    let service = StreamableHttpService::new(
        move || Ok(VigilMcp::new(calls.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let origins: Arc<Vec<String>> = Arc::new(
        state
            .mcp
            .allowed_origins
            .iter()
            .map(|o| normalize_origin(o))
            .collect(),
    );
    Router::new()
        .route_service(PATH, service)
        .route_layer(middleware::from_fn_with_state(origins, check_origin))
}

/// `scheme://host[:port]` lowercased, without a trailing slash or the scheme's default
/// port, so equal origins compare equal. Anything else (two ports, say) is kept as it is,
/// and so never equals an allowed origin: normalizing twice changes nothing.
pub fn normalize_origin(origin: &str) -> String {
    // Each step only takes characters away, so this ends; it ends where a step changes
    // nothing, so the result normalizes to itself (`/ \v` or `/:443` at the end take more
    // than one step).
    let mut origin = origin.to_ascii_lowercase();
    loop {
        let next = normalize_step(&origin);
        if next == origin {
            return origin;
        }
        origin = next;
    }
}

fn normalize_step(origin: &str) -> String {
    let origin = origin.trim().trim_end_matches('/');
    for (scheme, port) in [("https://", ":443"), ("http://", ":80")] {
        if let Some(bare) = origin.strip_suffix(port)
            && let Some(host) = bare.strip_prefix(scheme)
            // What is left is a host alone (an IPv6 address keeps its brackets).
            && !host.rsplit(']').next().unwrap_or(host).contains(':')
        {
            return bare.to_owned();
        }
    }
    origin.to_owned()
}

/// Refuses a request whose `Origin` is not allowed.
async fn check_origin(
    State(allowed): State<Arc<Vec<String>>>,
    request: Request,
    next: Next,
) -> Result<Response> {
    if let Some(origin) = request.headers().get(ORIGIN) {
        let text = String::from_utf8_lossy(origin.as_bytes()).into_owned();
        if !allowed.contains(&normalize_origin(&text)) {
            tracing::warn!(origin = %text, "refusing an MCP request from an origin not allowed");
            return Err(Error::coded_with(
                ApiCode::Forbidden,
                format!(
                    "requests from Origin {text:?} may not call {PATH}: allow it with \
                     --mcp-allowed-origins (VIGIL_MCP_ALLOWED_ORIGINS)"
                ),
                json!({ "origin": text }),
            ));
        }
    }
    Ok(next.run(request).await)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_compare_by_scheme_host_and_port() {
        assert_eq!(
            normalize_origin("HTTPS://Vigil.example:443/"),
            "https://vigil.example"
        );
        assert_eq!(
            normalize_origin("http://localhost:8640"),
            "http://localhost:8640"
        );
        assert_eq!(normalize_origin("http://a.example:80"), "http://a.example");
        assert_eq!(normalize_origin("http://[::1]:80"), "http://[::1]");
        assert_eq!(normalize_origin("http://a:80:80"), "http://a:80:80");
        assert_ne!(
            normalize_origin("http://a.example:8080"),
            normalize_origin("http://a.example")
        );
        assert_ne!(
            normalize_origin("https://a.example"),
            normalize_origin("http://a.example")
        );
    }

    #[test]
    fn what_takes_more_than_one_step_still_normalizes_to_itself() {
        // Found by the property test on CI: a space left before the slash.
        for origin in [
            "¡\u{b}/",
            "https://a/:443",
            "http://a.example/ /",
            " http://a:80/ ",
        ] {
            let once = normalize_origin(origin);
            assert_eq!(normalize_origin(&once), once, "{origin:?}");
        }
        assert_eq!(normalize_origin("¡\u{b}/"), "¡");
    }
}
