//! The agent's settings: an optional TOML file, validated into a typed [`Config`] before
//! anything connects. Flags win where both exist (`--read-only` can only switch read-only
//! mode on, never off).
//!
//! ```toml
//! read_only = true               # refuse every write (default false)
//! max_output_cap_bytes = 8388608 # largest output cap a request may ask for (default 16 MiB)
//! heartbeat_override_s = 5       # heartbeat interval instead of the controller's (optional)
//!
//! [discovery]                    # what the agent looks for and reports (docs/inventory.md)
//! proxmox = "auto"               # auto (when pvesh, pct and qm are on PATH) | on | off
//! docker = "auto"                # auto (when the engine answers) | on | off
//! kubernetes = "auto"            # auto (in-cluster or a kubeconfig loads) | on | off
//! docker_host = "unix:///var/run/docker.sock"  # default: DOCKER_HOST, else the socket
//! kubeconfig = "/etc/rancher/k3s/k3s.yaml"     # default: KUBECONFIG, ~/.kube/config, in-cluster
//! cluster_name = "homelab"       # cluster part of pod ids (default: the context's cluster)
//! kubernetes_max_per_kind = 2000 # objects listed per kind before the list is cut
//! rescan_s = 30                  # full rescan period
//! debounce_ms = 1500             # wait after the first change of a burst
//!
//! [sandbox]                      # what reads never see (docs/sandbox.md)
//! hide = ["/srv/secrets", "/home/*/.vault-token"]  # hidden besides the defaults
//! hide_defaults = true           # false: only Vigil's own state and `hide` are hidden
//! kubeconfig = "/etc/vigil-agent/read.kubeconfig"  # what kubectl reads use (a view-only identity)
//! ```

use crate::error::{Error, Result};
use serde::Deserialize;
use std::path::Path;
use std::time::Duration;

/// Default of `max_output_cap_bytes`: 16 MiB.
pub const DEFAULT_MAX_OUTPUT_CAP: u64 = 16 * 1024 * 1024;
/// Largest accepted `max_output_cap_bytes`: 4 GiB (output is streamed, never buffered).
pub const MAX_OUTPUT_CAP_LIMIT: u64 = 4 * 1024 * 1024 * 1024;
/// Largest accepted `heartbeat_override_s`.
pub const MAX_HEARTBEAT_S: u32 = 3600;

/// The file as written, before validation. Unknown keys are errors.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    read_only: Option<bool>,
    max_output_cap_bytes: Option<u64>,
    heartbeat_override_s: Option<u32>,
    #[serde(default)]
    discovery: Discovery,
    #[serde(default)]
    sandbox: SandboxConfig,
}

/// The `[sandbox]` table: paths hidden from every read.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SandboxConfig {
    /// Patterns hidden besides the defaults (absolute paths, `*` within a component).
    pub hide: Vec<String>,
    /// Hide the default credential stores (shadow, SSH keys, kubeconfigs, …).
    pub hide_defaults: bool,
    /// The kubeconfig reads get (`KUBECONFIG`): an identity the API server lets only
    /// read. Without it, reads find no kubeconfig (the usual ones are hidden).
    pub kubeconfig: Option<std::path::PathBuf>,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            hide: Vec::new(),
            hide_defaults: true,
            kubeconfig: None,
        }
    }
}

/// Whether a discovery source runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Toggle {
    /// When the agent finds the platform.
    #[default]
    Auto,
    /// Expected: like `Auto`, but a platform that is missing at start-up is a warning in
    /// the log instead of a debug line.
    On,
    /// Never.
    Off,
}

/// The `[discovery]` table: which sources run and how.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Discovery {
    pub proxmox: Toggle,
    pub docker: Toggle,
    pub kubernetes: Toggle,
    /// Docker endpoint (`unix:///path` or `tcp://host:port`); default `DOCKER_HOST`, else
    /// `/var/run/docker.sock`.
    pub docker_host: Option<String>,
    /// Kubeconfig path; default `KUBECONFIG`, `~/.kube/config`, then in-cluster config.
    pub kubeconfig: Option<std::path::PathBuf>,
    /// The cluster part of Kubernetes resource ids.
    pub cluster_name: Option<String>,
    /// Objects listed per Kubernetes kind before the list is cut (and reported as cut).
    pub kubernetes_max_per_kind: usize,
    /// Seconds between full rescans.
    pub rescan_s: u64,
    /// Milliseconds to wait after the first change of a burst before rescanning.
    pub debounce_ms: u64,
}

/// Default of `discovery.kubernetes_max_per_kind`.
pub const DEFAULT_MAX_PER_KIND: usize = 2000;

impl Default for Discovery {
    fn default() -> Self {
        Discovery {
            proxmox: Toggle::Auto,
            docker: Toggle::Auto,
            kubernetes: Toggle::Auto,
            docker_host: None,
            kubeconfig: None,
            cluster_name: None,
            kubernetes_max_per_kind: DEFAULT_MAX_PER_KIND,
            rescan_s: 30,
            debounce_ms: 1500,
        }
    }
}

/// Why a configuration file's text is not a configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Not TOML, or not the keys and types the agent knows.
    #[error("{0}")]
    Syntax(String),
    /// A value outside what the agent accepts.
    #[error("{0}")]
    Invalid(String),
}

impl Discovery {
    fn validate(&self) -> Result<(), ConfigError> {
        if !(1..=3600).contains(&self.rescan_s) {
            return Err(ConfigError::Invalid(format!(
                "discovery.rescan_s must be between 1 and 3600, got {}",
                self.rescan_s
            )));
        }
        if self.debounce_ms > 60_000 {
            return Err(ConfigError::Invalid(format!(
                "discovery.debounce_ms must be at most 60000, got {}",
                self.debounce_ms
            )));
        }
        if !(1..=100_000).contains(&self.kubernetes_max_per_kind) {
            return Err(ConfigError::Invalid(format!(
                "discovery.kubernetes_max_per_kind must be between 1 and 100000, got {}",
                self.kubernetes_max_per_kind
            )));
        }
        if let Some(name) = &self.cluster_name
            && (name.is_empty() || name.chars().any(|c| c == ':' || c.is_whitespace()))
        {
            return Err(ConfigError::Invalid(format!(
                "discovery.cluster_name {name:?} must be non-empty, without ':' or spaces"
            )));
        }
        Ok(())
    }
}

/// Validated settings for `vigil-agent run`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Refuse every write. Fixed for the life of the process.
    pub read_only: bool,
    /// Upper bound for a request's output cap.
    pub max_output_cap_bytes: u64,
    /// Heartbeat interval to use instead of the one the controller asks for.
    pub heartbeat_override: Option<Duration>,
    /// Discovery sources and their settings.
    pub discovery: Discovery,
    /// What reads never see.
    pub sandbox: SandboxConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            read_only: false,
            max_output_cap_bytes: DEFAULT_MAX_OUTPUT_CAP,
            heartbeat_override: None,
            discovery: Discovery::default(),
            sandbox: SandboxConfig::default(),
        }
    }
}

impl Config {
    /// Read and validate a config file, then apply the `--read-only` flag.
    pub fn load(path: Option<&Path>, read_only_flag: bool) -> Result<Config> {
        let mut config = match path {
            None => Config::default(),
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| Error::Config {
                    path: path.to_owned(),
                    message: e.to_string(),
                })?;
                Config::parse(&text).map_err(|e| Error::Config {
                    path: path.to_owned(),
                    message: e.to_string(),
                })?
            }
        };
        config.read_only |= read_only_flag;
        Ok(config)
    }

    /// Parse and validate TOML text.
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        let raw: RawConfig =
            toml::from_str(text).map_err(|e| ConfigError::Syntax(e.message().to_owned()))?;
        let max_output_cap_bytes = raw.max_output_cap_bytes.unwrap_or(DEFAULT_MAX_OUTPUT_CAP);
        if max_output_cap_bytes == 0 || max_output_cap_bytes > MAX_OUTPUT_CAP_LIMIT {
            return Err(ConfigError::Invalid(format!(
                "max_output_cap_bytes must be between 1 and {MAX_OUTPUT_CAP_LIMIT}, \
                 got {max_output_cap_bytes}"
            )));
        }
        let heartbeat_override = match raw.heartbeat_override_s {
            None => None,
            Some(s) if (1..=MAX_HEARTBEAT_S).contains(&s) => Some(Duration::from_secs(s.into())),
            Some(s) => {
                return Err(ConfigError::Invalid(format!(
                    "heartbeat_override_s must be between 1 and {MAX_HEARTBEAT_S}, got {s}"
                )));
            }
        };
        raw.discovery.validate()?;
        for pattern in &raw.sandbox.hide {
            crate::exec::sandbox::hidden::check_pattern(pattern)
                .map_err(|e| ConfigError::Invalid(format!("sandbox.hide: {e}")))?;
        }
        Ok(Config {
            read_only: raw.read_only.unwrap_or(false),
            max_output_cap_bytes,
            heartbeat_override,
            discovery: raw.discovery,
            sandbox: raw.sandbox,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_gives_defaults() {
        assert_eq!(Config::parse(""), Ok(Config::default()));
    }

    #[test]
    fn all_keys_parse() {
        let c = Config::parse(
            "read_only = true\nmax_output_cap_bytes = 4096\nheartbeat_override_s = 5\n",
        )
        .unwrap();
        assert!(c.read_only);
        assert_eq!(c.max_output_cap_bytes, 4096);
        assert_eq!(c.heartbeat_override, Some(Duration::from_secs(5)));
        let d = Config::parse(
            "[discovery]\ndocker = \"off\"\nproxmox = \"on\"\ncluster_name = \"lab\"\nrescan_s = 5\n",
        )
        .unwrap()
        .discovery;
        assert_eq!(
            (d.docker, d.proxmox, d.kubernetes),
            (Toggle::Off, Toggle::On, Toggle::Auto)
        );
        assert_eq!((d.cluster_name.as_deref(), d.rescan_s), (Some("lab"), 5));
        let sandbox = Config::parse("[sandbox]\nhide = [\"/srv/k\"]\nhide_defaults = false\n")
            .unwrap()
            .sandbox;
        assert_eq!(sandbox.hide, vec!["/srv/k".to_owned()]);
        assert!(!sandbox.hide_defaults);
        assert!(Config::default().sandbox.hide_defaults);
    }

    #[test]
    fn unknown_keys_wrong_types_and_bad_ranges_are_errors() {
        let unknown = Config::parse("readonly = true").unwrap_err();
        assert!(
            matches!(&unknown, ConfigError::Syntax(text) if text.contains("readonly")),
            "{unknown:?}"
        );
        assert!(matches!(
            Config::parse("max_output_cap_bytes = 0"),
            Err(ConfigError::Invalid(_))
        ));
        assert!(Config::parse("read_only = \"yes\"").is_err());
        assert!(Config::parse("max_output_cap_bytes = 0").is_err());
        assert!(Config::parse("max_output_cap_bytes = 999999999999").is_err());
        assert!(Config::parse("max_output_cap_bytes = -1").is_err());
        assert!(Config::parse("heartbeat_override_s = 0").is_err());
        assert!(Config::parse("heartbeat_override_s = 3601").is_err());
        assert!(Config::parse("this is not toml").is_err());
        assert!(Config::parse("[discovery]\ndocker = \"maybe\"").is_err());
        assert!(Config::parse("[discovery]\nrescan_s = 0").is_err());
        assert!(Config::parse("[discovery]\ncluster_name = \"a:b\"").is_err());
        assert!(Config::parse("[discovery]\nkubernetes_max_per_kind = 0").is_err());
        assert!(Config::parse("[discovery]\nwhat = 1").is_err());
        assert!(Config::parse("[sandbox]\nhide = [\"relative/path\"]").is_err());
        assert!(Config::parse("[sandbox]\nhide = [\"/\"]").is_err());
        assert!(Config::parse("[sandbox]\nwhat = 1").is_err());
    }

    #[test]
    fn the_flag_can_only_turn_read_only_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent.toml");
        std::fs::write(&path, "read_only = false\n").unwrap();
        assert!(Config::load(Some(&path), true).unwrap().read_only);
        std::fs::write(&path, "read_only = true\n").unwrap();
        assert!(Config::load(Some(&path), false).unwrap().read_only);
        assert!(!Config::load(None, false).unwrap().read_only);
        let missing = Config::load(Some(&dir.path().join("nope.toml")), false).unwrap_err();
        assert!(matches!(missing, Error::Config { .. }), "{missing}");
    }
}
