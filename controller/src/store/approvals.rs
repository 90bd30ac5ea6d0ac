//! Approvals of writes: created by the assistant (later) or tests, decided once by an
//! operator. Deciding is one conditional `UPDATE … WHERE status = 'pending' AND
//! expires_at > now`, so of any number of racing decisions exactly one wins.

use serde::Serialize;
use sqlx::Row;

use super::Store;
use crate::error::ApiCode;
use crate::{Error, Result};

/// Where an approval stands. `Expired` is a pending approval past its expiry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalStatus {
    /// Waiting for a decision.
    Pending,
    /// Approved (used).
    Approved,
    /// Denied.
    Denied,
    /// Not decided in time.
    Expired,
    /// Withdrawn: the turn that raised it was cancelled.
    Withdrawn,
}

impl ApprovalStatus {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalStatus::Pending => "pending",
            ApprovalStatus::Approved => "approved",
            ApprovalStatus::Denied => "denied",
            ApprovalStatus::Expired => "expired",
            ApprovalStatus::Withdrawn => "withdrawn",
        }
    }

    /// Parses a `?status=` value.
    pub fn parse(text: &str) -> Result<ApprovalStatus> {
        match text.trim() {
            "pending" => Ok(ApprovalStatus::Pending),
            "approved" => Ok(ApprovalStatus::Approved),
            "denied" => Ok(ApprovalStatus::Denied),
            "expired" => Ok(ApprovalStatus::Expired),
            "withdrawn" => Ok(ApprovalStatus::Withdrawn),
            other => Err(Error::InvalidInput(format!(
                "unknown status {other:?} (pending, approved, denied, expired or withdrawn)"
            ))),
        }
    }
}

/// What creating an approval needs.
#[derive(Debug, Clone, Default)]
pub struct NewApproval {
    /// The requesting assistant session.
    pub session_id: Option<String>,
    /// The command to approve.
    pub command: String,
    /// Its target (`host`, `lxc:ID`, …).
    pub target: Option<String>,
    /// The agent id.
    pub agent: Option<String>,
    /// The classifier's risk.
    pub risk: String,
    /// Why it needs approval.
    pub reasons: Vec<String>,
    /// An optional diff of what would change.
    pub diff: Option<String>,
    /// Who asked.
    pub created_by: String,
    /// Seconds until it expires.
    pub ttl_s: i64,
    /// The model's tool call that asked for it.
    pub tool_call_id: Option<String>,
    /// The resource the write is for.
    pub resource_id: Option<String>,
    /// The command's timeout in seconds (0: the agent's default).
    pub timeout_s: u32,
}

/// An approval as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApprovalRow {
    pub id: String,
    pub session_id: Option<String>,
    pub command: String,
    pub target: Option<String>,
    pub agent: Option<String>,
    pub risk: String,
    pub reasons: Vec<String>,
    pub diff: Option<String>,
    pub created_by: String,
    pub decided_by: Option<String>,
    pub decision: Option<String>,
    pub reason: Option<String>,
    pub created_at: i64,
    pub decided_at: Option<i64>,
    pub expires_at: i64,
    /// The status at the time of reading (pending past expiry reads as expired).
    pub status: ApprovalStatus,
    pub tool_call_id: Option<String>,
    pub resource_id: Option<String>,
    pub timeout_s: i64,
    /// `none`, `running`, `done` or `unknown` (see [`RunState`]).
    pub run_state: String,
    pub exit_code: Option<i64>,
    /// How the run ended, in a sentence.
    pub outcome: Option<String>,
}

/// Where the execution of an approved write stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    /// Not run.
    None,
    /// Claimed by one runner.
    Running,
    /// Ran to an end (successful or not).
    Done,
    /// The controller stopped while it ran: the outcome is unknown, and it never runs again.
    Unknown,
}

impl RunState {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            RunState::None => "none",
            RunState::Running => "running",
            RunState::Done => "done",
            RunState::Unknown => "unknown",
        }
    }
}

/// A decision on an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Approve it.
    Approve,
    /// Deny it.
    Deny,
}

const COLUMNS: &str = "id, session_id, command, target, agent, risk, reasons, diff, created_by,
    decided_by, decision, reason, created_at, decided_at, expires_at, status, tool_call_id,
    resource_id, timeout_s, run_state, exit_code, outcome";

fn row_to_approval(row: &sqlx::any::AnyRow, now: i64) -> Result<ApprovalRow> {
    let status = ApprovalStatus::parse(&row.try_get::<String, _>("status")?)?;
    let expires_at: i64 = row.try_get("expires_at")?;
    let status = if status == ApprovalStatus::Pending && expires_at <= now {
        ApprovalStatus::Expired
    } else {
        status
    };
    Ok(ApprovalRow {
        id: row.try_get("id")?,
        session_id: row.try_get("session_id")?,
        command: row.try_get("command")?,
        target: row.try_get("target")?,
        agent: row.try_get("agent")?,
        risk: row.try_get("risk")?,
        reasons: serde_json::from_str(&row.try_get::<String, _>("reasons")?).unwrap_or_default(),
        diff: row.try_get("diff")?,
        created_by: row.try_get("created_by")?,
        decided_by: row.try_get("decided_by")?,
        decision: row.try_get("decision")?,
        reason: row.try_get("reason")?,
        created_at: row.try_get("created_at")?,
        decided_at: row.try_get("decided_at")?,
        expires_at,
        status,
        tool_call_id: row.try_get("tool_call_id")?,
        resource_id: row.try_get("resource_id")?,
        timeout_s: row.try_get("timeout_s")?,
        run_state: row.try_get("run_state")?,
        exit_code: row.try_get("exit_code")?,
        outcome: row.try_get("outcome")?,
    })
}

impl Store {
    /// Stores a pending approval.
    pub async fn create_approval(&self, new: &NewApproval, now: i64) -> Result<ApprovalRow> {
        let id = uuid::Uuid::new_v4().to_string();
        sqlx::query(
            "INSERT INTO approvals (id, session_id, command, target, agent, risk, reasons, diff,
                 created_by, created_at, expires_at, status, tool_call_id, resource_id, timeout_s)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'pending', $12, $13, $14)",
        )
        .bind(&id)
        .bind(new.session_id.clone())
        .bind(&new.command)
        .bind(new.target.clone())
        .bind(new.agent.clone())
        .bind(&new.risk)
        .bind(serde_json::to_string(&new.reasons)?)
        .bind(new.diff.clone())
        .bind(&new.created_by)
        .bind(now)
        .bind(now.saturating_add(new.ttl_s))
        .bind(new.tool_call_id.clone())
        .bind(new.resource_id.clone())
        .bind(i64::from(new.timeout_s))
        .execute(self.pool())
        .await?;
        self.get_approval(&id, now)
            .await?
            .ok_or_else(|| Error::NotFound(format!("approval {id} vanished")))
    }

    /// One approval.
    pub async fn get_approval(&self, id: &str, now: i64) -> Result<Option<ApprovalRow>> {
        let sql = format!("SELECT {COLUMNS} FROM approvals WHERE id = $1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        row.map(|r| row_to_approval(&r, now)).transpose()
    }

    /// Approvals with `status` (all when `None`), oldest first, at most 500.
    pub async fn list_approvals(
        &self,
        status: Option<ApprovalStatus>,
        now: i64,
    ) -> Result<Vec<ApprovalRow>> {
        let filter = match status {
            None => "1 = 1 OR $1 = $1",
            Some(ApprovalStatus::Pending) => "status = 'pending' AND expires_at > $1",
            Some(ApprovalStatus::Expired) => "status = 'pending' AND expires_at <= $1",
            Some(ApprovalStatus::Approved) => "status = 'approved' AND $1 = $1",
            Some(ApprovalStatus::Denied) => "status = 'denied' AND $1 = $1",
            Some(ApprovalStatus::Withdrawn) => "status = 'withdrawn' AND $1 = $1",
        };
        let sql = format!(
            "SELECT {COLUMNS} FROM approvals WHERE {filter} ORDER BY created_at, id LIMIT 500"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(now)
            .fetch_all(self.pool())
            .await?;
        rows.iter().map(|r| row_to_approval(r, now)).collect()
    }

    /// Decides a pending, unexpired approval, atomically: the one caller that wins gets
    /// the row; the others get 409 `CONFLICT`, 410 `APPROVAL_EXPIRED` or 404.
    pub async fn decide_approval(
        &self,
        id: &str,
        decision: Decision,
        by: &str,
        reason: Option<&str>,
        now: i64,
    ) -> Result<ApprovalRow> {
        let status = match decision {
            Decision::Approve => ApprovalStatus::Approved,
            Decision::Deny => ApprovalStatus::Denied,
        };
        let sql = format!(
            "UPDATE approvals SET status = $1, decision = $1, decided_by = $2, reason = $3,
                 decided_at = $4
             WHERE id = $5 AND status = 'pending' AND expires_at > $4
             RETURNING {COLUMNS}"
        );
        let won = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(status.as_str())
            .bind(by)
            .bind(reason.map(str::to_owned))
            .bind(now)
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        if let Some(row) = won {
            return row_to_approval(&row, now);
        }
        Err(match self.get_approval(id, now).await? {
            None => Error::NotFound(format!("no approval with id {id:?}")),
            Some(row) if row.status == ApprovalStatus::Expired => Error::coded(
                ApiCode::ApprovalExpired,
                format!("approval {id} expired before it was decided"),
            ),
            Some(row) => Error::coded(
                ApiCode::Conflict,
                format!("approval {id} is already {}", row.status.as_str()),
            ),
        })
    }

    /// Claims the run of an approved approval for `replica`: true for exactly one caller,
    /// ever.
    pub async fn claim_run(&self, id: &str, replica: &str) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE approvals SET run_state = 'running', run_replica = $2
             WHERE id = $1 AND status = 'approved' AND run_state = 'none'",
        )
        .bind(id)
        .bind(replica)
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Records how a claimed run ended.
    pub async fn finish_run(
        &self,
        id: &str,
        state: RunState,
        exit_code: Option<i64>,
        outcome: &str,
    ) -> Result<()> {
        sqlx::query(
            "UPDATE approvals SET run_state = $1, exit_code = $2, outcome = $3
             WHERE id = $4 AND run_state = 'running'",
        )
        .bind(state.as_str())
        .bind(exit_code)
        .bind(outcome)
        .bind(id)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Withdraws the pending approvals of `session_id`; answers their ids.
    pub async fn withdraw_session_approvals(&self, session_id: &str) -> Result<Vec<String>> {
        let rows = sqlx::query(
            "UPDATE approvals SET status = 'withdrawn', decision = 'withdrawn'
             WHERE session_id = $1 AND status = 'pending' RETURNING id",
        )
        .bind(session_id)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| r.try_get::<String, _>("id").map_err(Error::from))
            .collect()
    }

    /// Runs still `running` on a replica that is no longer live (its lease lapsed, or it
    /// is gone, or the run predates replicas), oldest first.
    pub async fn runs_of_lost_replicas(&self) -> Result<Vec<ApprovalRow>> {
        let now = super::replicas::now_ms(self.backend());
        let sql = format!(
            "SELECT {COLUMNS} FROM approvals WHERE status = 'approved' AND run_state = 'running'
               AND (run_replica IS NULL OR run_replica NOT IN
                    (SELECT id FROM controller_replicas WHERE lease_expires_at > {now}))
             ORDER BY created_at, id LIMIT 500"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_all(self.pool())
            .await?;
        rows.iter().map(|r| row_to_approval(r, i64::MAX)).collect()
    }

    /// Approvals approved whose run is in `state`, oldest first.
    pub async fn approvals_in_run_state(&self, state: RunState) -> Result<Vec<ApprovalRow>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM approvals WHERE status = 'approved' AND run_state = $1
             ORDER BY created_at, id LIMIT 500"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(state.as_str())
            .fetch_all(self.pool())
            .await?;
        rows.iter().map(|r| row_to_approval(r, i64::MAX)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::all_stores;

    fn new(ttl_s: i64) -> NewApproval {
        NewApproval {
            command: "systemctl restart nginx".into(),
            risk: "write".into(),
            reasons: vec!["restarts a service".into()],
            created_by: "assistant".into(),
            ttl_s,
            ..NewApproval::default()
        }
    }

    #[tokio::test]
    async fn approvals_are_decided_once_and_expire() {
        for (store, cleanup) in all_stores().await {
            let a = store.create_approval(&new(60), 100).await.unwrap();
            assert_eq!(a.status, ApprovalStatus::Pending);
            assert_eq!(a.reasons, ["restarts a service"]);
            let pending = store
                .list_approvals(Some(ApprovalStatus::Pending), 101)
                .await
                .unwrap();
            assert_eq!(pending.len(), 1);
            let mut racers = Vec::new();
            for i in 0..20 {
                let (store, id) = (store.clone(), a.id.clone());
                racers.push(tokio::spawn(async move {
                    let by = format!("op{i}");
                    store
                        .decide_approval(&id, Decision::Approve, &by, None, 102)
                        .await
                }));
            }
            let mut wins = 0;
            for racer in racers {
                match racer.await.unwrap() {
                    Ok(row) => {
                        wins += 1;
                        assert_eq!(row.status, ApprovalStatus::Approved);
                    }
                    Err(e) => assert_eq!(e.api_code(), "CONFLICT", "{e:?}"),
                }
            }
            assert_eq!(wins, 1);

            let old = store.create_approval(&new(10), 100).await.unwrap();
            let err = store
                .decide_approval(&old.id, Decision::Deny, "op", Some("no"), 110)
                .await
                .unwrap_err();
            assert_eq!(err.api_code(), "APPROVAL_EXPIRED");
            let expired = store
                .list_approvals(Some(ApprovalStatus::Expired), 110)
                .await
                .unwrap();
            assert_eq!(expired.len(), 1);
            let err = store
                .decide_approval("nope", Decision::Deny, "op", None, 110)
                .await
                .unwrap_err();
            assert_eq!(err.api_code(), "NOT_FOUND");
            cleanup.finish().await.unwrap();
        }
    }

    #[tokio::test]
    async fn a_run_is_claimed_once_and_withdrawn_approvals_cannot_be_decided() {
        for (store, cleanup) in all_stores().await {
            let a = store.create_approval(&new(60), 100).await.unwrap();
            assert!(
                !store.claim_run(&a.id, "r").await.unwrap(),
                "pending: no run"
            );
            store
                .decide_approval(&a.id, Decision::Approve, "op", None, 101)
                .await
                .unwrap();
            let mut claims = Vec::new();
            for _ in 0..10 {
                let (store, id) = (store.clone(), a.id.clone());
                claims.push(tokio::spawn(async move { store.claim_run(&id, "r").await }));
            }
            let mut won = 0;
            for claim in claims {
                won += usize::from(claim.await.unwrap().unwrap());
            }
            assert_eq!(won, 1);
            let running = store
                .approvals_in_run_state(RunState::Running)
                .await
                .unwrap();
            assert_eq!(running.len(), 1);
            // Its replica "r" has no lease: the run is lost; once "r" holds one, it is not.
            assert_eq!(store.runs_of_lost_replicas().await.unwrap().len(), 1);
            let r = crate::store::replicas::ReplicaRecord {
                id: "r".into(),
                cluster_address: String::new(),
                gateway_address: String::new(),
                version: String::new(),
            };
            store.renew_replica(&r, 0, "serving", 60_000).await.unwrap();
            assert!(store.runs_of_lost_replicas().await.unwrap().is_empty());
            store
                .finish_run(&a.id, RunState::Done, Some(0), "exit 0")
                .await
                .unwrap();
            let row = store.get_approval(&a.id, 102).await.unwrap().unwrap();
            assert_eq!((row.run_state.as_str(), row.exit_code), ("done", Some(0)));

            let b = NewApproval {
                session_id: Some("s1".into()),
                ..new(60)
            };
            let b = store.create_approval(&b, 100).await.unwrap();
            assert_eq!(
                store.withdraw_session_approvals("s1").await.unwrap(),
                std::slice::from_ref(&b.id)
            );
            let err = store
                .decide_approval(&b.id, Decision::Approve, "op", None, 101)
                .await
                .unwrap_err();
            assert_eq!(err.api_code(), "CONFLICT");
            let row = store.get_approval(&b.id, 101).await.unwrap().unwrap();
            assert_eq!(row.status, ApprovalStatus::Withdrawn);
            cleanup.finish().await.unwrap();
        }
    }
}
