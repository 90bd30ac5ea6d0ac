//! Revoked agent ids and certificate serials. The gateway keeps them in memory for its
//! handshake verifier and loads them from here on start.

use sqlx::Row;
use vigil_shared::ids::AgentId;

use super::{DbConnection, Store};
use crate::Result;

/// What a revocation names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RevocationKind {
    /// Every certificate of an agent identity.
    Agent,
    /// One certificate, by serial.
    Serial,
}

impl RevocationKind {
    fn as_str(self) -> &'static str {
        match self {
            RevocationKind::Agent => "agent",
            RevocationKind::Serial => "serial",
        }
    }
}

pub(crate) async fn insert_revocation(
    conn: &mut DbConnection,
    kind: RevocationKind,
    value: &str,
    reason: &str,
    now: i64,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO revocations (kind, value, reason, revoked_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (kind, value) DO NOTHING",
    )
    .bind(kind.as_str())
    .bind(value)
    .bind(reason)
    .bind(now)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

impl Store {
    /// Revokes one certificate by its serial (hex).
    pub async fn revoke_serial(&self, serial: &str, reason: &str, now: i64) -> Result<()> {
        let mut conn = self.pool().acquire().await?;
        insert_revocation(
            &mut conn,
            RevocationKind::Serial,
            &serial.to_ascii_lowercase(),
            reason,
            now,
        )
        .await
    }

    /// Every revoked agent id and certificate serial.
    pub async fn load_revocations(&self) -> Result<(Vec<AgentId>, Vec<String>)> {
        let rows = sqlx::query("SELECT kind, value FROM revocations ORDER BY revoked_at")
            .fetch_all(self.pool())
            .await?;
        let mut agents = Vec::new();
        let mut serials = Vec::new();
        for row in rows {
            let kind: String = row.try_get("kind")?;
            let value: String = row.try_get("value")?;
            match kind.as_str() {
                "agent" => match value.parse() {
                    Ok(id) => agents.push(id),
                    Err(_) => tracing::warn!(%value, "ignoring an unreadable revoked agent id"),
                },
                "serial" => serials.push(value),
                other => tracing::warn!(kind = %other, "ignoring an unknown revocation kind"),
            }
        }
        Ok((agents, serials))
    }
}

#[cfg(test)]
mod tests {
    use crate::store::test_support::temp_store;

    #[tokio::test]
    async fn serials_are_stored_once_in_lowercase() {
        let (store, _tmp) = temp_store().await;
        store.revoke_serial("ABCD", "lost", 1).await.unwrap();
        store.revoke_serial("abcd", "again", 2).await.unwrap();
        let (agents, serials) = store.load_revocations().await.unwrap();
        assert!(agents.is_empty());
        assert_eq!(serials, vec!["abcd".to_owned()]);
    }
}
