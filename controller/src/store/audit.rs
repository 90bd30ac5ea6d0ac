//! The audit table: appends serialized by the database (`BEGIN IMMEDIATE` on SQLite, an
//! exclusive table lock on PostgreSQL), reads by position or time, and verification of
//! the whole chain in pages. The chain itself is defined in [`super::chain`].

use sqlx::Row;

use super::chain::{AuditRow, Broken, Entry, GENESIS, check_rows, row_hash};
use super::{Backend, Store};
use crate::Result;

const COLUMNS: &str = "seq, prev_hash, hash, actor, action, agent, target, command, approval_id,
    outcome, exit_code, bytes, at";
/// Rows read per page by [`Store::verify_audit`].
const PAGE: i64 = 1000;

/// Where a time or position filter starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Since {
    /// Rows with `seq` greater than this.
    Seq(i64),
    /// Rows at or after this Unix time.
    At(i64),
}

impl Store {
    /// Appends `entry` at the end of the chain.
    pub async fn append_audit(&self, entry: Entry, at: i64) -> Result<AuditRow> {
        let mut tx = match self.backend() {
            Backend::Sqlite => self.pool().begin_with("BEGIN IMMEDIATE").await?,
            Backend::Postgres => {
                let mut tx = self.pool().begin().await?;
                sqlx::query("LOCK TABLE audit IN EXCLUSIVE MODE")
                    .execute(&mut *tx)
                    .await?;
                tx
            }
        };
        let last = sqlx::query("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1")
            .fetch_optional(&mut *tx)
            .await?;
        let (seq, prev_hash) = match last {
            Some(row) => (row.try_get::<i64, _>("seq")? + 1, row.try_get("hash")?),
            None => (1, GENESIS.to_owned()),
        };
        let hash = row_hash(seq, &prev_hash, &entry, at);
        sqlx::query(
            "INSERT INTO audit (seq, prev_hash, hash, actor, action, agent, target, command,
                 approval_id, outcome, exit_code, bytes, at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
        )
        .bind(seq)
        .bind(&prev_hash)
        .bind(&hash)
        .bind(&entry.actor)
        .bind(&entry.action)
        .bind(entry.agent.clone())
        .bind(entry.target.clone())
        .bind(entry.command.clone())
        .bind(entry.approval_id.clone())
        .bind(&entry.outcome)
        .bind(entry.exit_code)
        .bind(entry.bytes)
        .bind(at)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        tracing::debug!(seq, action = %entry.action, actor = %entry.actor, "audited");
        Ok(AuditRow {
            seq,
            prev_hash,
            hash,
            entry,
            at,
        })
    }

    /// Rows after `since`, in order, at most `limit`.
    pub async fn list_audit(&self, since: Since, limit: i64) -> Result<Vec<AuditRow>> {
        let (filter, value) = match since {
            Since::Seq(seq) => ("seq > $1", seq),
            Since::At(at) => ("at >= $1", at),
        };
        let sql = format!("SELECT {COLUMNS} FROM audit WHERE {filter} ORDER BY seq LIMIT $2");
        Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(value)
            .bind(limit)
            .fetch_all(self.pool())
            .await?)
    }

    /// Walks the whole chain; returns the number of rows, or the first broken row.
    pub async fn verify_audit(&self) -> Result<std::result::Result<i64, Broken>> {
        let (mut expected, mut prev, mut count) = (1i64, GENESIS.to_owned(), 0i64);
        loop {
            let page = self.list_audit(Since::Seq(expected - 1), PAGE).await?;
            if page.is_empty() {
                return Ok(Ok(count));
            }
            if let Some(broken) = check_rows(&page, &mut expected, &mut prev) {
                return Ok(Err(broken));
            }
            count += i64::try_from(page.len()).unwrap_or(i64::MAX);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::all_stores;

    async fn chain(store: &Store) {
        for i in 0..5 {
            let entry = Entry::new("ci", "exec", "ok").agent(format!("a{i}"));
            store.append_audit(entry, 100 + i).await.unwrap();
        }
    }

    #[tokio::test]
    async fn edits_and_deletions_break_the_chain_at_their_row() {
        for (store, cleanup) in all_stores().await {
            chain(&store).await;
            assert_eq!(store.verify_audit().await.unwrap(), Ok(5));
            assert_eq!(store.list_audit(Since::Seq(3), 10).await.unwrap().len(), 2);
            assert_eq!(store.list_audit(Since::At(104), 10).await.unwrap().len(), 1);

            sqlx::query("UPDATE audit SET outcome = 'refused' WHERE seq = 3")
                .execute(store.pool())
                .await
                .unwrap();
            let broken = store.verify_audit().await.unwrap().unwrap_err();
            assert_eq!(broken.seq, 3, "{broken:?}");
            assert!(broken.why.contains("edited"));

            sqlx::query("UPDATE audit SET outcome = 'ok' WHERE seq = 3")
                .execute(store.pool())
                .await
                .unwrap();
            sqlx::query("DELETE FROM audit WHERE seq = 2")
                .execute(store.pool())
                .await
                .unwrap();
            let broken = store.verify_audit().await.unwrap().unwrap_err();
            assert_eq!(broken.seq, 3, "{broken:?}");
            assert!(broken.why.contains("row 2 was deleted"));
            cleanup.finish().await.unwrap();
        }
    }

    #[tokio::test]
    async fn concurrent_appends_keep_one_chain() {
        for (store, cleanup) in all_stores().await {
            let mut tasks = Vec::new();
            for i in 0..16 {
                let store = store.clone();
                tasks.push(tokio::spawn(async move {
                    store.append_audit(Entry::new("ci", "exec", "ok"), i).await
                }));
            }
            for task in tasks {
                task.await.unwrap().unwrap();
            }
            assert_eq!(store.verify_audit().await.unwrap(), Ok(16));
            cleanup.finish().await.unwrap();
        }
    }
}
