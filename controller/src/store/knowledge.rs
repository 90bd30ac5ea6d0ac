//! Remembered knowledge: short notes the assistant keeps in Vigil's own store
//! (`knowledge remember`), found again by `knowledge recall`. Scope `global` for now.

use serde::Serialize;

use super::Store;
use crate::Result;

/// A remembered note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct Note {
    pub key: String,
    pub value: String,
    pub created_at: i64,
}

impl Store {
    /// Remembers `value` under `key` in `scope`, replacing an older note of that key.
    pub async fn remember_note(&self, scope: &str, key: &str, value: &str, now: i64) -> Result<()> {
        sqlx::query("DELETE FROM knowledge_notes WHERE scope = $1 AND key = $2")
            .bind(scope)
            .bind(key)
            .execute(self.pool())
            .await?;
        sqlx::query(
            "INSERT INTO knowledge_notes (id, scope, key, value, created_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(uuid::Uuid::new_v4().to_string())
        .bind(scope)
        .bind(key)
        .bind(value)
        .bind(now)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Notes of `scope` whose key or text contains `query` (all when empty), newest first,
    /// at most 50.
    pub async fn recall_notes(&self, scope: &str, query: &str) -> Result<Vec<Note>> {
        let pattern = format!("%{}%", query.trim().to_lowercase());
        Ok(sqlx::query_as(
            "SELECT key, value, created_at FROM knowledge_notes
             WHERE scope = $1 AND (LOWER(key) LIKE $2 OR LOWER(value) LIKE $2)
             ORDER BY created_at DESC, key LIMIT 50",
        )
        .bind(scope)
        .bind(pattern)
        .fetch_all(self.pool())
        .await?)
    }
}

#[cfg(test)]
mod tests {
    use crate::store::test_support::all_stores;

    #[tokio::test]
    async fn notes_are_replaced_by_key_and_found_by_text() {
        for (store, cleanup) in all_stores().await {
            store
                .remember_note("global", "jellyfin", "logs in /config/log", 1)
                .await
                .unwrap();
            store
                .remember_note("global", "jellyfin", "logs in /var/log/jellyfin", 2)
                .await
                .unwrap();
            store
                .remember_note("global", "nas", "zfs pool tank", 3)
                .await
                .unwrap();
            let found = store.recall_notes("global", "JELLY").await.unwrap();
            assert_eq!(found.len(), 1);
            assert_eq!(found[0].value, "logs in /var/log/jellyfin");
            assert_eq!(store.recall_notes("global", "").await.unwrap().len(), 2);
            assert_eq!(
                store.recall_notes("global", "tank").await.unwrap()[0].key,
                "nas"
            );
            cleanup.finish().await.unwrap();
        }
    }
}
