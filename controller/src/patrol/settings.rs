//! Patrol's settings: which checks run, how often, on which resources (kinds, labels,
//! names), their thresholds and whether their new findings are investigated. Defaults
//! come from [`Check`]; the configuration file's `[patrol_checks.<name>]` tables override
//! them one field at a time.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use serde::Deserialize;
use vigil_shared::resource::{Resource, ResourceKind};

use super::checks::Check;
use crate::{Error, Result};

/// Default seconds between two runs of a check on one resource.
pub const DEFAULT_INTERVAL_S: u64 = 300;
/// Shortest interval a check may have.
pub const MIN_INTERVAL_S: u64 = 1;

/// One `[patrol_checks.<name>]` table (every key optional).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckFileConfig {
    pub enabled: Option<bool>,
    pub interval_s: Option<u64>,
    pub kinds: Option<Vec<String>>,
    pub labels: Option<BTreeMap<String, String>>,
    pub names: Option<Vec<String>>,
    pub warning: Option<f64>,
    pub critical: Option<f64>,
    pub investigate: Option<bool>,
}

/// One check's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckSettings {
    pub enabled: bool,
    pub interval: Duration,
    pub kinds: Vec<ResourceKind>,
    /// Every label here must be on the resource (its own, or its agent's join labels).
    pub labels: BTreeMap<String, String>,
    /// When not empty, only resources with one of these names (or ids).
    pub names: Vec<String>,
    pub thresholds: (f64, f64),
    pub investigate: bool,
}

impl CheckSettings {
    fn default_for(check: Check, interval_s: u64) -> CheckSettings {
        CheckSettings {
            enabled: true,
            interval: Duration::from_secs(interval_s),
            kinds: check.default_kinds().to_vec(),
            labels: BTreeMap::new(),
            names: Vec::new(),
            thresholds: check.default_thresholds(),
            investigate: false,
        }
    }

    /// True when the check runs on `resource` (whose agent has `agent_labels`).
    pub fn selects(&self, resource: &Resource, agent_labels: &BTreeMap<String, String>) -> bool {
        self.kinds.contains(&resource.kind)
            && (self.names.is_empty()
                || self
                    .names
                    .iter()
                    .any(|n| *n == resource.name || *n == resource.id.to_string()))
            && self.labels.iter().all(|(key, value)| {
                resource.facts.labels.get(key) == Some(value)
                    || agent_labels.get(key) == Some(value)
            })
    }
}

/// Patrol's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct PatrolSettings {
    /// False: no check runs (alerts are still taken).
    pub enabled: bool,
    pub checks: HashMap<Check, CheckSettings>,
    /// Certificate files the `certificates` check reads.
    pub cert_files: Vec<String>,
    /// Ports the `tls_ports` check asks for a certificate, where a host listens on them.
    pub tls_ports: Vec<u16>,
}

/// The certificate files checked when none are configured: Proxmox VE's own.
pub const DEFAULT_CERT_FILES: [&str; 2] = [
    "/etc/pve/local/pve-ssl.pem",
    "/etc/pve/local/pveproxy-ssl.pem",
];
/// The ports the `tls_ports` check asks when none are configured: HTTPS, LDAPS, IMAPS,
/// POP3S, the Kubernetes API, Proxmox VE, and the usual alternative HTTPS ports.
pub const DEFAULT_TLS_PORTS: [u16; 8] = [443, 636, 993, 995, 6443, 8006, 8443, 9443];

impl Default for PatrolSettings {
    fn default() -> Self {
        PatrolSettings::build(true, DEFAULT_INTERVAL_S, &[], &[], &[], &BTreeMap::new())
            .unwrap_or_else(|_| PatrolSettings {
                enabled: false,
                checks: HashMap::new(),
                cert_files: Vec::new(),
                tls_ports: Vec::new(),
            })
    }
}

impl PatrolSettings {
    /// The settings from `serve`'s flags and file: `interval_s` for every check,
    /// `investigate` the checks (or `alertmanager`) whose new findings are investigated,
    /// and the file's per-check tables over both.
    pub fn build(
        enabled: bool,
        interval_s: u64,
        investigate: &[String],
        cert_files: &[String],
        tls_ports: &[u16],
        tables: &BTreeMap<String, CheckFileConfig>,
    ) -> Result<PatrolSettings> {
        if tls_ports.contains(&0) {
            return Err(Error::Config("--patrol-tls-ports: 0 is not a port".into()));
        }
        if interval_s < MIN_INTERVAL_S {
            return Err(Error::Config(format!(
                "--patrol-interval-s {interval_s}: at least {MIN_INTERVAL_S}"
            )));
        }
        for name in investigate {
            if name != "alertmanager" && Check::parse(name).is_none() {
                return Err(Error::Config(format!(
                    "--patrol-investigate {name:?}: not a check ({}, or alertmanager)",
                    names()
                )));
            }
        }
        for file in cert_files {
            if !super::checks::is_plain_path(file) {
                return Err(Error::Config(format!(
                    "--patrol-cert-files {file:?}: an absolute path of letters, digits and /._-+@"
                )));
            }
        }
        let mut checks = HashMap::new();
        for check in Check::ALL {
            let mut settings = CheckSettings::default_for(check, interval_s);
            settings.investigate = investigate.iter().any(|n| n == check.as_str());
            checks.insert(check, settings);
        }
        for (name, table) in tables {
            let check = Check::parse(name).ok_or_else(|| {
                Error::Config(format!("[patrol_checks.{name}]: not a check ({})", names()))
            })?;
            let settings = checks
                .entry(check)
                .or_insert_with(|| CheckSettings::default_for(check, interval_s));
            apply(name, settings, table)?;
        }
        let cert_files = if cert_files.is_empty() {
            DEFAULT_CERT_FILES.iter().map(|f| (*f).to_owned()).collect()
        } else {
            cert_files.to_vec()
        };
        let tls_ports = if tls_ports.is_empty() {
            DEFAULT_TLS_PORTS.to_vec()
        } else {
            tls_ports.to_vec()
        };
        Ok(PatrolSettings {
            enabled,
            checks,
            cert_files,
            tls_ports,
        })
    }

    /// The alerts' findings are investigated.
    pub fn investigates_alerts(investigate: &[String]) -> bool {
        investigate.iter().any(|n| n == "alertmanager")
    }

    /// The checks whose findings are investigated (names, for the findings service).
    pub fn investigated(&self, investigate_alerts: bool) -> Vec<String> {
        let mut names: Vec<String> = self
            .checks
            .iter()
            .filter(|(_, s)| s.investigate)
            .map(|(c, _)| c.as_str().to_owned())
            .collect();
        if investigate_alerts {
            names.push("alertmanager".into());
        }
        names.sort();
        names
    }
}

fn names() -> String {
    Check::ALL.map(Check::as_str).join(", ")
}

fn apply(name: &str, settings: &mut CheckSettings, table: &CheckFileConfig) -> Result<()> {
    let bad = |what: String| Error::Config(format!("[patrol_checks.{name}] {what}"));
    if let Some(enabled) = table.enabled {
        settings.enabled = enabled;
    }
    if let Some(interval) = table.interval_s {
        if interval < MIN_INTERVAL_S {
            return Err(bad(format!(
                "interval_s {interval}: at least {MIN_INTERVAL_S}"
            )));
        }
        settings.interval = Duration::from_secs(interval);
    }
    if let Some(kinds) = &table.kinds {
        settings.kinds = kinds
            .iter()
            .map(|k| {
                k.parse::<ResourceKind>()
                    .map_err(|e| bad(format!("kinds: {e}")))
            })
            .collect::<Result<_>>()?;
    }
    if let Some(labels) = &table.labels {
        settings.labels.clone_from(labels);
    }
    if let Some(names) = &table.names {
        settings.names.clone_from(names);
    }
    if let Some(warning) = table.warning {
        settings.thresholds.0 = warning;
    }
    if let Some(critical) = table.critical {
        settings.thresholds.1 = critical;
    }
    if !settings.thresholds.0.is_finite() || !settings.thresholds.1.is_finite() {
        return Err(bad("warning and critical must be numbers".into()));
    }
    if let Some(investigate) = table.investigate {
        settings.investigate = investigate;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_tables() {
        let defaults = PatrolSettings::default();
        assert_eq!(defaults.checks.len(), Check::ALL.len());
        assert_eq!(defaults.checks[&Check::Disk].thresholds, (90.0, 95.0));
        assert_eq!(
            defaults.checks[&Check::Disk].interval,
            Duration::from_secs(300)
        );
        assert!(!defaults.checks[&Check::Disk].investigate);
        let tables: BTreeMap<String, CheckFileConfig> = toml::from_str(
            r#"
            [disk]
            interval_s = 2
            warning = 50
            kinds = ["host", "lxc"]
            investigate = true
            [zfs]
            enabled = false
            "#,
        )
        .unwrap();
        let s = PatrolSettings::build(
            true,
            60,
            &["memory".into(), "alertmanager".into()],
            &[],
            &[],
            &tables,
        )
        .unwrap();
        let disk = &s.checks[&Check::Disk];
        assert_eq!(
            (disk.interval, disk.thresholds),
            (Duration::from_secs(2), (50.0, 95.0))
        );
        assert_eq!(disk.kinds, [ResourceKind::Host, ResourceKind::Lxc]);
        assert!(!s.checks[&Check::Zfs].enabled);
        assert_eq!(s.investigated(true), ["alertmanager", "disk", "memory"]);
        assert_eq!(s.cert_files, DEFAULT_CERT_FILES);
        assert_eq!(s.tls_ports, DEFAULT_TLS_PORTS);
    }

    #[test]
    fn bad_settings_are_refused() {
        let empty = BTreeMap::new();
        assert!(PatrolSettings::build(true, 0, &[], &[], &[], &empty).is_err());
        assert!(PatrolSettings::build(true, 60, &["dsk".into()], &[], &[], &empty).is_err());
        assert!(PatrolSettings::build(true, 60, &[], &["/a;b".into()], &[], &empty).is_err());
        assert!(PatrolSettings::build(true, 60, &[], &[], &[0], &empty).is_err());
        for table in [
            "[dsk]\nenabled = true",
            "[disk]\nkinds = [\"box\"]",
            "[disk]\ninterval_s = 0",
        ] {
            let tables: BTreeMap<String, CheckFileConfig> = toml::from_str(table).unwrap();
            assert!(
                PatrolSettings::build(true, 60, &[], &[], &[], &tables).is_err(),
                "{table}"
            );
        }
        assert!(toml::from_str::<BTreeMap<String, CheckFileConfig>>("[disk]\nfoo = 1").is_err());
    }
}
