//! The settings of watching without being asked: patrol (`--patrol*` and the file's
//! `[patrol_checks.<name>]` tables), the unattended budget of investigations, and the
//! configuration file's notification channels (`[[notify_channels]]`).

use crate::findings::investigate::Budget;
use crate::notify::Channel;
use crate::patrol::PatrolSettings;
use crate::patrol::settings::DEFAULT_INTERVAL_S;
use crate::{Error, Result};

use super::args::ServeArgs;
use super::file::FileConfig;

/// Environment variable of `--patrol`.
pub const ENV_PATROL: &str = "VIGIL_PATROL";
/// Environment variable of `--patrol-interval-s`.
pub const ENV_PATROL_INTERVAL_S: &str = "VIGIL_PATROL_INTERVAL_S";
/// Environment variable of `--patrol-investigate`.
pub const ENV_PATROL_INVESTIGATE: &str = "VIGIL_PATROL_INVESTIGATE";
/// Environment variable of `--patrol-cert-files`.
pub const ENV_PATROL_CERT_FILES: &str = "VIGIL_PATROL_CERT_FILES";
/// Environment variable of `--patrol-tls-ports`.
pub const ENV_PATROL_TLS_PORTS: &str = "VIGIL_PATROL_TLS_PORTS";
/// Environment variable of `--unattended-tokens-per-day`.
pub const ENV_UNATTENDED_TOKENS_PER_DAY: &str = "VIGIL_UNATTENDED_TOKENS_PER_DAY";
/// Environment variable of `--investigations-per-hour`.
pub const ENV_INVESTIGATIONS_PER_HOUR: &str = "VIGIL_INVESTIGATIONS_PER_HOUR";

/// Patrol, investigations and notifications.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WatchConfig {
    pub patrol: PatrolSettings,
    /// The checks (and `alertmanager`) whose new findings are investigated.
    pub investigate: Vec<String>,
    pub budget: Budget,
    /// The configuration file's channels.
    pub channels: Vec<Channel>,
}

/// Flags over the file.
pub fn watch_config(args: &ServeArgs, file: &FileConfig) -> Result<WatchConfig> {
    let list = |flag: &Vec<String>, key: &Option<Vec<String>>| -> Vec<String> {
        let values = if flag.is_empty() {
            key.clone().unwrap_or_default()
        } else {
            flag.clone()
        };
        values
            .into_iter()
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .collect()
    };
    let investigate = list(&args.patrol_investigate, &file.patrol_investigate);
    let cert_files = list(&args.patrol_cert_files, &file.patrol_cert_files);
    let patrol = PatrolSettings::build(
        args.patrol.or(file.patrol).unwrap_or(true),
        args.patrol_interval_s
            .or(file.patrol_interval_s)
            .unwrap_or(DEFAULT_INTERVAL_S),
        &investigate,
        &cert_files,
        &if args.patrol_tls_ports.is_empty() {
            file.patrol_tls_ports.clone().unwrap_or_default()
        } else {
            args.patrol_tls_ports.clone()
        },
        &file.patrol_checks.clone().unwrap_or_default(),
    )?;
    let defaults = Budget::default();
    let budget = Budget {
        tokens_per_day: args
            .unattended_tokens_per_day
            .or(file.unattended_tokens_per_day)
            .unwrap_or(defaults.tokens_per_day),
        per_hour: args
            .investigations_per_hour
            .or(file.investigations_per_hour)
            .unwrap_or(defaults.per_hour),
    };
    let channels = file.notify_channels.clone().unwrap_or_default();
    let mut names = std::collections::HashSet::new();
    for channel in &channels {
        channel
            .check()
            .map_err(|e| Error::Config(format!("[[notify_channels]]: {e}")))?;
        if !names.insert(channel.name.clone()) {
            return Err(Error::Config(format!(
                "[[notify_channels]]: two channels are named {:?}",
                channel.name
            )));
        }
    }
    let investigate = patrol.investigated(PatrolSettings::investigates_alerts(&investigate));
    Ok(WatchConfig {
        patrol,
        investigate,
        budget,
        channels,
    })
}
