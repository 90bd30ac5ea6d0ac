//! Chat sessions and their messages. A session records its owner, control level and token
//! usage; a message its role (`user`, `assistant`, `tool`, `event`), text and structured
//! data (an assistant message's tool calls, a tool message's call id and name), in order.

use serde::Serialize;
use sqlx::Row;

use super::Store;
use crate::{Error, Result};

/// A chat session as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct SessionRow {
    pub id: String,
    pub title: String,
    pub owner: String,
    pub control_level: String,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A message as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MessageRow {
    pub id: String,
    pub session_id: String,
    pub seq: i64,
    pub role: String,
    pub content: String,
    /// Structured data, when the message has any.
    pub data: Option<serde_json::Value>,
    pub created_at: i64,
}

const SESSION_COLUMNS: &str =
    "id, title, owner, control_level, input_tokens, output_tokens, created_at, updated_at";

impl Store {
    /// Creates a session.
    pub async fn create_session(
        &self,
        id: &str,
        title: &str,
        owner: &str,
        control_level: &str,
        now: i64,
    ) -> Result<SessionRow> {
        sqlx::query(
            "INSERT INTO chat_sessions (id, title, owner, control_level, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $5)",
        )
        .bind(id)
        .bind(title)
        .bind(owner)
        .bind(control_level)
        .bind(now)
        .execute(self.pool())
        .await?;
        self.get_session(id)
            .await?
            .ok_or_else(|| Error::NotFound(format!("session {id} vanished")))
    }

    /// One session.
    pub async fn get_session(&self, id: &str) -> Result<Option<SessionRow>> {
        let sql = format!("SELECT {SESSION_COLUMNS} FROM chat_sessions WHERE id = $1");
        Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .fetch_optional(self.pool())
            .await?)
    }

    /// Sessions, most recently active first, at most 500.
    pub async fn list_sessions(&self) -> Result<Vec<SessionRow>> {
        let sql = format!(
            "SELECT {SESSION_COLUMNS} FROM chat_sessions ORDER BY updated_at DESC, id LIMIT 500"
        );
        Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .fetch_all(self.pool())
            .await?)
    }

    /// Renames a session; false when there was none.
    pub async fn rename_session(&self, id: &str, title: &str, now: i64) -> Result<bool> {
        let done =
            sqlx::query("UPDATE chat_sessions SET title = $1, updated_at = $2 WHERE id = $3")
                .bind(title)
                .bind(now)
                .bind(id)
                .execute(self.pool())
                .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Deletes a session and its messages; false when there was none.
    pub async fn delete_session(&self, id: &str) -> Result<bool> {
        sqlx::query("DELETE FROM chat_messages WHERE session_id = $1")
            .bind(id)
            .execute(self.pool())
            .await?;
        sqlx::query("DELETE FROM chat_session_state WHERE session_id = $1")
            .bind(id)
            .execute(self.pool())
            .await?;
        let done = sqlx::query("DELETE FROM chat_sessions WHERE id = $1")
            .bind(id)
            .execute(self.pool())
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Adds token usage to a session and marks it active.
    pub async fn add_session_usage(
        &self,
        id: &str,
        input: u64,
        output: u64,
        now: i64,
    ) -> Result<()> {
        let clamp = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        sqlx::query(
            "UPDATE chat_sessions SET input_tokens = input_tokens + $1,
                 output_tokens = output_tokens + $2, updated_at = $3 WHERE id = $4",
        )
        .bind(clamp(input))
        .bind(clamp(output))
        .bind(now)
        .bind(id)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Appends a message to a session.
    pub async fn append_message(
        &self,
        session_id: &str,
        role: &str,
        content: &str,
        data: Option<&serde_json::Value>,
        now: i64,
    ) -> Result<()> {
        let id = uuid::Uuid::new_v4().to_string();
        let data = data.map(serde_json::Value::to_string);
        sqlx::query(
            "INSERT INTO chat_messages (id, session_id, role, content, data, created_at, seq)
             SELECT $1, $2, $3, $4, $5, $6, COALESCE(MAX(seq), 0) + 1
             FROM chat_messages WHERE session_id = $2",
        )
        .bind(&id)
        .bind(session_id)
        .bind(role)
        .bind(content)
        .bind(data)
        .bind(now)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// A session's messages in order.
    pub async fn list_messages(&self, session_id: &str) -> Result<Vec<MessageRow>> {
        let rows = sqlx::query(
            "SELECT id, session_id, seq, role, content, data, created_at FROM chat_messages
             WHERE session_id = $1 ORDER BY seq, created_at",
        )
        .bind(session_id)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                let data: Option<String> = row.try_get("data")?;
                Ok(MessageRow {
                    id: row.try_get("id")?,
                    session_id: row.try_get("session_id")?,
                    seq: row.try_get("seq")?,
                    role: row.try_get("role")?,
                    content: row.try_get("content")?,
                    data: data.and_then(|d| serde_json::from_str(&d).ok()),
                    created_at: row.try_get("created_at")?,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::store::test_support::all_stores;

    #[tokio::test]
    async fn sessions_keep_messages_in_order_and_usage() {
        for (store, cleanup) in all_stores().await {
            store
                .create_session("s1", "jellyfin", "admin", "controlled", 10)
                .await
                .unwrap();
            for (i, role) in ["user", "assistant", "tool"].iter().enumerate() {
                let data = serde_json::json!({ "i": i });
                store
                    .append_message("s1", role, &format!("m{i}"), Some(&data), 11)
                    .await
                    .unwrap();
            }
            let messages = store.list_messages("s1").await.unwrap();
            let roles: Vec<_> = messages.iter().map(|m| m.role.as_str()).collect();
            assert_eq!(roles, ["user", "assistant", "tool"]);
            assert_eq!(messages[2].data, Some(serde_json::json!({ "i": 2 })));
            store.add_session_usage("s1", 100, 7, 12).await.unwrap();
            let session = store.get_session("s1").await.unwrap().unwrap();
            assert_eq!((session.input_tokens, session.output_tokens), (100, 7));
            assert_eq!(store.list_sessions().await.unwrap().len(), 1);
            assert!(store.delete_session("s1").await.unwrap());
            assert!(!store.delete_session("s1").await.unwrap());
            assert!(store.list_messages("s1").await.unwrap().is_empty());
            cleanup.finish().await.unwrap();
        }
    }
}
