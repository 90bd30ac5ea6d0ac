//! External MCP servers as tools of Vigil's assistant (docs/mcp.md). Each configured
//! server ([`config`]) is connected at start with the SDK's streamable HTTP client, kept
//! connected (reconnecting with backoff when lost), and its tool list re-read when it
//! says the list changed, every minute, and at the start of every model turn. Its tools
//! are offered to the model as `mcp__NAME__TOOL`.
//!
//! Class, decided here and nowhere else: a tool is a read only when its server is marked
//! trusted **and** the tool says `readOnlyHint: true` in the list as last read; every
//! other tool is a write (an approval showing the tool and its arguments). A result is
//! capped, redacted and returned as data for the caller to fence as untrusted.

pub mod config;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ContentBlock, Implementation, Tool,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Map, Value};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

pub use config::ServerConfig;

use crate::tools::class::ToolClass;

/// The prefix of every external tool's name.
pub const PREFIX: &str = "mcp__";
/// Longest tool name a model API accepts.
const MAX_TOOL_NAME: usize = 64;
/// Bytes of a result's text kept.
pub const MAX_RESULT_BYTES: usize = 16 * 1024;
/// How long a call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// How long listing tools or connecting may take.
const LIST_TIMEOUT: Duration = Duration::from_secs(10);
/// Tools of one server offered to the model at most (the rest are skipped with a warning).
const MAX_TOOLS: usize = 64;
/// Characters of a tool's description kept.
const MAX_DESCRIPTION: usize = 1024;
/// Bytes of a tool's input schema (as JSON) above which the tool is skipped.
const MAX_SCHEMA_BYTES: usize = 16 * 1024;
/// How long the start of a model turn waits for the servers' lists.
const TURN_REFRESH: Duration = Duration::from_secs(2);
/// How often the tool list is re-read without a notification.
const RELIST_EVERY: Duration = Duration::from_secs(60);

/// One tool an external server offers.
#[derive(Debug, Clone, PartialEq)]
pub struct ExternalTool {
    /// `mcp__NAME__TOOL`.
    pub name: String,
    /// The server's name.
    pub server: String,
    /// The tool's own name.
    pub tool: String,
    /// Its description, as the server gave it.
    pub description: String,
    /// Its input schema.
    pub schema: Value,
    /// Read or write (never resolve).
    pub class: ToolClass,
}

/// What a call answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalResult {
    /// The result's text, redacted and capped.
    pub text: String,
    /// True when the text was cut at [`MAX_RESULT_BYTES`].
    pub truncated: bool,
    /// True when the server said the call failed.
    pub is_error: bool,
}

/// Hears a server's notifications.
#[derive(Debug, Clone)]
struct Listener {
    changed: Arc<Notify>,
}

impl ClientHandler for Listener {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("vigil", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.notify_one();
    }
}

type Connection = RunningService<RoleClient, Listener>;

#[derive(Debug)]
struct Server {
    config: ServerConfig,
    connection: tokio::sync::Mutex<Option<Connection>>,
    tools: Mutex<Vec<ExternalTool>>,
    changed: Arc<Notify>,
}

/// The external servers (cheap to clone; empty when none is configured).
#[derive(Debug, Clone, Default)]
pub struct ExternalTools {
    servers: Arc<Vec<Arc<Server>>>,
}

/// The class of a tool of a server: a read only when both agree.
pub fn class_of(trusted: bool, read_only_hint: Option<bool>) -> ToolClass {
    if trusted && read_only_hint == Some(true) {
        ToolClass::Read
    } else {
        ToolClass::Write
    }
}

/// `mcp__NAME__TOOL`, when a model API accepts it.
fn full_name(server: &str, tool: &str) -> Option<String> {
    let name = format!("{PREFIX}{server}__{tool}");
    let ok = name.len() <= MAX_TOOL_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    ok.then_some(name)
}

/// The text of a result: its text blocks (other blocks named), or its structured content.
fn result_text(content: &[ContentBlock], structured: Option<&Value>) -> String {
    let mut parts: Vec<String> = content
        .iter()
        .map(|block| match block {
            ContentBlock::Text(text) => text.text.clone(),
            ContentBlock::Image(_) => "[an image]".into(),
            ContentBlock::Audio(_) => "[audio]".into(),
            ContentBlock::Resource(_) => "[an embedded resource]".into(),
            ContentBlock::ResourceLink(link) => format!("[a link to {}]", link.uri),
            _ => "[content]".into(),
        })
        .collect();
    if parts.iter().all(|p| p.trim().is_empty())
        && let Some(structured) = structured
    {
        parts = vec![structured.to_string()];
    }
    parts.join("\n")
}

/// Redacts and caps a result's text.
pub fn clean(text: &str) -> (String, bool) {
    let redacted = vigil_shared::redact::redact(text).text;
    if redacted.len() <= MAX_RESULT_BYTES {
        return (redacted, false);
    }
    let mut end = MAX_RESULT_BYTES;
    while !redacted.is_char_boundary(end) {
        end -= 1;
    }
    (redacted[..end].to_owned(), true)
}

/// The tools of `config`'s server as offered to the model: names a model API accepts,
/// schemas of a sane size, descriptions cut, at most [`MAX_TOOLS`], each with its class.
fn offer(config: &ServerConfig, tools: Vec<Tool>) -> Vec<ExternalTool> {
    let mut offered = Vec::new();
    for tool in tools {
        let Some(name) = full_name(&config.name, &tool.name) else {
            tracing::warn!(server = %config.name, tool = %tool.name, "skipping a tool whose name a model API would refuse");
            continue;
        };
        let schema = Value::Object((*tool.input_schema).clone());
        if schema.to_string().len() > MAX_SCHEMA_BYTES {
            tracing::warn!(server = %config.name, tool = %tool.name, "skipping a tool whose input schema is over {MAX_SCHEMA_BYTES} bytes");
            continue;
        }
        if offered.len() == MAX_TOOLS {
            tracing::warn!(server = %config.name, "the MCP server lists more than {MAX_TOOLS} tools; the rest are not offered");
            break;
        }
        let hint = tool.annotations.as_ref().and_then(|a| a.read_only_hint);
        let description: String = tool
            .description
            .as_deref()
            .unwrap_or_default()
            .chars()
            .take(MAX_DESCRIPTION)
            .collect();
        offered.push(ExternalTool {
            name,
            server: config.name.clone(),
            tool: tool.name.to_string(),
            description,
            schema,
            class: class_of(config.trusted, hint),
        });
    }
    offered
}

impl Server {
    async fn connect(&self) -> Result<Connection, String> {
        let mut headers = HashMap::new();
        for (key, value) in &self.config.headers {
            let key = key
                .parse()
                .map_err(|_| format!("header name {key:?} is not valid"))?;
            let value = value
                .parse()
                .map_err(|_| format!("the value of header {key} is not valid"))?;
            headers.insert(key, value);
        }
        let mut transport = StreamableHttpClientTransportConfig::with_uri(self.config.url.as_str())
            .custom_headers(headers);
        if let Some(token) = &self.config.bearer_token {
            transport = transport.auth_header(token.clone());
        }
        let listener = Listener {
            changed: self.changed.clone(),
        };
        let connecting = listener.serve(StreamableHttpClientTransport::from_config(transport));
        match tokio::time::timeout(LIST_TIMEOUT, connecting).await {
            Ok(Ok(connection)) => Ok(connection),
            Ok(Err(error)) => Err(error.to_string()),
            Err(_) => Err("timed out".into()),
        }
    }

    /// Re-reads the tool list; on failure the connection is dropped (to be made again).
    async fn relist(&self) {
        let mut connection = self.connection.lock().await;
        let Some(peer) = connection.as_ref().map(|c| c.peer().clone()) else {
            return;
        };
        let listed = tokio::time::timeout(LIST_TIMEOUT, peer.list_all_tools()).await;
        let tools = match listed {
            Ok(Ok(tools)) => tools,
            other => {
                tracing::warn!(server = %self.config.name, ?other, "cannot list the MCP server's tools; reconnecting");
                *connection = None;
                self.tools
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clear();
                // Wakes the keeper, which connects again.
                self.changed.notify_one();
                return;
            }
        };
        let offered = offer(&self.config, tools);
        let mut current = self.tools.lock().unwrap_or_else(PoisonError::into_inner);
        if *current != offered {
            tracing::info!(server = %self.config.name, tools = offered.len(), "MCP server tools listed");
        }
        *current = offered;
    }

    /// Keeps the server connected and its list current until `shutdown`.
    async fn keep(self: Arc<Self>, shutdown: CancellationToken) {
        let mut backoff = Duration::from_secs(1);
        loop {
            let connected = self.connection.lock().await.is_some();
            if !connected {
                match self.connect().await {
                    Ok(connection) => {
                        tracing::info!(server = %self.config.name, url = %self.config.url, "connected to the MCP server");
                        *self.connection.lock().await = Some(connection);
                        backoff = Duration::from_secs(1);
                        self.relist().await;
                    }
                    Err(error) => {
                        tracing::warn!(server = %self.config.name, url = %self.config.url, %error, retry_in_s = backoff.as_secs(), "cannot connect to the MCP server");
                        self.tools
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .clear();
                        tokio::select! {
                            () = shutdown.cancelled() => return,
                            () = tokio::time::sleep(backoff) => {}
                        }
                        backoff = (backoff * 2).min(Duration::from_secs(30));
                        continue;
                    }
                }
            }
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = self.changed.notified() => {}
                () = tokio::time::sleep(RELIST_EVERY) => {}
            }
            self.relist().await;
        }
    }
}

impl ExternalTools {
    /// The servers of `configs`, not yet connected ([`ExternalTools::start`]).
    pub fn new(configs: Vec<ServerConfig>) -> Self {
        if !configs.is_empty() {
            // The SDK's HTTP client takes its TLS from the process's default provider.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        let servers = configs
            .into_iter()
            .map(|config| {
                Arc::new(Server {
                    config,
                    connection: tokio::sync::Mutex::new(None),
                    tools: Mutex::new(Vec::new()),
                    changed: Arc::new(Notify::new()),
                })
            })
            .collect();
        ExternalTools {
            servers: Arc::new(servers),
        }
    }

    /// True when no server is configured.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Connects every server and keeps it connected until `shutdown`.
    pub fn start(&self, shutdown: &CancellationToken) {
        for server in self.servers.iter() {
            tokio::spawn(server.clone().keep(shutdown.clone()));
        }
    }

    /// Re-reads every connected server's tool list (the start of a model turn).
    /// A slow server keeps its last list: a turn waits at most [`TURN_REFRESH`] for it
    /// (the keeper's own re-reads find a dead one).
    pub async fn refresh(&self) {
        let lists = self
            .servers
            .iter()
            .map(|server| tokio::time::timeout(TURN_REFRESH, server.relist()));
        futures_util::future::join_all(lists).await;
    }

    /// True when the server named `server` is marked trusted.
    pub fn trusted(&self, server: &str) -> bool {
        self.servers
            .iter()
            .any(|s| s.config.name == server && s.config.trusted)
    }

    /// Every tool offered now.
    pub fn tools(&self) -> Vec<ExternalTool> {
        self.servers
            .iter()
            .flat_map(|s| {
                s.tools
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone()
            })
            .collect()
    }

    /// The tool named `name` (`mcp__NAME__TOOL`), as last listed.
    pub fn find(&self, name: &str) -> Option<ExternalTool> {
        if !name.starts_with(PREFIX) {
            return None;
        }
        self.tools().into_iter().find(|t| t.name == name)
    }

    /// Calls `tool` with `arguments`.
    pub async fn call(
        &self,
        tool: &ExternalTool,
        arguments: Map<String, Value>,
    ) -> Result<ExternalResult, String> {
        let server = self
            .servers
            .iter()
            .find(|s| s.config.name == tool.server)
            .ok_or_else(|| format!("no MCP server {}", tool.server))?;
        let peer = server
            .connection
            .lock()
            .await
            .as_ref()
            .map(|c| c.peer().clone())
            .ok_or_else(|| format!("the MCP server {} is not connected", tool.server))?;
        let request = CallToolRequestParams::new(tool.tool.clone()).with_arguments(arguments);
        let result = match tokio::time::timeout(CALL_TIMEOUT, peer.call_tool(request)).await {
            Ok(Ok(result)) => result,
            Ok(Err(error)) => {
                // The connection may be gone: the keeper checks it and connects again.
                server.changed.notify_one();
                return Err(format!("the MCP server {} failed: {error}", tool.server));
            }
            Err(_) => {
                return Err(format!(
                    "the MCP server {} did not answer within {} s",
                    tool.server,
                    CALL_TIMEOUT.as_secs()
                ));
            }
        };
        let (text, truncated) = clean(&result_text(
            &result.content,
            result.structured_content.as_ref(),
        ));
        Ok(ExternalResult {
            text,
            truncated,
            is_error: result.is_error == Some(true),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_trusted_server_s_read_only_tool_is_a_read() {
        assert_eq!(class_of(true, Some(true)), ToolClass::Read);
        assert_eq!(class_of(true, Some(false)), ToolClass::Write);
        assert_eq!(class_of(true, None), ToolClass::Write);
        assert_eq!(class_of(false, Some(true)), ToolClass::Write);
    }

    #[test]
    fn names_a_model_api_would_refuse_are_not_offered() {
        assert_eq!(
            full_name("docs", "search").as_deref(),
            Some("mcp__docs__search")
        );
        assert!(full_name("docs", "sëarch").is_none());
        assert!(full_name("docs", "a b").is_none());
        assert!(full_name("docs", &"x".repeat(60)).is_none());
    }

    fn server(trusted: bool) -> ServerConfig {
        ServerConfig {
            name: "docs".into(),
            url: "http://127.0.0.1:9/mcp".into(),
            trusted,
            bearer_token: None,
            headers: Default::default(),
        }
    }

    fn tool(name: &str, read_only: Option<bool>, description: &str) -> Tool {
        let mut hints = rmcp::model::ToolAnnotations::new();
        if let Some(read_only) = read_only {
            hints = hints.read_only(read_only);
        }
        Tool::new(
            name.to_owned(),
            description.to_owned(),
            Arc::new(Map::new()),
        )
        .annotate(hints)
    }

    #[test]
    fn a_server_cannot_flood_or_mislabel_the_offer() {
        let mut tools: Vec<Tool> = (0..100)
            .map(|n| tool(&format!("t{n}"), Some(true), &"d".repeat(5000)))
            .collect();
        tools.insert(0, tool("bad name", Some(true), ""));
        let mut huge = Map::new();
        huge.insert("x".into(), Value::String("y".repeat(20_000)));
        tools.insert(1, Tool::new("huge", "", Arc::new(huge)));
        let offered = offer(&server(true), tools.clone());
        assert_eq!(offered.len(), MAX_TOOLS);
        assert_eq!(offered[0].name, "mcp__docs__t0");
        assert!(
            offered
                .iter()
                .all(|t| t.description.chars().count() == MAX_DESCRIPTION)
        );
        assert!(offered.iter().all(|t| t.class == ToolClass::Read));
        let untrusted = offer(&server(false), tools);
        assert!(untrusted.iter().all(|t| t.class == ToolClass::Write));
        let unhinted = offer(
            &server(true),
            vec![tool("w", None, ""), tool("r", Some(false), "")],
        );
        assert!(unhinted.iter().all(|t| t.class == ToolClass::Write));
    }

    #[test]
    fn results_are_redacted_and_capped() {
        let (text, cut) = clean("password=hunter2 and more");
        assert!(!text.contains("hunter2") && !cut, "{text}");
        let (text, cut) = clean(&"é".repeat(MAX_RESULT_BYTES));
        assert!(cut && text.len() <= MAX_RESULT_BYTES);
        let blocks = vec![ContentBlock::text("a"), ContentBlock::text("b")];
        assert_eq!(result_text(&blocks, None), "a\nb");
        assert_eq!(
            result_text(&[], Some(&serde_json::json!({"n": 1}))),
            r#"{"n":1}"#
        );
    }
}
