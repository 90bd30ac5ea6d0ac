//! The flags of `serve`. Each is optional here: a flag wins over its environment variable
//! (clap reads both), which wins over the `--config` file, which wins over the defaults
//! applied in [`Config::from_args`](super::Config::from_args).

use std::path::PathBuf;

use clap::Args;
use clap::builder::BoolishValueParser;

use super::*;

/// The flags of `serve`; every one (but `--config` and `--test-raw-exec`) is also a key of
/// the configuration file, named like the flag with `_` for `-` (the `--llm-*` flags are
/// keys of its `[llm]` table).
#[derive(Debug, Clone, Default, Args)]
pub struct ServeArgs {
    /// TOML configuration file; its keys are the flags' names with `_` (unknown keys are
    /// errors). Flags beat environment variables, which beat the file.
    #[arg(long, env = ENV_CONFIG, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// [key data_dir] The controller's state directory: CA, keys, admin token, database.
    /// Default ./.vigil.
    #[arg(long, env = ENV_DATA_DIR, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// [key secrets_dir] The shared identity made once by `vigil-controller secrets init`
    /// (the CA and the grant-signing key), used instead of the data directory's own; every
    /// replica of one controller is given the same. Read only, never created by serve.
    #[arg(long, env = ENV_SECRETS_DIR, value_name = "DIR")]
    pub secrets_dir: Option<PathBuf>,
    /// [key http_listen] Address of the HTTP API (IP:PORT). Default 127.0.0.1:8640; keep it
    /// on loopback unless it serves TLS (--http-tls) or a proxy fronts it.
    #[arg(long, env = ENV_HTTP_LISTEN, value_name = "ADDR")]
    pub http_listen: Option<String>,
    /// [key grpc_listen] Address of the agent gateway (IP:PORT), where agents enroll and
    /// connect over mutual TLS. Default 0.0.0.0:8641.
    #[arg(long, env = ENV_GRPC_LISTEN, value_name = "ADDR")]
    pub grpc_listen: Option<String>,
    /// [key gateway_sans] Extra DNS name or IP address for the gateway certificate
    /// (repeatable; the env variable takes a comma-separated list). Always present:
    /// vigil-gateway, localhost, this host's name, 127.0.0.1 and ::1.
    #[arg(long = "gateway-san", env = ENV_GATEWAY_SANS, value_delimiter = ',', value_name = "NAME")]
    pub gateway_sans: Vec<String>,
    /// [key heartbeat_interval_s] How often agents send a heartbeat, in seconds (1-300,
    /// default 10); a stream silent for three intervals is dropped.
    #[arg(long, env = ENV_HEARTBEAT_INTERVAL_S, value_name = "SECONDS")]
    pub heartbeat_interval_s: Option<u64>,
    /// [key approval_timeout_s] Seconds a write waits for a person's decision before its
    /// approval expires (5-86400, default 300).
    #[arg(long, env = ENV_APPROVAL_TIMEOUT_S, value_name = "SECONDS")]
    pub approval_timeout_s: Option<u64>,
    /// [key agent_concurrency] Commands the controller sends one agent at once (1-64,
    /// default 8, the agent's own limit); the next ones wait in the agent's queue.
    #[arg(long, env = ENV_AGENT_CONCURRENCY, value_name = "N")]
    pub agent_concurrency: Option<usize>,
    /// [key agent_queue] Commands that may wait for one agent (0-100000, default 256),
    /// let through in turn per caller; past it the answer is 429 AGENT_BUSY.
    #[arg(long, env = ENV_AGENT_QUEUE, value_name = "N")]
    pub agent_queue: Option<usize>,
    /// [key rate_exec_per_s] Commands (`/api/exec`, `/api/exec/write`) each API token may
    /// send per second, in bursts of ten seconds' worth (default 20; 0: no limit); past it
    /// 429 RATE_LIMITED.
    #[arg(long, env = ENV_RATE_EXEC_PER_S, value_name = "N")]
    pub rate_exec_per_s: Option<u32>,
    /// [key rate_fanout_per_s] Fan-outs each API token may start per second, in bursts of
    /// ten seconds' worth (default 1; 0: no limit).
    #[arg(long, env = ENV_RATE_FANOUT_PER_S, value_name = "N")]
    pub rate_fanout_per_s: Option<u32>,
    /// [key rate_chat_per_s] Chat turns each API token may start per second, in bursts of
    /// ten seconds' worth (default 2; 0: no limit).
    #[arg(long, env = ENV_RATE_CHAT_PER_S, value_name = "N")]
    pub rate_chat_per_s: Option<u32>,
    /// [key control_level] The most the assistant may do with writes: read_only (refused),
    /// controlled (a person approves each; the default) or autonomous (run without a wait,
    /// still signed and audited). Chat sessions can only narrow it.
    #[arg(long, env = ENV_CONTROL_LEVEL, value_name = "LEVEL")]
    pub control_level: Option<String>,
    /// [key session_token_budget] Tokens (input plus output) one chat session may use before
    /// its turns stop with BUDGET_EXCEEDED (default 2000000; 0 for no limit).
    #[arg(long, env = ENV_SESSION_TOKEN_BUDGET, value_name = "TOKENS")]
    pub session_token_budget: Option<u64>,
    /// [key fanout_concurrency] Targets one fan-out (POST /api/exec/fanout, `exec --all`)
    /// has in flight at once (1-65536, default 512); the rest wait for a free slot.
    #[arg(long, env = ENV_FANOUT_CONCURRENCY, value_name = "N")]
    pub fanout_concurrency: Option<usize>,
    /// [key http_tls] Serve the HTTP API over TLS, with a certificate from the controller's
    /// CA (or --http-cert/--http-key); install lines then pin its public key.
    #[arg(long, env = ENV_HTTP_TLS, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = BoolishValueParser::new(), value_name = "BOOL")]
    pub http_tls: Option<bool>,
    /// [key http_cert] The operator's certificate chain (PEM) for the HTTP API; implies
    /// --http-tls and needs --http-key.
    #[arg(long, env = ENV_HTTP_CERT, value_name = "FILE")]
    pub http_cert: Option<PathBuf>,
    /// [key http_key] The private key (PEM) of --http-cert.
    #[arg(long, env = ENV_HTTP_KEY, value_name = "FILE")]
    pub http_key: Option<PathBuf>,
    /// [key install_trust_system_roots] The --http-cert is publicly trusted: install lines
    /// do not pin its key.
    #[arg(long, env = ENV_INSTALL_TRUST_SYSTEM_ROOTS, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = BoolishValueParser::new(), value_name = "BOOL")]
    pub install_trust_system_roots: Option<bool>,
    /// [key agent_dir] Directory of the agent binaries served by GET /download/vigil-agent
    /// (vigil-agent-x86_64, vigil-agent-aarch64, or vigil-agent for this host's
    /// architecture). Default: the directory of this binary.
    #[arg(long, env = ENV_AGENT_DIR, value_name = "DIR")]
    pub agent_dir: Option<PathBuf>,
    /// [key public_url] The URL hosts reach the HTTP API at, used in install lines (for
    /// example https://ctrl.lan:8640); agents join the gateway on the same host. Default:
    /// built from --http-listen.
    #[arg(long, env = ENV_PUBLIC_URL, value_name = "URL")]
    pub public_url: Option<String>,
    /// [key local_agent] Enroll and supervise one agent for this machine, with its state in
    /// <data-dir>/local-agent (for `make run` and trying Vigil out).
    #[arg(long, env = ENV_LOCAL_AGENT, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = BoolishValueParser::new(), value_name = "BOOL")]
    pub local_agent: Option<bool>,
    /// [key database_url] postgres://… to keep state in PostgreSQL instead of SQLite in the
    /// data directory.
    #[arg(long, env = ENV_DATABASE_URL, hide_env_values = true, value_name = "URL")]
    pub database_url: Option<String>,
    /// [key cluster_listen] Makes this controller a replica among others on one PostgreSQL
    /// (--database-url): the internal listener (IP:PORT) where the other replicas forward
    /// commands for the agents this one holds, over mutual TLS with certificates from the
    /// replicas' internal CA. docs/replicas.md.
    #[arg(long, env = ENV_CLUSTER_LISTEN, value_name = "ADDR")]
    pub cluster_listen: Option<String>,
    /// [key cluster_advertise] Where the other replicas reach --cluster-listen (HOST:PORT;
    /// default the listen address, which must then not be 0.0.0.0 or ::).
    #[arg(long, env = ENV_CLUSTER_ADVERTISE, value_name = "HOST:PORT")]
    pub cluster_advertise: Option<String>,
    /// [key gateway_endpoints] Every replica's agent gateway (HOST:PORT, comma-separated),
    /// given to agents when they enroll; an agent that loses its stream tries the next.
    /// Default: only the address agents enroll with.
    #[arg(long, env = ENV_GATEWAY_ENDPOINTS, value_delimiter = ',', value_name = "HOST:PORT")]
    pub gateway_endpoints: Vec<String>,
    /// [key mcp_approval_wait_s] Seconds an MCP client's write call waits for a person's
    /// decision before it answers APPROVAL_REQUIRED with the approval's id (0-3600, default
    /// 60); the approval stays pending until it expires (--approval-timeout-s).
    #[arg(long, env = ENV_MCP_APPROVAL_WAIT_S, value_name = "SECONDS")]
    pub mcp_approval_wait_s: Option<u64>,
    /// [key mcp_allowed_origins] Browser origins (scheme://host[:port], comma-separated)
    /// allowed to call /mcp. A request with any other Origin header is refused with 403;
    /// clients that send none (every non-browser client) are not affected. Default: none.
    #[arg(long, env = ENV_MCP_ALLOWED_ORIGINS, value_delimiter = ',', value_name = "ORIGIN")]
    pub mcp_allowed_origins: Vec<String>,
    /// [key mcp_servers] An external MCP server whose tools the assistant is offered as
    /// mcp__NAME__TOOL (NAME=URL of its streamable HTTP endpoint; repeatable). Its bearer
    /// token, if it needs one, comes from VIGIL_MCP_SERVER_TOKEN_<NAME>; headers and tokens
    /// can also be set in the file's [[mcp_servers]] tables. Every tool is a write (an
    /// approval) unless the server is trusted and the tool says readOnlyHint.
    #[arg(long = "mcp-server", env = ENV_MCP_SERVERS, value_delimiter = ',', value_name = "NAME=URL")]
    pub mcp_servers: Vec<String>,
    /// [key mcp_servers_trusted] External MCP servers (by name) whose tools that say
    /// readOnlyHint: true run as reads, without a person (comma-separated; default none).
    #[arg(long = "mcp-server-trusted", env = ENV_MCP_SERVERS_TRUSTED, value_delimiter = ',', value_name = "NAME")]
    pub mcp_servers_trusted: Vec<String>,
    /// [key patrol] Run the built-in checks (disk, inodes, memory, failed systemd units,
    /// containers, ZFS pools, certificates, Proxmox guests set to start on boot, agents
    /// offline) on a schedule, without a model, and record what they find (default true).
    #[arg(long, env = ENV_PATROL, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = BoolishValueParser::new(), value_name = "BOOL")]
    pub patrol: Option<bool>,
    /// [key patrol_interval_s] Seconds between two runs of a check on one resource
    /// (default 300); the file's [patrol_checks.<name>] tables set it per check.
    #[arg(long, env = ENV_PATROL_INTERVAL_S, value_name = "SECONDS")]
    pub patrol_interval_s: Option<u64>,
    /// [key patrol_investigate] Checks whose new findings open an investigation, a
    /// read-only chat session the assistant runs with the finding as its question
    /// (comma-separated check names, or alertmanager for alerts; default none).
    #[arg(long, env = ENV_PATROL_INVESTIGATE, value_delimiter = ',', value_name = "CHECK")]
    pub patrol_investigate: Vec<String>,
    /// [key patrol_cert_files] Certificate files (PEM) the certificates check reads on
    /// every host (comma-separated; default Proxmox VE's /etc/pve/local/pve-ssl.pem and
    /// pveproxy-ssl.pem).
    #[arg(long, env = ENV_PATROL_CERT_FILES, value_delimiter = ',', value_name = "PATH")]
    pub patrol_cert_files: Vec<String>,
    /// [key patrol_tls_ports] Ports whose TLS certificate the tls_ports check asks for
    /// (openssl s_client to 127.0.0.1) on hosts that listen on them (comma-separated;
    /// default 443,636,993,995,6443,8006,8443,9443).
    #[arg(long, env = ENV_PATROL_TLS_PORTS, value_delimiter = ',', value_name = "PORT")]
    pub patrol_tls_ports: Vec<u16>,
    /// [key unattended_tokens_per_day] Model tokens investigations may use per 24 hours
    /// (default 200000); past it checks go on and investigations wait.
    #[arg(long, env = ENV_UNATTENDED_TOKENS_PER_DAY, value_name = "TOKENS")]
    pub unattended_tokens_per_day: Option<u64>,
    /// [key investigations_per_hour] Investigations that may start per hour (default 6).
    #[arg(long, env = ENV_INVESTIGATIONS_PER_HOUR, value_name = "N")]
    pub investigations_per_hour: Option<u64>,
    /// [key llm.provider] The model API's protocol: openai (any OpenAI-compatible server:
    /// OpenAI, Ollama, vLLM, llama.cpp, LM Studio, OpenRouter, LiteLLM) or anthropic. No
    /// provider: the chat answers that no model is configured.
    #[arg(long, env = ENV_LLM_PROVIDER, value_name = "PROVIDER")]
    pub llm_provider: Option<String>,
    /// [key llm.base_url] The model API root; the client appends /chat/completions or
    /// /messages. Default https://api.openai.com/v1 or https://api.anthropic.com/v1
    /// (Ollama: http://HOST:11434/v1).
    #[arg(long, env = ENV_LLM_BASE_URL, value_name = "URL")]
    pub llm_base_url: Option<String>,
    /// [key llm.api_key] The model API's key (Bearer for openai, x-api-key for anthropic).
    #[arg(long, env = ENV_LLM_API_KEY, hide_env_values = true, value_name = "KEY")]
    pub llm_api_key: Option<String>,
    /// [key llm.model] The model's name, for example gpt-4.1, claude-sonnet-4-5 or
    /// qwen3:8b; needed with --llm-provider.
    #[arg(long, env = ENV_LLM_MODEL, value_name = "MODEL")]
    pub llm_model: Option<String>,
    /// Serve POST /api/raw-exec, which forwards commands to agents WITHOUT classifying them.
    /// For end-to-end tests of the agent's guard only; only builds with the `raw-exec`
    /// feature (the test support's) have this flag.
    #[cfg(feature = "raw-exec")]
    #[arg(long)]
    pub test_raw_exec: bool,
}

impl ServeArgs {
    /// The same settings with every empty text value treated as not given. Compose files
    /// and orchestrators pass optional settings as `VIGIL_X: ${X:-}`, and no text setting
    /// has an empty value that means something, so an empty one falls through to the file
    /// and the default instead of failing as "not a URL".
    pub fn without_empty(mut self) -> Self {
        fn text(value: &mut Option<String>) {
            if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
                *value = None;
            }
        }
        fn path(value: &mut Option<PathBuf>) {
            if value.as_deref().is_some_and(|v| v.as_os_str().is_empty()) {
                *value = None;
            }
        }
        for value in [
            &mut self.http_listen,
            &mut self.grpc_listen,
            &mut self.control_level,
            &mut self.public_url,
            &mut self.database_url,
            &mut self.cluster_listen,
            &mut self.cluster_advertise,
            &mut self.llm_provider,
            &mut self.llm_base_url,
            &mut self.llm_api_key,
            &mut self.llm_model,
        ] {
            text(value);
        }
        for value in [
            &mut self.config,
            &mut self.data_dir,
            &mut self.secrets_dir,
            &mut self.http_cert,
            &mut self.http_key,
            &mut self.agent_dir,
        ] {
            path(value);
        }
        self.gateway_sans.retain(|name| !name.trim().is_empty());
        self.gateway_endpoints
            .retain(|name| !name.trim().is_empty());
        self.patrol_investigate
            .retain(|name| !name.trim().is_empty());
        self.patrol_cert_files
            .retain(|name| !name.trim().is_empty());
        self
    }
}
