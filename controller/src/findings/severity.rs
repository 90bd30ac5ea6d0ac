//! A finding's severity: `info` < `warning` < `critical`, the one scale of patrol checks,
//! alerts and the notification channels' `min_severity`.

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Critical,
}

impl Severity {
    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }

    /// Parses a stored or configured name.
    pub fn parse(text: &str) -> Result<Severity> {
        match text.trim() {
            "info" => Ok(Severity::Info),
            "warning" => Ok(Severity::Warning),
            "critical" => Ok(Severity::Critical),
            other => Err(Error::InvalidInput(format!(
                "unknown severity {other:?} (info, warning or critical)"
            ))),
        }
    }

    /// The severity an alert's `severity` label means: the usual names of Prometheus
    /// rules (`page`, `error`, `warn`, `none`, …) fold onto the three; anything else, or
    /// no label, is a warning.
    pub fn from_alert_label(label: Option<&str>) -> Severity {
        match label.map(|l| l.trim().to_ascii_lowercase()).as_deref() {
            Some("critical" | "crit" | "page" | "error" | "high" | "emergency" | "alert") => {
                Severity::Critical
            }
            Some("info" | "informational" | "none" | "low" | "notice" | "debug") => Severity::Info,
            _ => Severity::Warning,
        }
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_order() {
        for s in [Severity::Info, Severity::Warning, Severity::Critical] {
            assert_eq!(Severity::parse(s.as_str()).unwrap(), s);
        }
        assert!(Severity::Info < Severity::Warning && Severity::Warning < Severity::Critical);
        assert!(Severity::parse("fatal").is_err());
    }

    #[test]
    fn alert_labels_fold_onto_three() {
        assert_eq!(Severity::from_alert_label(Some("Page")), Severity::Critical);
        assert_eq!(Severity::from_alert_label(Some("none")), Severity::Info);
        assert_eq!(
            Severity::from_alert_label(Some("whatever")),
            Severity::Warning
        );
        assert_eq!(Severity::from_alert_label(None), Severity::Warning);
    }
}
