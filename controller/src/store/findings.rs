//! Findings: what patrol checks and monitoring alerts found ([`crate::findings`] decides,
//! this stores). A finding is keyed by its check and subject; while it is not resolved a
//! repeat updates the one row (`last_seen`, `count`), which a partial unique index keeps
//! true across replicas. Acknowledging, snoozing and resolving are conditional updates.

use serde::Serialize;

use super::Store;
use crate::error::ApiCode;
use crate::{Error, Result};

/// One stored finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct FindingRow {
    pub id: String,
    #[sqlx(rename = "check_name")]
    #[serde(rename = "check")]
    pub check: String,
    #[serde(skip)]
    pub subject: String,
    #[serde(skip)]
    pub scope: String,
    pub resource_id: Option<String>,
    pub resource_name: Option<String>,
    pub severity: String,
    pub status: String,
    pub summary: String,
    pub evidence: String,
    pub first_seen: i64,
    pub last_seen: i64,
    pub count: i64,
    pub resolved_at: Option<i64>,
    pub acknowledged_by: Option<String>,
    pub snoozed_until: Option<i64>,
    pub investigation_session_id: Option<String>,
    pub investigation_status: Option<String>,
    pub investigation_answer: Option<String>,
    #[serde(skip)]
    pub investigation_started_at: Option<i64>,
}

const COLUMNS: &str = "id, check_name, subject, scope, resource_id, resource_name, severity, status, \
    summary, evidence, first_seen, last_seen, count, resolved_at, acknowledged_by, snoozed_until, \
    investigation_session_id, investigation_status, investigation_answer, investigation_started_at";

/// A check's observation of something wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    /// The check (`disk`, `alertmanager:HighLoad`, …).
    pub check: String,
    /// What in the resource it is about (with the resource: the finding's key).
    pub subject: String,
    /// What the check ran on (the resource it resolves findings of when it passes).
    pub scope: String,
    pub resource_id: Option<String>,
    pub resource_name: Option<String>,
    /// `info`, `warning` or `critical`.
    pub severity: String,
    pub summary: String,
    pub evidence: String,
}

/// What recording an observation did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorded {
    /// A new finding.
    New(FindingRow),
    /// A repeat of an unresolved one (updated in place).
    Repeated(FindingRow),
}

impl Recorded {
    /// The finding as it is now.
    pub fn row(&self) -> &FindingRow {
        match self {
            Recorded::New(row) | Recorded::Repeated(row) => row,
        }
    }
}

/// Where an investigation stands, as stored on its finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvestigationStatus {
    Running,
    Done,
    Failed,
    /// Waiting for the unattended budget.
    Waiting,
}

impl InvestigationStatus {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            InvestigationStatus::Running => "running",
            InvestigationStatus::Done => "done",
            InvestigationStatus::Failed => "failed",
            InvestigationStatus::Waiting => "waiting",
        }
    }
}

impl Store {
    /// Records `seen` at `now`: a repeat of the unresolved finding of its check and subject
    /// (count + 1, severity, summary and evidence replaced), or a new open finding.
    pub async fn record_finding(&self, seen: &Observation, now: i64) -> Result<Recorded> {
        // Two tries: an insert that loses a race with another replica's insert finds the
        // winner's row with the update.
        for _ in 0..2 {
            if let Some(row) = self.repeat_finding(seen, now).await? {
                return Ok(Recorded::Repeated(row));
            }
            let inserted: Option<FindingRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                "INSERT INTO findings (id, check_name, subject, scope, resource_id, resource_name, \
                 severity, status, summary, evidence, first_seen, last_seen, count)
                 VALUES ($1, $2, $3, $10, $4, $5, $6, 'open', $7, $8, $9, $9, 1)
                 ON CONFLICT DO NOTHING RETURNING {COLUMNS}"
            )))
            .bind(uuid::Uuid::new_v4().to_string())
            .bind(&seen.check)
            .bind(&seen.subject)
            .bind(&seen.resource_id)
            .bind(&seen.resource_name)
            .bind(&seen.severity)
            .bind(&seen.summary)
            .bind(&seen.evidence)
            .bind(now)
            .bind(&seen.scope)
            .fetch_optional(self.pool())
            .await?;
            if let Some(row) = inserted {
                return Ok(Recorded::New(row));
            }
        }
        Err(Error::coded(
            ApiCode::Conflict,
            format!(
                "finding {}/{} changed while it was recorded",
                seen.check, seen.subject
            ),
        ))
    }

    async fn repeat_finding(&self, seen: &Observation, now: i64) -> Result<Option<FindingRow>> {
        Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "UPDATE findings SET last_seen = $1, count = count + 1, severity = $2, summary = $3,
                 evidence = $4, resource_id = COALESCE($5, resource_id),
                 resource_name = COALESCE($6, resource_name)
             WHERE check_name = $7 AND subject = $8 AND status <> 'resolved'
             RETURNING {COLUMNS}"
        )))
        .bind(now)
        .bind(&seen.severity)
        .bind(&seen.summary)
        .bind(&seen.evidence)
        .bind(&seen.resource_id)
        .bind(&seen.resource_name)
        .bind(&seen.check)
        .bind(&seen.subject)
        .fetch_optional(self.pool())
        .await?)
    }

    /// Resolves the unresolved finding of `check` and `subject`, if there is one.
    pub async fn resolve_finding(
        &self,
        check: &str,
        subject: &str,
        now: i64,
    ) -> Result<Option<FindingRow>> {
        Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "UPDATE findings SET status = 'resolved', resolved_at = $1
             WHERE check_name = $2 AND subject = $3 AND status <> 'resolved'
             RETURNING {COLUMNS}"
        )))
        .bind(now)
        .bind(check)
        .bind(subject)
        .fetch_optional(self.pool())
        .await?)
    }

    /// The unresolved findings of `check` that ran on `scope`.
    pub async fn live_findings(&self, check: &str, scope: &str) -> Result<Vec<FindingRow>> {
        Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM findings
             WHERE check_name = $1 AND scope = $2 AND status <> 'resolved'"
        )))
        .bind(check)
        .bind(scope)
        .fetch_all(self.pool())
        .await?)
    }

    /// Findings with `status` (all when `None`), the most recently seen first, at most
    /// `limit`.
    pub async fn list_findings(&self, status: Option<&str>, limit: i64) -> Result<Vec<FindingRow>> {
        let query = format!(
            "SELECT {COLUMNS} FROM findings WHERE ($1 = '' OR status = $1)
             ORDER BY last_seen DESC, id LIMIT $2"
        );
        Ok(sqlx::query_as(sqlx::AssertSqlSafe(query))
            .bind(status.unwrap_or(""))
            .bind(limit)
            .fetch_all(self.pool())
            .await?)
    }

    /// One finding.
    pub async fn get_finding(&self, id: &str) -> Result<Option<FindingRow>> {
        Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM findings WHERE id = $1"
        )))
        .bind(id)
        .fetch_optional(self.pool())
        .await?)
    }

    /// Open findings not snoozed at `now` (the web page's count).
    pub async fn count_open_findings(&self, now: i64) -> Result<i64> {
        Ok(sqlx::query_scalar(
            "SELECT COUNT(*) FROM findings
             WHERE status = 'open' AND (snoozed_until IS NULL OR snoozed_until <= $1)",
        )
        .bind(now)
        .fetch_one(self.pool())
        .await?)
    }

    /// Marks an open finding acknowledged by `by`. `None` when no unresolved finding has
    /// the id (an acknowledged one answers as it is).
    pub async fn acknowledge_finding(&self, id: &str, by: &str) -> Result<Option<FindingRow>> {
        let updated: Option<FindingRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "UPDATE findings SET status = 'acknowledged', acknowledged_by = $1
             WHERE id = $2 AND status = 'open' RETURNING {COLUMNS}"
        )))
        .bind(by)
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        match updated {
            Some(row) => Ok(Some(row)),
            None => Ok(self
                .get_finding(id)
                .await?
                .filter(|row| row.status == "acknowledged")),
        }
    }

    /// Snoozes an unresolved finding until `until` (unix seconds). `None` when no
    /// unresolved finding has the id.
    pub async fn snooze_finding(&self, id: &str, until: i64) -> Result<Option<FindingRow>> {
        Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "UPDATE findings SET snoozed_until = $1
             WHERE id = $2 AND status <> 'resolved' RETURNING {COLUMNS}"
        )))
        .bind(until)
        .bind(id)
        .fetch_optional(self.pool())
        .await?)
    }

    /// Claims the finding's investigation: sets it `status` (running or waiting) with its
    /// session, only when it has none yet or is waiting. False when another took it.
    pub async fn claim_investigation(
        &self,
        id: &str,
        session_id: Option<&str>,
        status: InvestigationStatus,
        now: i64,
    ) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE findings SET investigation_session_id = $1, investigation_status = $2,
                 investigation_started_at = $3
             WHERE id = $4 AND (investigation_status IS NULL OR investigation_status = 'waiting')",
        )
        .bind(session_id)
        .bind(status.as_str())
        .bind(now)
        .bind(id)
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Records the session an investigation runs in.
    pub async fn set_investigation_session(&self, id: &str, session_id: &str) -> Result<()> {
        sqlx::query("UPDATE findings SET investigation_session_id = $1 WHERE id = $2")
            .bind(session_id)
            .bind(id)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Ends the finding's investigation with its answer.
    pub async fn finish_investigation(
        &self,
        id: &str,
        status: InvestigationStatus,
        answer: &str,
    ) -> Result<Option<FindingRow>> {
        Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "UPDATE findings SET investigation_status = $1, investigation_answer = $2
             WHERE id = $3 RETURNING {COLUMNS}"
        )))
        .bind(status.as_str())
        .bind(answer)
        .bind(id)
        .fetch_optional(self.pool())
        .await?)
    }

    /// Unresolved findings whose investigation waits for the budget, oldest first.
    pub async fn waiting_investigations(&self, limit: i64) -> Result<Vec<FindingRow>> {
        Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM findings
             WHERE investigation_status = 'waiting' AND status <> 'resolved'
             ORDER BY first_seen, id LIMIT $1"
        )))
        .bind(limit)
        .fetch_all(self.pool())
        .await?)
    }

    /// Investigations started since `since`, and the tokens their sessions used.
    pub async fn unattended_use_since(&self, since: i64) -> Result<(i64, i64)> {
        let row: (i64, Option<i64>) = sqlx::query_as(
            "SELECT COUNT(*), CAST(SUM(s.input_tokens + s.output_tokens) AS BIGINT) FROM findings f
             LEFT JOIN chat_sessions s ON s.id = f.investigation_session_id
             WHERE f.investigation_started_at >= $1 AND f.investigation_status <> 'waiting'",
        )
        .bind(since)
        .fetch_one(self.pool())
        .await?;
        Ok((row.0, row.1.unwrap_or(0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::all_stores;

    fn disk(subject: &str, severity: &str) -> Observation {
        Observation {
            check: "disk".into(),
            subject: subject.into(),
            scope: "host:a-web".into(),
            resource_id: Some("host:a-web".into()),
            resource_name: Some("web".into()),
            severity: severity.into(),
            summary: format!("{subject} is full"),
            evidence: "$ df -P\n/dev/sda1 ... 97% /".into(),
        }
    }

    #[tokio::test]
    async fn a_finding_repeats_resolves_and_comes_back_as_a_new_one() {
        for (store, cleanup) in all_stores().await {
            let first = store
                .record_finding(&disk("host:a-web /", "warning"), 10)
                .await
                .unwrap();
            let Recorded::New(first) = first else {
                panic!("{first:?}")
            };
            let again = store
                .record_finding(&disk("host:a-web /", "critical"), 20)
                .await
                .unwrap();
            let Recorded::Repeated(again) = again else {
                panic!("{again:?}")
            };
            assert_eq!(again.id, first.id);
            assert_eq!(
                (again.count, again.first_seen, again.last_seen),
                (2, 10, 20)
            );
            assert_eq!(again.severity, "critical");
            store
                .record_finding(&disk("host:a-web /srv", "warning"), 20)
                .await
                .unwrap();
            assert_eq!(
                store
                    .live_findings("disk", "host:a-web")
                    .await
                    .unwrap()
                    .len(),
                2
            );
            assert_eq!(
                store
                    .live_findings("disk", "host:b-db")
                    .await
                    .unwrap()
                    .len(),
                0
            );
            assert_eq!(store.count_open_findings(20).await.unwrap(), 2);

            let resolved = store
                .resolve_finding("disk", "host:a-web /", 30)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(
                (resolved.status.as_str(), resolved.resolved_at),
                ("resolved", Some(30))
            );
            assert!(
                store
                    .resolve_finding("disk", "host:a-web /", 31)
                    .await
                    .unwrap()
                    .is_none()
            );
            let back = store
                .record_finding(&disk("host:a-web /", "warning"), 40)
                .await
                .unwrap();
            assert!(matches!(&back, Recorded::New(row) if row.id != first.id && row.count == 1));
            assert_eq!(
                store
                    .list_findings(Some("resolved"), 10)
                    .await
                    .unwrap()
                    .len(),
                1
            );
            assert_eq!(
                store.list_findings(Some("open"), 10).await.unwrap().len(),
                2
            );
            assert_eq!(store.list_findings(None, 10).await.unwrap().len(), 3);
            cleanup.finish().await.unwrap();
        }
    }

    #[tokio::test]
    async fn acknowledging_and_snoozing_keep_the_finding_and_count() {
        for (store, cleanup) in all_stores().await {
            let row = store
                .record_finding(&disk("host:a-web /", "warning"), 10)
                .await
                .unwrap()
                .row()
                .clone();
            let snoozed = store.snooze_finding(&row.id, 100).await.unwrap().unwrap();
            assert_eq!(snoozed.snoozed_until, Some(100));
            assert_eq!(store.count_open_findings(50).await.unwrap(), 0);
            assert_eq!(store.count_open_findings(100).await.unwrap(), 1);
            let acked = store
                .acknowledge_finding(&row.id, "alice")
                .await
                .unwrap()
                .unwrap();
            assert_eq!(
                (acked.status.as_str(), acked.acknowledged_by.as_deref()),
                ("acknowledged", Some("alice"))
            );
            // Acknowledging again answers the same; a repeat keeps it acknowledged.
            assert!(
                store
                    .acknowledge_finding(&row.id, "bob")
                    .await
                    .unwrap()
                    .is_some()
            );
            let again = store
                .record_finding(&disk("host:a-web /", "warning"), 20)
                .await
                .unwrap();
            assert!(
                matches!(&again, Recorded::Repeated(r) if r.status == "acknowledged" && r.count == 2)
            );
            store
                .resolve_finding("disk", "host:a-web /", 30)
                .await
                .unwrap();
            assert!(
                store
                    .acknowledge_finding(&row.id, "bob")
                    .await
                    .unwrap()
                    .is_none()
            );
            assert!(store.snooze_finding(&row.id, 500).await.unwrap().is_none());
            assert!(
                store
                    .acknowledge_finding("nope", "bob")
                    .await
                    .unwrap()
                    .is_none()
            );
            cleanup.finish().await.unwrap();
        }
    }

    #[tokio::test]
    async fn an_investigation_is_claimed_once() {
        for (store, cleanup) in all_stores().await {
            let row = store
                .record_finding(&disk("host:a-web /", "warning"), 10)
                .await
                .unwrap()
                .row()
                .clone();
            assert!(
                store
                    .claim_investigation(&row.id, None, InvestigationStatus::Waiting, 10)
                    .await
                    .unwrap()
            );
            assert_eq!(store.waiting_investigations(10).await.unwrap().len(), 1);
            assert_eq!(store.unattended_use_since(0).await.unwrap(), (0, 0));
            assert!(
                store
                    .claim_investigation(&row.id, Some("s1"), InvestigationStatus::Running, 11)
                    .await
                    .unwrap()
            );
            assert!(
                !store
                    .claim_investigation(&row.id, Some("s2"), InvestigationStatus::Running, 12)
                    .await
                    .unwrap()
            );
            assert_eq!(store.unattended_use_since(0).await.unwrap(), (1, 0));
            let done = store
                .finish_investigation(&row.id, InvestigationStatus::Done, "the disk holds logs")
                .await
                .unwrap()
                .unwrap();
            assert_eq!(done.investigation_session_id.as_deref(), Some("s1"));
            assert_eq!(
                done.investigation_answer.as_deref(),
                Some("the disk holds logs")
            );
            cleanup.finish().await.unwrap();
        }
    }
}
