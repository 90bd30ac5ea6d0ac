//! `vigil-controller mcp`: an MCP server on standard input and output that forwards every
//! request to a running controller's `POST /mcp`, for MCP clients that launch a local
//! command rather than connect to a URL. Both sides are the official SDK's (`rmcp`): a
//! stdio server whose handler is a client of the controller's streamable HTTP endpoint.
//! It connects on the first request, naming itself after the client that launched it (the
//! controller's audit trail shows that name); the tools, the gates and the approvals are
//! the controller's, unchanged. The controller is reached in one MCP session (the
//! `initialize` handshake), so the gate state of the session lasts as long as this process;
//! its answers are marked complete again for a downstream client on a newer protocol
//! version. Logs go to standard error: standard output is the protocol's.

use clap::Args;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, Implementation,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ResultType, ServerConfig,
};
use rmcp::service::{Peer, RequestContext, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt};
use tokio::sync::OnceCell;

use super::client::{ClientArgs, token};
use crate::{Error, Result};

/// Arguments of `vigil-controller mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// The API token the MCP client acts with (give it a token of its own: the token that
    /// requested a write may not approve it). Prefer VIGIL_TOKEN: a flag shows in the
    /// process list. Default: VIGIL_TOKEN, else admin.token in --data-dir.
    #[arg(long, env = crate::config::ENV_TOKEN, hide_env_values = true, value_name = "TOKEN")]
    pub token: Option<String>,
}

/// The stdio server: a forwarder to the controller's `/mcp`.
#[derive(Debug)]
struct Forwarder {
    url: String,
    token: String,
    upstream: OnceCell<RunningService<RoleClient, ClientConfig>>,
}

/// An upstream failure as the protocol's error (the downstream client shows it).
fn upstream_error(url: &str, error: ServiceError) -> ErrorData {
    ErrorData::internal_error(format!("the controller at {url} failed: {error}"), None)
}

impl Forwarder {
    /// The connection to the controller, made on the first request.
    async fn upstream(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> std::result::Result<&Peer<RoleClient>, ErrorData> {
        let running = self
            .upstream
            .get_or_try_init(|| async {
                let client = context
                    .client_info()
                    .map_or_else(|| "unknown client".to_owned(), |info| info.name);
                let info = ClientConfig::new(
                    ClientCapabilities::default(),
                    Implementation::new(
                        format!("{client} via vigil-controller mcp"),
                        env!("CARGO_PKG_VERSION"),
                    ),
                );
                let transport = StreamableHttpClientTransport::from_config(
                    StreamableHttpClientTransportConfig::with_uri(self.url.as_str())
                        .auth_header(self.token.clone()),
                );
                info.serve(transport).await.map_err(|error| {
                    tracing::error!(url = %self.url, %error, "cannot reach the controller's MCP endpoint");
                    ErrorData::internal_error(
                        format!(
                            "cannot reach the controller's MCP endpoint at {}: {error} \
                             (check VIGIL_URL and VIGIL_TOKEN)",
                            self.url
                        ),
                        None,
                    )
                })
            })
            .await?;
        Ok(running.peer())
    }
}

impl ServerHandler for Forwarder {
    fn get_info(&self) -> ServerConfig {
        crate::mcp::handler::server_info()
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, ErrorData> {
        let upstream = self.upstream(&context).await?;
        let mut result = upstream
            .list_tools(request)
            .await
            .map_err(|e| upstream_error(&self.url, e))?;
        result.result_type.get_or_insert(ResultType::COMPLETE);
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        let upstream = self.upstream(&context).await?;
        let mut response = upstream
            .call_tool_once(request)
            .await
            .map_err(|e| upstream_error(&self.url, e))?;
        if let CallToolResponse::Complete(result) = &mut response {
            result.result_type.get_or_insert(ResultType::COMPLETE);
        }
        Ok(response)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListResourcesResult, ErrorData> {
        let upstream = self.upstream(&context).await?;
        let mut result = upstream
            .list_resources(request)
            .await
            .map_err(|e| upstream_error(&self.url, e))?;
        result.result_type.get_or_insert(ResultType::COMPLETE);
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<ReadResourceResponse, ErrorData> {
        let upstream = self.upstream(&context).await?;
        let mut response = upstream
            .read_resource_once(request)
            .await
            .map_err(|e| upstream_error(&self.url, e))?;
        if let ReadResourceResponse::Complete(result) = &mut response {
            result.result_type.get_or_insert(ResultType::COMPLETE);
        }
        Ok(response)
    }
}

/// Serves MCP on standard input and output until the client closes it.
pub fn run(args: &McpArgs) -> Result<()> {
    // The SDK's HTTP client takes its TLS from the process's default provider.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let forwarder = Forwarder {
        url: format!("{}/mcp", args.client.url.trim_end_matches('/')),
        token: match args.token.as_deref().map(str::trim) {
            Some(given) if !given.is_empty() => given.to_owned(),
            _ => token(&args.client)?,
        },
        upstream: OnceCell::new(),
    };
    super::client_runtime()?.block_on(async {
        let running = forwarder
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| Error::Network(format!("MCP over standard input: {e}")))?;
        running
            .waiting()
            .await
            .map_err(|e| Error::Network(format!("MCP over standard input: {e}")))?;
        Ok(())
    })
}
