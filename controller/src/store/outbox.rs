//! Notifications in the store: the channels made through the API (`notify_channels`, each
//! its JSON) and the outbox of deliveries (`notify_outbox`). A delivery is claimed with one
//! conditional update before it is sent, so that of several replicas one sends it; a claim
//! that is not settled (its replica died mid-send) lapses and the row is sent again.

use serde::Serialize;

use super::Store;
use crate::Result;

/// One delivery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct OutboxRow {
    pub id: String,
    pub channel: String,
    pub event: String,
    /// The message (JSON).
    pub body: String,
    /// `pending`, `delivered` or `failed` (given up).
    pub status: String,
    pub attempts: i64,
    pub next_attempt_at: i64,
    pub last_error: Option<String>,
    pub created_at: i64,
    pub done_at: Option<i64>,
}

const COLUMNS: &str =
    "id, channel, event, body, status, attempts, next_attempt_at, last_error, created_at, done_at";

impl Store {
    /// The channels made through the API: (name, JSON), by name.
    pub async fn notify_channels(&self) -> Result<Vec<(String, String)>> {
        Ok(
            sqlx::query_as("SELECT name, body FROM notify_channels ORDER BY name")
                .fetch_all(self.pool())
                .await?,
        )
    }

    /// Stores a channel, replacing one of the same name; true when it is new.
    pub async fn save_notify_channel(&self, name: &str, body: &str, now: i64) -> Result<bool> {
        let replaced = sqlx::query("UPDATE notify_channels SET body = $1 WHERE name = $2")
            .bind(body)
            .bind(name)
            .execute(self.pool())
            .await?
            .rows_affected();
        if replaced > 0 {
            return Ok(false);
        }
        let inserted = sqlx::query(
            "INSERT INTO notify_channels (name, body, created_at) VALUES ($1, $2, $3)
             ON CONFLICT (name) DO UPDATE SET body = excluded.body",
        )
        .bind(name)
        .bind(body)
        .bind(now)
        .execute(self.pool())
        .await?;
        Ok(inserted.rows_affected() > 0)
    }

    /// Deletes a channel; false when there was none.
    pub async fn delete_notify_channel(&self, name: &str) -> Result<bool> {
        let done = sqlx::query("DELETE FROM notify_channels WHERE name = $1")
            .bind(name)
            .execute(self.pool())
            .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Adds a pending delivery, due now.
    pub async fn enqueue_delivery(
        &self,
        channel: &str,
        event: &str,
        body: &str,
        now: i64,
    ) -> Result<String> {
        let id = uuid::Uuid::new_v4().to_string();
        sqlx::query(
            "INSERT INTO notify_outbox (id, channel, event, body, status, attempts,
                 next_attempt_at, claimed_until, created_at)
             VALUES ($1, $2, $3, $4, 'pending', 0, $5, 0, $5)",
        )
        .bind(&id)
        .bind(channel)
        .bind(event)
        .bind(body)
        .bind(now)
        .execute(self.pool())
        .await?;
        Ok(id)
    }

    /// Claims up to `limit` pending deliveries due at `now` for `lease` seconds: each is
    /// returned to one caller only until its claim lapses.
    pub async fn claim_due_deliveries(
        &self,
        now: i64,
        lease: i64,
        limit: i64,
    ) -> Result<Vec<OutboxRow>> {
        let due: Vec<OutboxRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM notify_outbox
             WHERE status = 'pending' AND next_attempt_at <= $1 AND claimed_until <= $1
             ORDER BY next_attempt_at, created_at LIMIT $2"
        )))
        .bind(now)
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        let mut claimed = Vec::with_capacity(due.len());
        for row in due {
            let done = sqlx::query(
                "UPDATE notify_outbox SET claimed_until = $1
                 WHERE id = $2 AND status = 'pending' AND claimed_until <= $3",
            )
            .bind(now + lease)
            .bind(&row.id)
            .bind(now)
            .execute(self.pool())
            .await?;
            if done.rows_affected() == 1 {
                claimed.push(row);
            }
        }
        Ok(claimed)
    }

    /// Records a delivery that was sent.
    pub async fn delivery_sent(&self, id: &str, now: i64) -> Result<()> {
        sqlx::query(
            "UPDATE notify_outbox SET status = 'delivered', attempts = attempts + 1,
                 done_at = $1, claimed_until = 0, last_error = NULL WHERE id = $2",
        )
        .bind(now)
        .bind(id)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Records a failed attempt: tried again at `retry_at`, or given up (`failed`) when
    /// `retry_at` is `None`.
    pub async fn delivery_failed(
        &self,
        id: &str,
        error: &str,
        retry_at: Option<i64>,
        now: i64,
    ) -> Result<()> {
        let (status, next, done) = match retry_at {
            Some(at) => ("pending", at, None),
            None => ("failed", now, Some(now)),
        };
        sqlx::query(
            "UPDATE notify_outbox SET status = $1, attempts = attempts + 1, next_attempt_at = $2,
                 done_at = $3, last_error = $4, claimed_until = 0 WHERE id = $5",
        )
        .bind(status)
        .bind(next)
        .bind(done)
        .bind(error)
        .bind(id)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// The newest deliveries (all when `status` is `None`), at most `limit`.
    pub async fn deliveries(&self, status: Option<&str>, limit: i64) -> Result<Vec<OutboxRow>> {
        Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM notify_outbox WHERE ($1 = '' OR status = $1)
             ORDER BY created_at DESC, id LIMIT $2"
        )))
        .bind(status.unwrap_or(""))
        .bind(limit)
        .fetch_all(self.pool())
        .await?)
    }
}

#[cfg(test)]
mod tests {
    use crate::store::test_support::all_stores;

    #[tokio::test]
    async fn channels_are_saved_replaced_and_deleted() {
        for (store, cleanup) in all_stores().await {
            assert!(store.save_notify_channel("ops", "{}", 1).await.unwrap());
            assert!(
                !store
                    .save_notify_channel("ops", r#"{"a":1}"#, 2)
                    .await
                    .unwrap()
            );
            assert_eq!(
                store.notify_channels().await.unwrap(),
                [("ops".to_owned(), r#"{"a":1}"#.to_owned())]
            );
            assert!(store.delete_notify_channel("ops").await.unwrap());
            assert!(!store.delete_notify_channel("ops").await.unwrap());
            cleanup.finish().await.unwrap();
        }
    }

    #[tokio::test]
    async fn a_delivery_is_claimed_once_retried_and_settled() {
        for (store, cleanup) in all_stores().await {
            let id = store
                .enqueue_delivery("ops", "finding.new", "{}", 100)
                .await
                .unwrap();
            assert!(
                store
                    .claim_due_deliveries(99, 30, 10)
                    .await
                    .unwrap()
                    .is_empty()
            );
            assert_eq!(
                store.claim_due_deliveries(100, 30, 10).await.unwrap().len(),
                1
            );
            // Claimed: nobody else gets it until the claim lapses.
            assert!(
                store
                    .claim_due_deliveries(110, 30, 10)
                    .await
                    .unwrap()
                    .is_empty()
            );
            assert_eq!(
                store.claim_due_deliveries(130, 30, 10).await.unwrap().len(),
                1
            );
            store
                .delivery_failed(&id, "connection refused", Some(140), 131)
                .await
                .unwrap();
            assert!(
                store
                    .claim_due_deliveries(139, 30, 10)
                    .await
                    .unwrap()
                    .is_empty()
            );
            let [row] =
                <[_; 1]>::try_from(store.claim_due_deliveries(140, 30, 10).await.unwrap()).unwrap();
            assert_eq!(
                (row.attempts, row.last_error.as_deref()),
                (1, Some("connection refused"))
            );
            store.delivery_sent(&id, 141).await.unwrap();
            assert!(
                store
                    .claim_due_deliveries(1000, 30, 10)
                    .await
                    .unwrap()
                    .is_empty()
            );
            let [row] =
                <[_; 1]>::try_from(store.deliveries(Some("delivered"), 10).await.unwrap()).unwrap();
            assert_eq!(
                (row.attempts, row.done_at, row.last_error),
                (2, Some(141), None)
            );

            let gone = store
                .enqueue_delivery("ops", "finding.new", "{}", 200)
                .await
                .unwrap();
            store
                .delivery_failed(&gone, "HTTP 500", None, 201)
                .await
                .unwrap();
            assert_eq!(store.deliveries(Some("failed"), 10).await.unwrap().len(), 1);
            assert_eq!(store.deliveries(None, 10).await.unwrap().len(), 2);
            cleanup.finish().await.unwrap();
        }
    }
}
