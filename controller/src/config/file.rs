//! The `--config` TOML file: the same keys as the flags, unknown keys refused.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::{Error, Result};

/// The keys of the configuration file (all optional).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub data_dir: Option<PathBuf>,
    pub secrets_dir: Option<PathBuf>,
    pub http_listen: Option<String>,
    pub grpc_listen: Option<String>,
    pub gateway_sans: Option<Vec<String>>,
    pub heartbeat_interval_s: Option<u64>,
    pub approval_timeout_s: Option<u64>,
    pub agent_concurrency: Option<usize>,
    pub agent_queue: Option<usize>,
    pub rate_exec_per_s: Option<u32>,
    pub rate_fanout_per_s: Option<u32>,
    pub rate_chat_per_s: Option<u32>,
    pub control_level: Option<String>,
    pub session_token_budget: Option<u64>,
    pub fanout_concurrency: Option<usize>,
    pub http_tls: Option<bool>,
    pub http_cert: Option<PathBuf>,
    pub http_key: Option<PathBuf>,
    pub install_trust_system_roots: Option<bool>,
    pub agent_dir: Option<PathBuf>,
    pub public_url: Option<String>,
    pub local_agent: Option<bool>,
    pub database_url: Option<String>,
    pub cluster_listen: Option<String>,
    pub cluster_advertise: Option<String>,
    pub gateway_endpoints: Option<Vec<String>>,
    pub mcp_approval_wait_s: Option<u64>,
    pub mcp_allowed_origins: Option<Vec<String>>,
    /// `[[mcp_servers]]` tables: external MCP servers.
    pub mcp_servers: Option<Vec<crate::mcp::external::ServerConfig>>,
    pub mcp_servers_trusted: Option<Vec<String>>,
    pub patrol: Option<bool>,
    pub patrol_interval_s: Option<u64>,
    pub patrol_investigate: Option<Vec<String>>,
    pub patrol_cert_files: Option<Vec<String>>,
    pub patrol_tls_ports: Option<Vec<u16>>,
    /// `[patrol_checks.<name>]` tables: one check's settings.
    pub patrol_checks:
        Option<std::collections::BTreeMap<String, crate::patrol::settings::CheckFileConfig>>,
    pub unattended_tokens_per_day: Option<u64>,
    pub investigations_per_hour: Option<u64>,
    /// `[[notify_channels]]` tables: notification channels.
    pub notify_channels: Option<Vec<crate::notify::Channel>>,
    /// The `[llm]` table: the model API.
    pub llm: Option<LlmFileConfig>,
}

/// The keys of the `[llm]` table (all optional).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmFileConfig {
    pub provider: Option<String>,
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    pub model: Option<String>,
}

impl FileConfig {
    /// Reads and parses `path`.
    pub fn load(path: &Path) -> Result<FileConfig> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Config(format!("cannot read --config {}: {e}", path.display())))?;
        Self::parse(&text).map_err(|e| match e {
            Error::Config(message) => Error::Config(format!("{}: {message}", path.display())),
            other => other,
        })
    }

    /// Parses the TOML text of a configuration file.
    pub fn parse(text: &str) -> Result<FileConfig> {
        toml::from_str(text).map_err(|e| Error::Config(e.to_string().trim().to_owned()))
    }
}
