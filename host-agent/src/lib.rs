//! `vigil-agent` is the small program installed on each managed machine. It enrolls once
//! with a join token (`vigil-agent join`, [`link::enroll()`]), then keeps one mutually
//! authenticated gRPC stream open to the controller (`vigil-agent run`, [`link::run`]).
//! Every command that arrives on the stream passes the agent's own [`guard`] first — reads
//! are classified again with `vigil_shared::policy`, writes need a grant signed by the key
//! pinned at enrollment — and only then runs under [`exec`]: no TTY, stdin closed, a fixed
//! environment, a hard timeout, an output cap and a kill of the whole process group.
//!
//! Start reading at [`link::session`] (one stream's life) and [`guard::Guard::admit`] (the
//! gate). The on-disk state lives in [`state`], the TOML settings in [`config`], the
//! systemd unit in [`install`], host facts in [`inventory`], and the command line in
//! [`cli`]. The wire contract is `docs/agent-link.md`.

pub mod cli;
pub mod config;
pub mod error;
pub mod exec;
pub mod guard;
pub mod install;
pub mod inventory;
#[cfg(feature = "kubernetes")]
pub mod kube_api;
pub mod link;
pub mod platform;
pub mod state;

#[cfg(test)]
mod testing;

pub use error::{Error, Result};

/// The agent's version, as reported by `vigil-agent --version` and in its hello.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The server name the agent expects in the gateway certificate, whatever the URL says.
pub const GATEWAY_SERVER_NAME: &str = "vigil-gateway";

/// The default state directory.
pub const DEFAULT_STATE_DIR: &str = "/var/lib/vigil-agent";

/// The environment variable that overrides the default state directory.
pub const ENV_STATE_DIR: &str = "VIGIL_AGENT_STATE_DIR";

/// The environment variable that names a config file for `run`.
pub const ENV_CONFIG: &str = "VIGIL_AGENT_CONFIG";
