//! What replicas tell each other through the database about chat: where an approval was
//! requested (its turn may be waiting there, and it runs there), which replica runs each
//! session's turn (one per session across replicas; a cancel asked of another replica is
//! left here for the one running it), and each session's gate state between turns.

use sqlx::Row;

use super::Store;
use super::replicas::now_ms;
use crate::Result;

impl Store {
    /// Records that approval `id` was requested on `replica`.
    pub async fn set_approval_waiter(&self, id: &str, replica: &str) -> Result<()> {
        sqlx::query("UPDATE approvals SET waiter_replica = $2 WHERE id = $1")
            .bind(id)
            .bind(replica)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// The replica approval `id` was requested on, when that replica is live.
    pub async fn live_approval_waiter(&self, id: &str) -> Result<Option<String>> {
        let now = now_ms(self.backend());
        let sql = format!(
            "SELECT a.waiter_replica FROM approvals a JOIN controller_replicas r
               ON r.id = a.waiter_replica
             WHERE a.id = $1 AND r.lease_expires_at > {now}"
        );
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        row.map(|r| r.try_get::<String, _>("waiter_replica"))
            .transpose()
            .map_err(Into::into)
    }

    /// Approvals approved since `decided_since` (Unix seconds) and not yet run that
    /// `replica` should run: those requested there, and those whose requesting replica is
    /// gone (any live replica may take those; the run's claim lets one win).
    pub async fn approved_unrun_for(
        &self,
        replica: &str,
        decided_since: i64,
    ) -> Result<Vec<String>> {
        let now = now_ms(self.backend());
        let sql = format!(
            "SELECT id FROM approvals WHERE status = 'approved' AND run_state = 'none'
               AND decided_at >= $2
               AND (waiter_replica = $1 OR waiter_replica IS NULL OR waiter_replica NOT IN
                    (SELECT id FROM controller_replicas WHERE lease_expires_at > {now}))
             ORDER BY created_at LIMIT 100"
        );
        let ids: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .bind(replica)
            .bind(decided_since)
            .fetch_all(self.pool())
            .await?;
        Ok(ids)
    }

    /// Stores `session`'s gate state (JSON) as its last turn left it.
    pub async fn save_session_state(&self, session: &str, state: &str, now: i64) -> Result<()> {
        sqlx::query(
            "INSERT INTO chat_session_state (session_id, state, saved_at) VALUES ($1, $2, $3)
             ON CONFLICT (session_id) DO UPDATE SET state = excluded.state,
                 saved_at = excluded.saved_at",
        )
        .bind(session)
        .bind(state)
        .bind(now)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// `session`'s stored gate state (JSON), if a turn stored one.
    pub async fn load_session_state(&self, session: &str) -> Result<Option<String>> {
        Ok(
            sqlx::query_scalar("SELECT state FROM chat_session_state WHERE session_id = $1")
                .bind(session)
                .fetch_optional(self.pool())
                .await?,
        )
    }

    /// Claims `session`'s turn for `replica`: false while a live replica (this one
    /// included) runs one.
    pub async fn claim_turn(&self, session: &str, replica: &str, now: i64) -> Result<bool> {
        let live = format!(
            "SELECT id FROM controller_replicas WHERE lease_expires_at > {}",
            now_ms(self.backend())
        );
        let sql = format!(
            "INSERT INTO chat_turns (session_id, replica_id, started_at, cancel_requested)
             VALUES ($1, $2, $3, FALSE)
             ON CONFLICT (session_id) DO UPDATE SET replica_id = excluded.replica_id,
                 started_at = excluded.started_at, cancel_requested = FALSE
             WHERE chat_turns.replica_id NOT IN ({live})"
        );
        let done = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(session)
            .bind(replica)
            .bind(now)
            .execute(self.pool())
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Ends `session`'s turn on `replica`.
    pub async fn end_turn(&self, session: &str, replica: &str) -> Result<()> {
        sqlx::query("DELETE FROM chat_turns WHERE session_id = $1 AND replica_id = $2")
            .bind(session)
            .bind(replica)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Asks the replica running `session`'s turn to cancel it; true when a turn runs.
    pub async fn request_turn_cancel(&self, session: &str) -> Result<bool> {
        let done =
            sqlx::query("UPDATE chat_turns SET cancel_requested = TRUE WHERE session_id = $1")
                .bind(session)
                .execute(self.pool())
                .await?;
        Ok(done.rows_affected() > 0)
    }

    /// The sessions whose turn on `replica` another replica was asked to cancel.
    pub async fn turns_to_cancel(&self, replica: &str) -> Result<Vec<String>> {
        let ids: Vec<String> = sqlx::query_scalar(
            "SELECT session_id FROM chat_turns WHERE replica_id = $1 AND cancel_requested",
        )
        .bind(replica)
        .fetch_all(self.pool())
        .await?;
        Ok(ids)
    }
}

#[cfg(test)]
mod tests {
    use crate::store::replicas::ReplicaRecord;
    use crate::store::test_support::all_stores;

    fn record(id: &str) -> ReplicaRecord {
        ReplicaRecord {
            id: id.into(),
            cluster_address: String::new(),
            gateway_address: String::new(),
            version: String::new(),
        }
    }

    #[tokio::test]
    async fn one_turn_per_session_across_replicas_and_cancels_reach_the_runner() {
        for (store, cleanup) in all_stores().await {
            store
                .renew_replica(&record("a"), 0, "serving", 60_000)
                .await
                .unwrap();
            store
                .renew_replica(&record("b"), 0, "serving", 60_000)
                .await
                .unwrap();
            assert!(store.claim_turn("s", "a", 1).await.unwrap());
            assert!(!store.claim_turn("s", "b", 2).await.unwrap(), "a runs one");
            assert!(
                !store.claim_turn("s", "a", 2).await.unwrap(),
                "one at a time"
            );
            assert!(store.turns_to_cancel("a").await.unwrap().is_empty());
            assert!(store.request_turn_cancel("s").await.unwrap());
            assert_eq!(
                store.turns_to_cancel("a").await.unwrap(),
                vec!["s".to_owned()]
            );
            store.end_turn("s", "b").await.unwrap();
            assert!(
                !store.claim_turn("s", "b", 3).await.unwrap(),
                "not b's to end"
            );
            store.end_turn("s", "a").await.unwrap();
            assert!(
                !store.request_turn_cancel("s").await.unwrap(),
                "no turn runs"
            );
            assert!(store.claim_turn("s", "b", 4).await.unwrap());
            // b's lease lapses: its turn is over for everyone else.
            store
                .renew_replica(&record("b"), 0, "serving", -1)
                .await
                .unwrap();
            assert!(store.claim_turn("s", "a", 5).await.unwrap());
            assert_eq!(store.load_session_state("s").await.unwrap(), None);
            store
                .save_session_state("s", "{\"turn\":1}", 6)
                .await
                .unwrap();
            store
                .save_session_state("s", "{\"turn\":2}", 7)
                .await
                .unwrap();
            assert_eq!(
                store.load_session_state("s").await.unwrap().as_deref(),
                Some("{\"turn\":2}")
            );
            cleanup.finish().await.unwrap();
        }
    }
}
