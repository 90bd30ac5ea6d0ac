//! Alertmanager's webhook (version 4) as findings: each alert, by its fingerprint, is one
//! finding of check `alertmanager:<alertname>` while it fires, resolved by the notification
//! that says it is resolved. Pure: parsing, checking and mapping, with the inventory lookup
//! passed in. The payload is Alertmanager's own JSON, read with serde (no hand parser).

use std::collections::BTreeMap;

use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::Severity;
use crate::{Error, Result};

/// Most alerts one notification may carry (Alertmanager's `max_alerts` bounds what it
/// sends; more than this is refused as too large).
pub const MAX_ALERTS: usize = 1000;
/// Longest label or annotation value kept (longer ones are cut).
const MAX_VALUE_CHARS: usize = 2000;
/// The labels that name where an alert is, the most specific first.
pub const RESOURCE_LABELS: [&str; 9] = [
    "pod",
    "container",
    "container_name",
    "name",
    "hostname",
    "nodename",
    "instance",
    "host",
    "node",
];

/// A webhook notification (the fields Vigil reads; others are ignored).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Notification {
    pub version: String,
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub receiver: String,
    #[serde(default)]
    pub external_url: String,
    pub alerts: Vec<Alert>,
}

/// One alert of a notification.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Alert {
    pub status: String,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    #[serde(default)]
    pub starts_at: String,
    #[serde(default)]
    pub generator_url: String,
    #[serde(default)]
    pub fingerprint: String,
}

/// What an alert means for its finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AlertChange {
    /// It fires: record (or repeat) its finding.
    Firing(AlertFinding),
    /// It is resolved: resolve the finding of this check and subject.
    Resolved { check: String, subject: String },
}

/// A firing alert's finding, before the inventory lookup fills in its resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertFinding {
    pub check: String,
    pub subject: String,
    pub severity: Severity,
    pub summary: String,
    pub evidence: String,
    /// The label values that may name its resource, most specific first.
    pub resource_hints: Vec<String>,
}

impl Notification {
    /// Parses and checks a body: version 4, at most [`MAX_ALERTS`] alerts, each firing or
    /// resolved with an `alertname`.
    pub fn parse(body: &[u8]) -> Result<Notification> {
        let notification: Notification = serde_json::from_slice(body).map_err(|e| {
            Error::InvalidInput(format!("not an Alertmanager webhook notification: {e}"))
        })?;
        if notification.version.trim() != "4" {
            return Err(Error::InvalidInput(format!(
                "Alertmanager webhook version {:?} is not supported (version 4 is)",
                notification.version
            )));
        }
        if notification.alerts.len() > MAX_ALERTS {
            return Err(Error::coded_with(
                crate::error::ApiCode::PayloadTooLarge,
                format!(
                    "{} alerts in one notification; at most {MAX_ALERTS} (set max_alerts in \
                     Alertmanager's webhook_config)",
                    notification.alerts.len()
                ),
                serde_json::json!({ "max_alerts": MAX_ALERTS }),
            ));
        }
        for (i, alert) in notification.alerts.iter().enumerate() {
            if !matches!(alert.status.as_str(), "firing" | "resolved") {
                return Err(Error::InvalidInput(format!(
                    "alerts[{i}].status is {:?}; firing or resolved",
                    alert.status
                )));
            }
            if alert
                .labels
                .get("alertname")
                .is_none_or(|n| n.trim().is_empty())
            {
                return Err(Error::InvalidInput(format!(
                    "alerts[{i}] has no alertname label"
                )));
            }
        }
        Ok(notification)
    }

    /// What each alert changes, in order.
    pub fn changes(&self) -> Vec<AlertChange> {
        self.alerts.iter().map(Alert::change).collect()
    }
}

impl Alert {
    fn change(&self) -> AlertChange {
        let name = self
            .labels
            .get("alertname")
            .map(String::as_str)
            .unwrap_or("");
        let check = format!("alertmanager:{}", cut(name.trim(), 200));
        let subject = format!("alert {}", self.fingerprint());
        if self.status == "resolved" {
            return AlertChange::Resolved { check, subject };
        }
        let summary = ["summary", "description", "message"]
            .iter()
            .find_map(|key| self.annotations.get(*key).filter(|v| !v.trim().is_empty()))
            .map(|text| cut(text.trim(), 500))
            .unwrap_or_else(|| format!("{name} is firing"));
        let mut evidence = format!("alert {name} firing since {}\nlabels:\n", self.starts_at);
        for (key, value) in &self.labels {
            evidence.push_str(&format!("  {key}={}\n", cut(value, MAX_VALUE_CHARS)));
        }
        if !self.annotations.is_empty() {
            evidence.push_str("annotations:\n");
            for (key, value) in &self.annotations {
                evidence.push_str(&format!("  {key}: {}\n", cut(value, MAX_VALUE_CHARS)));
            }
        }
        if !self.generator_url.is_empty() {
            evidence.push_str(&format!("source: {}\n", cut(&self.generator_url, 500)));
        }
        AlertChange::Firing(AlertFinding {
            check,
            subject,
            severity: Severity::from_alert_label(self.labels.get("severity").map(String::as_str)),
            summary,
            evidence,
            resource_hints: self.resource_hints(),
        })
    }

    /// Alertmanager's fingerprint, or (when a sender left it out) a hash of the labels.
    fn fingerprint(&self) -> String {
        let given = self.fingerprint.trim();
        if !given.is_empty()
            && given.len() <= 64
            && given.chars().all(|c| c.is_ascii_alphanumeric())
        {
            return given.to_owned();
        }
        let mut hash = Sha256::new();
        for (key, value) in &self.labels {
            hash.update(key.as_bytes());
            hash.update([0]);
            hash.update(value.as_bytes());
            hash.update([0]);
        }
        hex::encode(&hash.finalize()[..8])
    }

    fn resource_hints(&self) -> Vec<String> {
        let mut hints = Vec::new();
        for key in RESOURCE_LABELS {
            let Some(value) = self.labels.get(key).map(|v| v.trim()) else {
                continue;
            };
            for hint in [value.to_owned(), without_port(value)] {
                if !hint.is_empty() && !hints.contains(&hint) {
                    hints.push(hint);
                }
            }
        }
        hints
    }
}

/// `host:9100` → `host`, `[::1]:9100` → `::1`; anything else as it is.
fn without_port(value: &str) -> String {
    if let Some(rest) = value.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest).to_owned();
    }
    match value.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') && port.chars().all(|c| c.is_ascii_digit()) => {
            host.to_owned()
        }
        _ => value.to_owned(),
    }
}

fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(status: &str) -> String {
        format!(
            r#"{{"version":"4","groupKey":"{{}}:{{alertname=\"DiskFull\"}}","truncatedAlerts":0,
            "status":"{status}","receiver":"vigil","groupLabels":{{}},"commonLabels":{{}},
            "commonAnnotations":{{}},"externalURL":"http://am:9093",
            "alerts":[{{"status":"{status}","labels":{{"alertname":"DiskFull","instance":"web01:9100",
            "severity":"page"}},"annotations":{{"summary":"/ is 97% full"}},
            "startsAt":"2026-11-27T01:02:03Z","endsAt":"0001-01-01T00:00:00Z",
            "generatorURL":"http://prom:9090/graph","fingerprint":"3f2a9c0b1d2e4f5a"}}]}}"#
        )
    }

    #[test]
    fn a_firing_alert_is_a_finding_named_by_its_alert_and_fingerprint() {
        let n = Notification::parse(body("firing").as_bytes()).unwrap();
        let [AlertChange::Firing(f)]: [AlertChange; 1] = n.changes().try_into().unwrap() else {
            panic!()
        };
        assert_eq!(f.check, "alertmanager:DiskFull");
        assert_eq!(f.subject, "alert 3f2a9c0b1d2e4f5a");
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(f.summary, "/ is 97% full");
        assert_eq!(f.resource_hints, ["web01:9100", "web01"]);
        assert!(f.evidence.contains("instance=web01:9100"), "{}", f.evidence);
        let n = Notification::parse(body("resolved").as_bytes()).unwrap();
        assert_eq!(
            n.changes(),
            [AlertChange::Resolved {
                check: "alertmanager:DiskFull".into(),
                subject: "alert 3f2a9c0b1d2e4f5a".into()
            }]
        );
    }

    #[test]
    fn malformed_notifications_are_refused() {
        for bad in [
            "",
            "{}",
            "[]",
            r#"{"version":"3","alerts":[]}"#,
            r#"{"version":"4"}"#,
            r#"{"version":"4","alerts":[{"status":"odd","labels":{"alertname":"A"}}]}"#,
            r#"{"version":"4","alerts":[{"status":"firing","labels":{}}]}"#,
            r#"{"version":"4","alerts":[{"status":"firing","labels":{"alertname":" "}}]}"#,
        ] {
            let error = Notification::parse(bad.as_bytes()).unwrap_err();
            assert_eq!(error.api_code(), "INVALID_INPUT", "{bad}: {error}");
        }
        let many = format!(
            r#"{{"version":"4","alerts":[{}]}}"#,
            vec![r#"{"status":"firing","labels":{"alertname":"A"}}"#; MAX_ALERTS + 1].join(",")
        );
        let error = Notification::parse(many.as_bytes()).unwrap_err();
        assert_eq!(error.api_code(), "PAYLOAD_TOO_LARGE");
    }

    #[test]
    fn a_missing_or_odd_fingerprint_is_made_from_the_labels() {
        let text = r#"{"version":"4","alerts":[{"status":"firing","labels":{"alertname":"A","x":"1"},
            "fingerprint":"../../etc"}]}"#;
        let n = Notification::parse(text.as_bytes()).unwrap();
        let [AlertChange::Firing(f)]: [AlertChange; 1] = n.changes().try_into().unwrap() else {
            panic!()
        };
        assert_eq!(f.subject.len(), "alert ".len() + 16);
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.summary, "A is firing");
    }

    #[test]
    fn ports_come_off_instances() {
        assert_eq!(without_port("web01:9100"), "web01");
        assert_eq!(without_port("[::1]:9100"), "::1");
        assert_eq!(without_port("10.0.0.5"), "10.0.0.5");
        assert_eq!(without_port("fe80::1"), "fe80::1");
    }
}
