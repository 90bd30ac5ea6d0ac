//! Configuration of `serve` and the defaults every subcommand shares. Three layers, read
//! once and validated into a typed [`Config`] before any socket is bound: flags beat their
//! `VIGIL_*` environment variables (clap reads both into [`ServeArgs`]), which beat the
//! `--config` TOML file ([`file::FileConfig`]), which beats the defaults here.

mod args;
pub mod file;
pub mod queue;
pub mod rate;
pub mod watch;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;

pub use args::ServeArgs;
use file::{FileConfig, LlmFileConfig};
pub use watch::{
    ENV_INVESTIGATIONS_PER_HOUR, ENV_PATROL, ENV_PATROL_CERT_FILES, ENV_PATROL_INTERVAL_S,
    ENV_PATROL_INVESTIGATE, ENV_PATROL_TLS_PORTS, ENV_UNATTENDED_TOKENS_PER_DAY,
};

use crate::approvals::{ControlLevel, DEFAULT_APPROVAL_TIMEOUT_S};
use crate::exec::fanout::DEFAULT_FANOUT_CONCURRENCY;
use crate::llm::{LlmConfig, Provider};
use crate::pki::GatewaySan;
use crate::{Error, Result};
use queue::{DEFAULT_AGENT_CONCURRENCY, DEFAULT_AGENT_QUEUE, QueueLimits};
use rate::{DEFAULT_CHAT_PER_S, DEFAULT_EXEC_PER_S, DEFAULT_FANOUT_PER_S, RateConfig};

/// Environment variable for `--config`.
pub const ENV_CONFIG: &str = "VIGIL_CONFIG";
/// Environment variable for `--data-dir`.
pub const ENV_DATA_DIR: &str = "VIGIL_DATA_DIR";
/// The environment variable of `--secrets-dir`.
pub const ENV_SECRETS_DIR: &str = "VIGIL_SECRETS_DIR";
/// Environment variable for `--http-listen`.
pub const ENV_HTTP_LISTEN: &str = "VIGIL_HTTP_LISTEN";
/// Environment variable for `--grpc-listen`.
pub const ENV_GRPC_LISTEN: &str = "VIGIL_GRPC_LISTEN";
/// Environment variable for `--gateway-san` (comma-separated).
pub const ENV_GATEWAY_SANS: &str = "VIGIL_GATEWAY_SANS";
/// Environment variable for `--cluster-listen`.
pub const ENV_CLUSTER_LISTEN: &str = "VIGIL_CLUSTER_LISTEN";
/// Environment variable for `--cluster-advertise`.
pub const ENV_CLUSTER_ADVERTISE: &str = "VIGIL_CLUSTER_ADVERTISE";
/// Environment variable for `--gateway-endpoints` (comma-separated).
pub const ENV_GATEWAY_ENDPOINTS: &str = "VIGIL_GATEWAY_ENDPOINTS";
/// Environment variable for `--mcp-approval-wait-s`.
pub const ENV_MCP_APPROVAL_WAIT_S: &str = "VIGIL_MCP_APPROVAL_WAIT_S";
/// Environment variable for `--mcp-allowed-origins` (comma-separated).
pub const ENV_MCP_ALLOWED_ORIGINS: &str = "VIGIL_MCP_ALLOWED_ORIGINS";
/// Environment variable for `--mcp-server` (comma-separated NAME=URL).
pub const ENV_MCP_SERVERS: &str = "VIGIL_MCP_SERVERS";
/// Environment variable for `--mcp-server-trusted` (comma-separated names).
pub const ENV_MCP_SERVERS_TRUSTED: &str = "VIGIL_MCP_SERVERS_TRUSTED";
/// Environment variable for `--heartbeat-interval-s`.
pub const ENV_HEARTBEAT_INTERVAL_S: &str = "VIGIL_HEARTBEAT_INTERVAL_S";
/// Environment variable for `--approval-timeout-s`.
pub const ENV_APPROVAL_TIMEOUT_S: &str = "VIGIL_APPROVAL_TIMEOUT_S";
/// Environment variable for `--agent-concurrency`.
pub const ENV_AGENT_CONCURRENCY: &str = "VIGIL_AGENT_CONCURRENCY";
/// Environment variable for `--agent-queue`.
pub const ENV_AGENT_QUEUE: &str = "VIGIL_AGENT_QUEUE";
/// Environment variable for `--rate-exec-per-s`.
pub const ENV_RATE_EXEC_PER_S: &str = "VIGIL_RATE_EXEC_PER_S";
/// Environment variable for `--rate-fanout-per-s`.
pub const ENV_RATE_FANOUT_PER_S: &str = "VIGIL_RATE_FANOUT_PER_S";
/// Environment variable for `--rate-chat-per-s`.
pub const ENV_RATE_CHAT_PER_S: &str = "VIGIL_RATE_CHAT_PER_S";
/// Environment variable for `--session-token-budget`.
pub const ENV_SESSION_TOKEN_BUDGET: &str = "VIGIL_SESSION_TOKEN_BUDGET";
/// Default token budget of a chat session (input plus output tokens).
pub const DEFAULT_SESSION_TOKEN_BUDGET: u64 = 2_000_000;
/// Environment variable for `--fanout-concurrency`.
pub const ENV_FANOUT_CONCURRENCY: &str = "VIGIL_FANOUT_CONCURRENCY";
/// Largest `--fanout-concurrency`.
pub const MAX_FANOUT_CONCURRENCY: usize = 65_536;
/// Environment variable for `--control-level`.
pub const ENV_CONTROL_LEVEL: &str = "VIGIL_CONTROL_LEVEL";
/// Environment variable for `--http-tls`.
pub const ENV_HTTP_TLS: &str = "VIGIL_HTTP_TLS";
/// Environment variable for `--http-cert`.
pub const ENV_HTTP_CERT: &str = "VIGIL_HTTP_CERT";
/// Environment variable for `--http-key`.
pub const ENV_HTTP_KEY: &str = "VIGIL_HTTP_KEY";
/// Environment variable for `--install-trust-system-roots`.
pub const ENV_INSTALL_TRUST_SYSTEM_ROOTS: &str = "VIGIL_INSTALL_TRUST_SYSTEM_ROOTS";
/// Environment variable for `--agent-dir`.
pub const ENV_AGENT_DIR: &str = "VIGIL_AGENT_DIR";
/// Environment variable for `--public-url`.
pub const ENV_PUBLIC_URL: &str = "VIGIL_PUBLIC_URL";
/// Environment variable for `--local-agent`.
pub const ENV_LOCAL_AGENT: &str = "VIGIL_LOCAL_AGENT";
/// Environment variable for `--database-url`.
pub use crate::store::ENV_DATABASE_URL;
/// Environment variable for `--llm-provider`.
pub const ENV_LLM_PROVIDER: &str = "VIGIL_LLM_PROVIDER";
/// Environment variable for `--llm-base-url`.
pub const ENV_LLM_BASE_URL: &str = "VIGIL_LLM_BASE_URL";
/// Environment variable for `--llm-api-key`.
pub const ENV_LLM_API_KEY: &str = "VIGIL_LLM_API_KEY";
/// Environment variable for `--llm-model`.
pub const ENV_LLM_MODEL: &str = "VIGIL_LLM_MODEL";
/// Environment variable for the CLI's `--url`.
pub const ENV_URL: &str = "VIGIL_URL";
/// Environment variable holding the API token for the CLI.
pub const ENV_TOKEN: &str = "VIGIL_TOKEN";

/// Default data directory.
pub const DEFAULT_DATA_DIR: &str = "./.vigil";
/// Default HTTP listen address.
pub const DEFAULT_HTTP_LISTEN: &str = "127.0.0.1:8640";
/// Default gateway listen address.
pub const DEFAULT_GRPC_LISTEN: &str = "0.0.0.0:8641";
/// Default controller URL for the CLI.
pub const DEFAULT_URL: &str = "http://127.0.0.1:8640";
/// Default heartbeat interval, in seconds.
pub const DEFAULT_HEARTBEAT_S: u64 = 10;

/// `--data-dir`, shared by every subcommand that touches the controller's state.
#[derive(Debug, Clone, Args)]
pub struct DataDirArg {
    /// The controller's state directory: CA, gateway and grant keys, admin token, database.
    #[arg(long, env = ENV_DATA_DIR, default_value = DEFAULT_DATA_DIR, value_name = "DIR")]
    pub data_dir: PathBuf,
}

/// `--secrets-dir`, for the state subcommands that need the CA (`ca show`, `token
/// create`) on a controller that serves with shared secrets.
#[derive(Debug, Clone, Args)]
pub struct SecretsDirArg {
    /// The shared secrets directory (`secrets init`) the controller serves with, if any;
    /// the CA is read there instead of in the data directory.
    #[arg(long, env = ENV_SECRETS_DIR, value_name = "DIR")]
    pub secrets_dir: Option<PathBuf>,
}

impl SecretsDirArg {
    /// The directory, an empty value counting as none.
    pub fn get(&self) -> Option<&Path> {
        self.secrets_dir
            .as_deref()
            .filter(|dir| !dir.as_os_str().is_empty())
    }
}

/// Which certificate the HTTP API serves, when it serves TLS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpTls {
    /// A certificate issued by the controller's CA (kept in the data directory).
    IssuedByCa,
    /// The operator's certificate chain and key (PEM files).
    Files {
        /// The certificate chain.
        cert: PathBuf,
        /// The private key.
        key: PathBuf,
    },
}

/// The validated configuration of `serve`.
#[derive(Debug, Clone)]
pub struct Config {
    /// The data directory.
    pub data_dir: PathBuf,
    /// HTTP listen address.
    pub http_listen: SocketAddr,
    /// Gateway listen address.
    pub grpc_listen: SocketAddr,
    /// Extra gateway SANs.
    pub gateway_sans: Vec<GatewaySan>,
    /// Heartbeat interval.
    pub heartbeat: Duration,
    /// Seconds before a pending approval expires.
    pub approval_timeout_s: u64,
    /// Commands each agent runs at once and that may wait for it.
    pub agent_queue: QueueLimits,
    /// Requests per second each API token may make, per class.
    pub rate: RateConfig,
    /// The most a chat session may do with writes (sessions can only narrow it).
    pub control_level: ControlLevel,
    /// Tokens (input plus output) a chat session may use; 0 for no limit.
    pub session_token_budget: u64,
    /// Targets one fan-out (`POST /api/exec/fanout`) has in flight at once.
    pub fanout_concurrency: usize,
    /// Whether `POST /api/raw-exec` exists (only in builds with the `raw-exec` feature; a
    /// build without it refuses to start with this set).
    pub raw_exec: bool,
    /// TLS on the HTTP API, if any.
    pub http_tls: Option<HttpTls>,
    /// The operator's certificate is publicly trusted: install lines do not pin it.
    pub install_trust_system_roots: bool,
    /// Where the agent binaries for download live.
    pub agent_dir: PathBuf,
    /// The shared CA and grant key (`secrets init`), instead of the data directory's own.
    pub secrets_dir: Option<PathBuf>,
    /// The URL hosts reach the HTTP API at (`scheme://host[:port]`, no trailing slash).
    pub public_url: Option<reqwest::Url>,
    /// Enroll and supervise an agent for this machine.
    pub local_agent: bool,
    /// `postgres://…` when the state lives in PostgreSQL.
    pub database_url: Option<String>,
    /// This replica's place among others (`--cluster-listen`), if it is one.
    pub cluster: Option<crate::cluster::ClusterListen>,
    /// `--gateway-endpoints`: what enrolling agents are given (empty: the URL they used).
    pub gateway_endpoints: Vec<String>,
    /// The model behind the chat; `None` when none is configured (the chat says so).
    pub llm: Option<LlmConfig>,
    /// The MCP server's settings.
    pub mcp: crate::mcp::McpSettings,
    /// External MCP servers whose tools the assistant is offered.
    pub mcp_servers: Vec<crate::mcp::external::ServerConfig>,
    /// Patrol, investigations and notification channels.
    pub watch: watch::WatchConfig,
}

fn listen_addr(flag: &str, value: &str) -> Result<SocketAddr> {
    value.trim().parse().map_err(|_| {
        Error::Config(format!(
            "--{flag} {value:?} is not an IP:PORT address (for example 127.0.0.1:8640 or [::]:8641)"
        ))
    })
}

fn existing_file(flag: &str, path: &Path) -> Result<()> {
    if path.is_file() {
        Ok(())
    } else {
        Err(Error::Config(format!(
            "--{flag} {} does not exist or is not a file",
            path.display()
        )))
    }
}

fn public_url(value: &str, tls: bool) -> Result<reqwest::Url> {
    let bad = |why: &str| Error::Config(format!("--public-url {value:?} {why}"));
    let url = reqwest::Url::parse(value.trim()).map_err(|e| bad(&format!("is not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(bad("must be http(s)://HOST[:PORT]"));
    }
    if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
        return Err(bad("must not have a path, query or fragment"));
    }
    if tls && url.scheme() != "https" {
        return Err(bad("must be https:// when the HTTP API serves TLS"));
    }
    Ok(url)
}

fn http_tls(
    tls: Option<bool>,
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
) -> Result<Option<HttpTls>> {
    match (cert, key) {
        (Some(cert), Some(key)) => {
            if tls == Some(false) {
                return Err(Error::Config(
                    "--http-cert/--http-key are set but --http-tls is false".into(),
                ));
            }
            existing_file("http-cert", &cert)?;
            existing_file("http-key", &key)?;
            Ok(Some(HttpTls::Files { cert, key }))
        }
        (Some(_), None) => Err(Error::Config(
            "--http-cert needs --http-key (the certificate's private key, PEM)".into(),
        )),
        (None, Some(_)) => Err(Error::Config(
            "--http-key needs --http-cert (the certificate chain, PEM)".into(),
        )),
        (None, None) => Ok(tls.unwrap_or(false).then_some(HttpTls::IssuedByCa)),
    }
}

/// `--llm-*` over the file's `[llm]` table: `None` without provider and model.
fn llm_config(args: &ServeArgs, file: LlmFileConfig) -> Result<Option<LlmConfig>> {
    let pick = |flag: &Option<String>, key: Option<String>| {
        flag.clone()
            .or(key)
            .map(|value| value.trim().to_owned())
            .filter(|value| !value.is_empty())
    };
    let provider = pick(&args.llm_provider, file.provider);
    let base_url = pick(&args.llm_base_url, file.base_url);
    let api_key = pick(&args.llm_api_key, file.api_key);
    let model = pick(&args.llm_model, file.model);
    let Some(provider) = provider else {
        if model.is_some() || base_url.is_some() || api_key.is_some() {
            return Err(Error::Config(format!(
                "--llm-model, --llm-base-url and --llm-api-key need --llm-provider \
                 ({ENV_LLM_PROVIDER}): openai or anthropic"
            )));
        }
        return Ok(None);
    };
    let provider: Provider = provider
        .parse()
        .map_err(|_| Error::Config(format!(
            "--llm-provider {provider:?} is unknown: use openai (any OpenAI-compatible server) or anthropic"
        )))?;
    let Some(model) = model else {
        return Err(Error::Config(format!(
            "--llm-provider {provider} needs --llm-model ({ENV_LLM_MODEL}), the model's name"
        )));
    };
    let mut config = LlmConfig::new(provider, model);
    if let Some(base_url) = base_url {
        config.base_url = base_url;
    }
    config.api_key = api_key;
    config.check().map_err(|e| match e {
        crate::llm::LlmError::NotConfigured(message) => {
            Error::Config(format!("--llm-base-url: {message}"))
        }
        other => Error::Config(other.to_string()),
    })?;
    Ok(Some(config))
}

fn default_agent_dir() -> Result<PathBuf> {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
        .ok_or_else(|| Error::Config("cannot find this binary's directory; set --agent-dir".into()))
}

impl Config {
    /// Defaults on ephemeral loopback ports with state in `data_dir` (for tests and
    /// embedding): `Config { raw_exec: true, ..Config::local(dir) }`.
    pub fn local(data_dir: impl Into<PathBuf>) -> Config {
        Config {
            data_dir: data_dir.into(),
            http_listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            grpc_listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            gateway_sans: Vec::new(),
            heartbeat: Duration::from_secs(DEFAULT_HEARTBEAT_S),
            approval_timeout_s: DEFAULT_APPROVAL_TIMEOUT_S,
            agent_queue: QueueLimits::default(),
            rate: RateConfig::default(),
            control_level: ControlLevel::default(),
            session_token_budget: DEFAULT_SESSION_TOKEN_BUDGET,
            fanout_concurrency: DEFAULT_FANOUT_CONCURRENCY,
            raw_exec: false,
            http_tls: None,
            install_trust_system_roots: false,
            agent_dir: default_agent_dir().unwrap_or_else(|_| PathBuf::from(".")),
            secrets_dir: None,
            public_url: None,
            local_agent: false,
            database_url: None,
            cluster: None,
            gateway_endpoints: Vec::new(),
            llm: None,
            mcp: crate::mcp::McpSettings::default(),
            mcp_servers: Vec::new(),
            // Embedded controllers check nothing unless asked.
            watch: watch::WatchConfig {
                patrol: crate::patrol::PatrolSettings {
                    enabled: false,
                    ..Default::default()
                },
                ..Default::default()
            },
        }
    }

    /// Reads the `--config` file (if any), layers the flags and environment over it and
    /// validates the result.
    pub fn from_args(args: &ServeArgs) -> Result<Config> {
        let args = args.clone().without_empty();
        let file = match &args.config {
            Some(path) => FileConfig::load(path)?,
            None => FileConfig::default(),
        };
        Self::from_layers(args, file)
    }

    /// Validates flags and environment (`args`) over the file's values.
    pub fn from_layers(args: ServeArgs, file: FileConfig) -> Result<Config> {
        let llm = llm_config(&args, file.llm.clone().unwrap_or_default())?;
        let watch = watch::watch_config(&args, &file)?;
        let http_listen = args.http_listen.or(file.http_listen);
        let http_listen = listen_addr(
            "http-listen",
            http_listen.as_deref().unwrap_or(DEFAULT_HTTP_LISTEN),
        )?;
        let grpc_listen = args.grpc_listen.or(file.grpc_listen);
        let grpc_listen = listen_addr(
            "grpc-listen",
            grpc_listen.as_deref().unwrap_or(DEFAULT_GRPC_LISTEN),
        )?;
        if http_listen.port() != 0 && http_listen.port() == grpc_listen.port() {
            let overlap = http_listen.ip() == grpc_listen.ip()
                || http_listen.ip().is_unspecified()
                || grpc_listen.ip().is_unspecified();
            if overlap {
                return Err(Error::Config(format!(
                    "--http-listen {http_listen} and --grpc-listen {grpc_listen} use the same port"
                )));
            }
        }
        let heartbeat_s = args
            .heartbeat_interval_s
            .or(file.heartbeat_interval_s)
            .unwrap_or(DEFAULT_HEARTBEAT_S);
        if !(1..=300).contains(&heartbeat_s) {
            return Err(Error::Config(format!(
                "--heartbeat-interval-s {heartbeat_s} must be between 1 and 300"
            )));
        }
        let approval_timeout_s = args
            .approval_timeout_s
            .or(file.approval_timeout_s)
            .unwrap_or(DEFAULT_APPROVAL_TIMEOUT_S);
        if !(5..=86_400).contains(&approval_timeout_s) {
            return Err(Error::Config(format!(
                "--approval-timeout-s {approval_timeout_s} must be between 5 and 86400"
            )));
        }
        let agent_queue = QueueLimits {
            concurrency: args
                .agent_concurrency
                .or(file.agent_concurrency)
                .unwrap_or(DEFAULT_AGENT_CONCURRENCY),
            bound: args
                .agent_queue
                .or(file.agent_queue)
                .unwrap_or(DEFAULT_AGENT_QUEUE),
        };
        if !(1..=64).contains(&agent_queue.concurrency) {
            return Err(Error::Config(format!(
                "--agent-concurrency {} must be between 1 and 64",
                agent_queue.concurrency
            )));
        }
        if agent_queue.bound > 100_000 {
            return Err(Error::Config(format!(
                "--agent-queue {} must be at most 100000",
                agent_queue.bound
            )));
        }
        let fanout_concurrency = args
            .fanout_concurrency
            .or(file.fanout_concurrency)
            .unwrap_or(DEFAULT_FANOUT_CONCURRENCY);
        if !(1..=MAX_FANOUT_CONCURRENCY).contains(&fanout_concurrency) {
            return Err(Error::Config(format!(
                "--fanout-concurrency {fanout_concurrency} must be between 1 and {MAX_FANOUT_CONCURRENCY}"
            )));
        }
        let control_level = match args.control_level.or(file.control_level) {
            Some(text) => text
                .parse::<ControlLevel>()
                .map_err(|e| Error::Config(format!("--control-level: {e}")))?,
            None => ControlLevel::default(),
        };
        let sans = if args.gateway_sans.is_empty() {
            file.gateway_sans.unwrap_or_default()
        } else {
            args.gateway_sans
        };
        let gateway_sans = sans
            .iter()
            .filter(|s| !s.trim().is_empty())
            .map(|s| GatewaySan::parse(s))
            .collect::<Result<Vec<_>>>()?;
        let data_dir = args
            .data_dir
            .or(file.data_dir)
            .unwrap_or_else(|| PathBuf::from(DEFAULT_DATA_DIR));
        if data_dir.exists() && !data_dir.is_dir() {
            return Err(Error::Config(format!(
                "--data-dir {} exists and is not a directory",
                data_dir.display()
            )));
        }
        let http_tls = http_tls(
            args.http_tls.or(file.http_tls),
            args.http_cert.or(file.http_cert),
            args.http_key.or(file.http_key),
        )?;
        let public_url = match args.public_url.or(file.public_url) {
            Some(value) => Some(public_url(&value, http_tls.is_some())?),
            None => None,
        };
        let agent_dir = match args.agent_dir.or(file.agent_dir) {
            Some(dir) if !dir.is_dir() => {
                return Err(Error::Config(format!(
                    "--agent-dir {} is not a directory",
                    dir.display()
                )));
            }
            Some(dir) => dir,
            None => default_agent_dir()?,
        };
        let local_agent = args.local_agent.or(file.local_agent).unwrap_or(false);
        if local_agent {
            crate::local_agent::agent_binary()?;
        }
        let database_url = args.database_url.or(file.database_url);
        if let Some(url) = &database_url
            && !(url.starts_with("postgres://") || url.starts_with("postgresql://"))
        {
            return Err(Error::Config(
                "--database-url must start with postgres:// or postgresql://".into(),
            ));
        }
        let cluster = crate::cluster::ClusterListen::from_settings(
            args.cluster_listen.or(file.cluster_listen).as_deref(),
            args.cluster_advertise.or(file.cluster_advertise).as_deref(),
            database_url.is_some(),
        )?;
        let endpoints = if args.gateway_endpoints.is_empty() {
            file.gateway_endpoints.unwrap_or_default()
        } else {
            args.gateway_endpoints
        };
        let gateway_endpoints = crate::cluster::gateway_endpoints(&endpoints)?;
        let mcp = mcp_settings(
            args.mcp_approval_wait_s.or(file.mcp_approval_wait_s),
            if args.mcp_allowed_origins.is_empty() {
                file.mcp_allowed_origins.unwrap_or_default()
            } else {
                args.mcp_allowed_origins.clone()
            },
        )?;
        let mcp_servers = crate::mcp::external::config::servers(
            &args.mcp_servers,
            if args.mcp_servers_trusted.is_empty() {
                file.mcp_servers_trusted.as_deref().unwrap_or_default()
            } else {
                &args.mcp_servers_trusted
            },
            file.mcp_servers.unwrap_or_default(),
            |name| {
                std::env::var(crate::mcp::external::config::token_variable(name))
                    .ok()
                    .filter(|t| !t.trim().is_empty())
            },
        )?;
        Ok(Config {
            data_dir,
            http_listen,
            grpc_listen,
            gateway_sans,
            heartbeat: Duration::from_secs(heartbeat_s),
            approval_timeout_s,
            agent_queue,
            rate: RateConfig {
                exec_per_s: args
                    .rate_exec_per_s
                    .or(file.rate_exec_per_s)
                    .unwrap_or(DEFAULT_EXEC_PER_S),
                fanout_per_s: args
                    .rate_fanout_per_s
                    .or(file.rate_fanout_per_s)
                    .unwrap_or(DEFAULT_FANOUT_PER_S),
                chat_per_s: args
                    .rate_chat_per_s
                    .or(file.rate_chat_per_s)
                    .unwrap_or(DEFAULT_CHAT_PER_S),
            },
            control_level,
            session_token_budget: args
                .session_token_budget
                .or(file.session_token_budget)
                .unwrap_or(DEFAULT_SESSION_TOKEN_BUDGET),
            fanout_concurrency,
            #[cfg(feature = "raw-exec")]
            raw_exec: args.test_raw_exec,
            #[cfg(not(feature = "raw-exec"))]
            raw_exec: false,
            http_tls,
            install_trust_system_roots: args
                .install_trust_system_roots
                .or(file.install_trust_system_roots)
                .unwrap_or(false),
            agent_dir,
            secrets_dir: args.secrets_dir.or(file.secrets_dir),
            public_url,
            local_agent,
            database_url,
            cluster,
            gateway_endpoints,
            llm,
            mcp,
            mcp_servers,
            watch,
        })
    }
}

/// The MCP server's settings: the wait of a write call (0-3600 s, default 60) and the
/// browser origins allowed (each `http://` or `https://` and a host).
fn mcp_settings(wait_s: Option<u64>, origins: Vec<String>) -> Result<crate::mcp::McpSettings> {
    let wait_s = wait_s.unwrap_or(crate::mcp::calls::DEFAULT_APPROVAL_WAIT_S);
    if wait_s > 3600 {
        return Err(Error::Config(format!(
            "--mcp-approval-wait-s {wait_s} must be between 0 and 3600"
        )));
    }
    let mut allowed = Vec::with_capacity(origins.len());
    for origin in origins.iter().map(|o| o.trim()).filter(|o| !o.is_empty()) {
        let host = origin
            .strip_prefix("https://")
            .or_else(|| origin.strip_prefix("http://"))
            .map(|rest| rest.trim_end_matches('/'));
        if host.is_none_or(|h| h.is_empty() || h.contains('/')) {
            return Err(Error::Config(format!(
                "--mcp-allowed-origins: {origin:?} is not an origin (http:// or https://, a host and an optional port)"
            )));
        }
        allowed.push(origin.to_owned());
    }
    Ok(crate::mcp::McpSettings {
        approval_wait: Duration::from_secs(wait_s),
        allowed_origins: allowed,
    })
}

#[cfg(test)]
mod tests;
