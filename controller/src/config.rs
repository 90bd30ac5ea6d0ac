//! Configuration of `serve` and the defaults every subcommand shares. Flags are read with
//! clap (each with its environment variable, named once here) into [`ServeArgs`], then
//! validated into a typed [`Config`] before any socket is bound.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::pki::GatewaySan;
use crate::{Error, Result};

/// Environment variable for `--data-dir`.
pub const ENV_DATA_DIR: &str = "VIGIL_DATA_DIR";
/// Environment variable for `--http-listen`.
pub const ENV_HTTP_LISTEN: &str = "VIGIL_HTTP_LISTEN";
/// Environment variable for `--grpc-listen`.
pub const ENV_GRPC_LISTEN: &str = "VIGIL_GRPC_LISTEN";
/// Environment variable for `--gateway-san` (comma-separated).
pub const ENV_GATEWAY_SANS: &str = "VIGIL_GATEWAY_SANS";
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

/// The flags of `serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub data_dir: DataDirArg,
    /// Address of the HTTP API (IP:PORT). Keep it on loopback unless a proxy fronts it.
    #[arg(long, env = ENV_HTTP_LISTEN, default_value = DEFAULT_HTTP_LISTEN, value_name = "ADDR")]
    pub http_listen: String,
    /// Address of the agent gateway (IP:PORT), where agents enroll and connect over TLS.
    #[arg(long, env = ENV_GRPC_LISTEN, default_value = DEFAULT_GRPC_LISTEN, value_name = "ADDR")]
    pub grpc_listen: String,
    /// Extra DNS name or IP address for the gateway certificate (repeatable; the env
    /// variable takes a comma-separated list). Always present: vigil-gateway, localhost,
    /// this host's name, 127.0.0.1 and ::1.
    #[arg(long = "gateway-san", env = ENV_GATEWAY_SANS, value_delimiter = ',', value_name = "NAME")]
    pub gateway_sans: Vec<String>,
    /// How often agents send a heartbeat, in seconds; a stream silent for three intervals
    /// is dropped.
    #[arg(long, default_value_t = DEFAULT_HEARTBEAT_S, value_name = "SECONDS")]
    pub heartbeat_interval_s: u64,
    /// Serve POST /api/raw-exec, which forwards commands to agents WITHOUT classifying them.
    /// For end-to-end tests of the agent's guard only; never in production.
    #[arg(long)]
    pub test_raw_exec: bool,
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
    /// Whether `POST /api/raw-exec` exists.
    pub raw_exec: bool,
}

fn listen_addr(flag: &str, value: &str) -> Result<SocketAddr> {
    value.trim().parse().map_err(|_| {
        Error::Config(format!(
            "--{flag} {value:?} is not an IP:PORT address (for example 127.0.0.1:8640 or [::]:8641)"
        ))
    })
}

impl Config {
    /// Validates the flags.
    pub fn from_args(args: &ServeArgs) -> Result<Config> {
        let http_listen = listen_addr("http-listen", &args.http_listen)?;
        let grpc_listen = listen_addr("grpc-listen", &args.grpc_listen)?;
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
        if !(1..=300).contains(&args.heartbeat_interval_s) {
            return Err(Error::Config(format!(
                "--heartbeat-interval-s {} must be between 1 and 300",
                args.heartbeat_interval_s
            )));
        }
        let gateway_sans = args
            .gateway_sans
            .iter()
            .filter(|s| !s.trim().is_empty())
            .map(|s| GatewaySan::parse(s))
            .collect::<Result<Vec<_>>>()?;
        let data_dir = args.data_dir.data_dir.clone();
        if data_dir.exists() && !data_dir.is_dir() {
            return Err(Error::Config(format!(
                "--data-dir {} exists and is not a directory",
                data_dir.display()
            )));
        }
        Ok(Config {
            data_dir,
            http_listen,
            grpc_listen,
            gateway_sans,
            heartbeat: Duration::from_secs(args.heartbeat_interval_s),
            raw_exec: args.test_raw_exec,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> ServeArgs {
        ServeArgs {
            data_dir: DataDirArg {
                data_dir: PathBuf::from("/nonexistent/vigil"),
            },
            http_listen: DEFAULT_HTTP_LISTEN.into(),
            grpc_listen: DEFAULT_GRPC_LISTEN.into(),
            gateway_sans: vec!["vigil.example".into(), "10.0.0.2".into()],
            heartbeat_interval_s: 10,
            test_raw_exec: false,
        }
    }

    #[test]
    fn defaults_validate() {
        let config = Config::from_args(&args()).unwrap();
        assert_eq!(config.http_listen.port(), 8640);
        assert_eq!(config.gateway_sans.len(), 2);
    }

    #[test]
    fn bad_values_are_refused_before_binding() {
        let mut bad = args();
        bad.http_listen = "localhost:80".into();
        assert!(
            Config::from_args(&bad)
                .unwrap_err()
                .to_string()
                .contains("--http-listen")
        );
        let mut bad = args();
        bad.http_listen = "0.0.0.0:8641".into();
        assert!(Config::from_args(&bad).is_err(), "same port");
        let mut bad = args();
        bad.heartbeat_interval_s = 0;
        assert!(Config::from_args(&bad).is_err());
        let mut bad = args();
        bad.gateway_sans = vec!["bad name!".into()];
        assert!(Config::from_args(&bad).is_err());
    }
}
