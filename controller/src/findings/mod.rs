//! Findings: the one service that records what patrol checks ([`crate::patrol`]) and
//! monitoring alerts ([`alertmanager`]) found. It redacts and bounds what it stores, keeps
//! one finding per check and subject while it is not resolved (a repeat counts), resolves
//! it when its check passes again, lets an operator acknowledge or snooze it, tells the
//! notification channels ([`crate::notify`]), and may open an investigation
//! ([`investigate`]).

pub mod alertmanager;
pub mod investigate;
pub mod severity;

use std::sync::{Arc, OnceLock};

use serde::Serialize;
use vigil_shared::resource::Resource;

pub use severity::Severity;

use crate::agents::Agents;
use crate::clock::{rfc3339, unix_now};
use crate::metrics::Metrics;
use crate::notify::{Message, Notifier, NotifyEvent};
use crate::store::Store;
use crate::store::findings::{FindingRow, Observation, Recorded};
use crate::{Error, Result};

/// Longest summary kept.
const MAX_SUMMARY_CHARS: usize = 500;
/// Longest evidence kept.
const MAX_EVIDENCE_CHARS: usize = 8000;
/// Most findings one list answers.
pub const MAX_LIST: i64 = 1000;

/// A finding as the API, the CLI and notifications show it.
#[derive(Debug, Clone, Serialize)]
pub struct FindingView {
    pub id: String,
    pub check: String,
    pub resource_id: Option<String>,
    pub resource_name: Option<String>,
    pub severity: String,
    pub status: String,
    pub summary: String,
    pub evidence: String,
    pub first_seen: String,
    pub last_seen: String,
    pub count: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acknowledged_by: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snoozed_until: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub investigation_session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub investigation_status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub investigation_answer: Option<String>,
}

impl From<&FindingRow> for FindingView {
    fn from(row: &FindingRow) -> FindingView {
        FindingView {
            id: row.id.clone(),
            check: row.check.clone(),
            resource_id: row.resource_id.clone(),
            resource_name: row.resource_name.clone(),
            severity: row.severity.clone(),
            status: row.status.clone(),
            summary: row.summary.clone(),
            evidence: row.evidence.clone(),
            first_seen: rfc3339(row.first_seen),
            last_seen: rfc3339(row.last_seen),
            count: row.count,
            resolved_at: row.resolved_at.map(rfc3339),
            acknowledged_by: row.acknowledged_by.clone(),
            snoozed_until: row.snoozed_until.map(rfc3339),
            investigation_session_id: row.investigation_session_id.clone(),
            investigation_status: row.investigation_status.clone(),
            investigation_answer: row.investigation_answer.clone(),
        }
    }
}

/// What one Alertmanager notification changed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AlertReport {
    /// Findings recorded (new or repeated).
    pub firing: usize,
    /// Findings resolved.
    pub resolved: usize,
    /// Firing alerts whose labels named no resource in the inventory (their findings
    /// have none).
    pub unmatched: usize,
}

#[derive(Debug)]
struct Inner {
    store: Store,
    agents: Agents,
    notifier: Notifier,
    metrics: Arc<Metrics>,
    /// Checks (by name; `alertmanager` for every alert) whose new findings are
    /// investigated.
    investigate: Vec<String>,
    investigator: OnceLock<investigate::Investigator>,
}

/// The findings service (cheap to clone).
#[derive(Debug, Clone)]
pub struct Findings {
    inner: Arc<Inner>,
}

impl Findings {
    /// The service; `investigate` names the checks whose new findings open an
    /// investigation once [`Findings::set_investigator`] gave it one.
    pub fn new(
        store: Store,
        agents: Agents,
        notifier: Notifier,
        metrics: Arc<Metrics>,
        investigate: Vec<String>,
    ) -> Findings {
        Findings {
            inner: Arc::new(Inner {
                store,
                agents,
                notifier,
                metrics,
                investigate,
                investigator: OnceLock::new(),
            }),
        }
    }

    /// Gives the service the investigator (made after the assistant).
    pub fn set_investigator(&self, investigator: investigate::Investigator) {
        let _ = self.inner.investigator.set(investigator);
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// The notifier.
    pub fn notifier(&self) -> &Notifier {
        &self.inner.notifier
    }

    /// Records an observation (redacted and cut to size). A new finding is announced and,
    /// when its check is investigated, investigated.
    pub async fn observe(&self, mut seen: Observation) -> Result<Recorded> {
        seen.summary = bounded(&seen.summary, MAX_SUMMARY_CHARS);
        seen.evidence = bounded(&seen.evidence, MAX_EVIDENCE_CHARS);
        let recorded = self.inner.store.record_finding(&seen, unix_now()).await?;
        let check = &recorded.row().check;
        match &recorded {
            Recorded::Repeated(_) => self.inner.metrics.finding(check, "repeated"),
            Recorded::New(row) => {
                self.inner.metrics.finding(check, "new");
                tracing::info!(finding = %row.id, check = %row.check, resource = ?row.resource_id, severity = %row.severity, "new finding");
                self.announce(NotifyEvent::FindingNew, row).await;
                if self.investigates(&row.check)
                    && let Some(investigator) = self.inner.investigator.get()
                {
                    investigator.open(row.clone()).await;
                }
            }
        }
        Ok(recorded)
    }

    fn investigates(&self, check: &str) -> bool {
        let family = if check.starts_with("alertmanager:") {
            "alertmanager"
        } else {
            check
        };
        self.inner
            .investigate
            .iter()
            .any(|c| c == family || c == check)
    }

    /// Resolves the unresolved finding of `check` and `subject`, if any, and announces it.
    pub async fn resolve(&self, check: &str, subject: &str) -> Result<Option<FindingRow>> {
        let resolved = self
            .inner
            .store
            .resolve_finding(check, subject, unix_now())
            .await?;
        if let Some(row) = &resolved {
            self.inner.metrics.finding(check, "resolved");
            tracing::info!(finding = %row.id, check, "finding resolved");
            self.announce(NotifyEvent::FindingResolved, row).await;
        }
        Ok(resolved)
    }

    /// After `check` ran on `scope`: resolves its unresolved findings from there whose
    /// subject is not in `failing`.
    pub async fn settle(&self, check: &str, scope: &str, failing: &[String]) -> Result<()> {
        for row in self.inner.store.live_findings(check, scope).await? {
            if !failing.contains(&row.subject) {
                self.resolve(check, &row.subject).await?;
            }
        }
        Ok(())
    }

    /// Applies one Alertmanager webhook notification (version 4).
    pub async fn alertmanager(&self, body: &[u8]) -> Result<AlertReport> {
        let notification = alertmanager::Notification::parse(body)?;
        let mut report = AlertReport::default();
        for change in notification.changes() {
            match change {
                alertmanager::AlertChange::Resolved { check, subject } => {
                    if self.resolve(&check, &subject).await?.is_some() {
                        report.resolved += 1;
                    }
                }
                alertmanager::AlertChange::Firing(alert) => {
                    let resource = self.resource_named(&alert.resource_hints);
                    if resource.is_none() {
                        report.unmatched += 1;
                    }
                    self.observe(Observation {
                        check: alert.check,
                        subject: alert.subject,
                        scope: "alertmanager".into(),
                        resource_id: resource.as_ref().map(|r| r.id.to_string()),
                        resource_name: resource.as_ref().map(|r| r.name.clone()),
                        severity: alert.severity.as_str().into(),
                        summary: alert.summary,
                        evidence: alert.evidence,
                    })
                    .await?;
                    report.firing += 1;
                }
            }
        }
        Ok(report)
    }

    /// The first of `hints` that names exactly one resource by its name, an alias, its id
    /// or one of its addresses (no prefixes: an alert's label is taken as written).
    pub fn resource_named(&self, hints: &[String]) -> Option<Resource> {
        let inventory = self.inner.agents.inventory();
        hints.iter().find_map(|hint| {
            let lower = hint.to_lowercase();
            let found: Vec<Resource> = inventory
                .search(hint, None, 50)
                .into_iter()
                .filter(|r| {
                    r.id.to_string() == *hint
                        || crate::inventory::names::lower_names(r).any(|n| n == lower)
                        || r.facts
                            .ips
                            .iter()
                            .any(|ip| ip.split('/').next() == Some(hint))
                })
                .collect();
            match <[Resource; 1]>::try_from(found) {
                Ok([one]) => Some(one),
                Err(_) => None,
            }
        })
    }

    /// Findings with `status` (`open`, `acknowledged`, `resolved`; all when `None`).
    pub async fn list(&self, status: Option<&str>) -> Result<Vec<FindingRow>> {
        if let Some(status) = status
            && !matches!(status, "open" | "acknowledged" | "resolved")
        {
            return Err(Error::InvalidInput(format!(
                "unknown status {status:?} (open, acknowledged or resolved)"
            )));
        }
        self.inner.store.list_findings(status, MAX_LIST).await
    }

    /// One finding.
    pub async fn get(&self, id: &str) -> Result<FindingRow> {
        self.inner
            .store
            .get_finding(id)
            .await?
            .ok_or_else(|| Error::NotFound(format!("no finding {id:?}")))
    }

    /// Acknowledges a finding that is not resolved.
    pub async fn acknowledge(&self, id: &str, by: &str) -> Result<FindingRow> {
        match self.inner.store.acknowledge_finding(id, by).await? {
            Some(row) => {
                tracing::info!(finding = %id, by, "finding acknowledged");
                Ok(row)
            }
            None => Err(self.not_live(id).await),
        }
    }

    /// Snoozes a finding that is not resolved until `until` (unix seconds, in the future).
    pub async fn snooze(&self, id: &str, until: i64) -> Result<FindingRow> {
        if until <= unix_now() {
            return Err(Error::InvalidInput(format!(
                "until {} is not in the future",
                rfc3339(until)
            )));
        }
        match self.inner.store.snooze_finding(id, until).await? {
            Some(row) => Ok(row),
            None => Err(self.not_live(id).await),
        }
    }

    async fn not_live(&self, id: &str) -> Error {
        match self.inner.store.get_finding(id).await {
            Ok(Some(_)) => Error::coded(
                crate::error::ApiCode::Conflict,
                format!("finding {id:?} is resolved"),
            ),
            Ok(None) => Error::NotFound(format!("no finding {id:?}")),
            Err(error) => error,
        }
    }

    /// Open findings that are not snoozed.
    pub async fn open_count(&self) -> Result<i64> {
        self.inner.store.count_open_findings(unix_now()).await
    }

    /// Tells the channels about a finding (not while it is snoozed).
    pub async fn announce(&self, event: NotifyEvent, row: &FindingRow) {
        if row.snoozed_until.is_some_and(|until| until > unix_now()) {
            return;
        }
        let place = row
            .resource_name
            .as_deref()
            .or(row.resource_id.as_deref())
            .map(|r| format!(" on {r}"))
            .unwrap_or_default();
        let text = match event {
            NotifyEvent::FindingResolved => {
                format!("Resolved: {}{place} ({})", row.summary, row.check)
            }
            NotifyEvent::InvestigationDone => format!(
                "Investigated: {}{place}\n\n{}",
                row.summary,
                row.investigation_answer.as_deref().unwrap_or("")
            ),
            _ => format!(
                "{}: {}{place} ({})\n\n{}",
                row.severity, row.summary, row.check, row.evidence
            ),
        };
        let finding = serde_json::to_value(FindingView::from(row)).ok();
        self.inner
            .notifier
            .publish(Message {
                event,
                finding,
                approval: None,
                text,
            })
            .await;
    }
}

/// `text` redacted and cut to `max` characters.
fn bounded(text: &str, max: usize) -> String {
    let text = vigil_shared::redact::redact(text).text;
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}
