//! Agents' inventories shared between replicas (`agent_inventory`): the replica holding an
//! agent's stream writes the agent's full report when it changes; the others read what
//! changed since they last looked. `version` is the database's clock in milliseconds.

use sqlx::Row;
use vigil_shared::ids::AgentId;

use super::Store;
use super::replicas::now_ms;
use crate::{Error, Result};

/// One agent's stored report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredInventory {
    /// The agent.
    pub agent: AgentId,
    /// The replica that wrote it.
    pub replica_id: String,
    /// The report (an `AgentUpdate`, JSON).
    pub body: String,
    /// When it was written (ms, the database's clock).
    pub version: i64,
}

impl Store {
    /// Stores `agent`'s full report `body`, written by `replica`.
    pub async fn save_agent_inventory(
        &self,
        agent: AgentId,
        replica: &str,
        body: &str,
    ) -> Result<()> {
        let now = now_ms(self.backend());
        let sql = format!(
            "INSERT INTO agent_inventory (agent_id, replica_id, body, version)
             VALUES ($1, $2, $3, {now})
             ON CONFLICT (agent_id) DO UPDATE SET replica_id = excluded.replica_id,
                 body = excluded.body, version = excluded.version"
        );
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(agent.to_string())
            .bind(replica)
            .bind(body)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// The reports written after `since` (ms) by replicas other than `me`.
    pub async fn agent_inventories_since(
        &self,
        since: i64,
        me: &str,
    ) -> Result<Vec<StoredInventory>> {
        let rows = sqlx::query(
            "SELECT agent_id, replica_id, body, version FROM agent_inventory
             WHERE version > $1 AND replica_id <> $2 ORDER BY version",
        )
        .bind(since)
        .bind(me)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                let agent: String = row.try_get("agent_id")?;
                Ok(StoredInventory {
                    agent: agent.parse().map_err(|_| {
                        Error::InvalidInput(format!("stored agent id {agent:?} is not a UUID"))
                    })?,
                    replica_id: row.try_get("replica_id")?,
                    body: row.try_get("body")?,
                    version: row.try_get("version")?,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::all_stores;

    #[tokio::test]
    async fn reports_written_by_one_replica_are_read_by_the_others() {
        for (store, cleanup) in all_stores().await {
            let agent = AgentId::new_random();
            store
                .save_agent_inventory(agent, "a", "{\"seq\":1}")
                .await
                .unwrap();
            assert!(
                store
                    .agent_inventories_since(0, "a")
                    .await
                    .unwrap()
                    .is_empty(),
                "a's own"
            );
            let seen = store.agent_inventories_since(0, "b").await.unwrap();
            assert_eq!(seen.len(), 1);
            assert_eq!(
                (seen[0].agent, seen[0].body.as_str()),
                (agent, "{\"seq\":1}")
            );
            let after = seen[0].version;
            assert!(
                store
                    .agent_inventories_since(after, "b")
                    .await
                    .unwrap()
                    .is_empty()
            );
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            store
                .save_agent_inventory(agent, "c", "{\"seq\":2}")
                .await
                .unwrap();
            let seen = store.agent_inventories_since(after, "b").await.unwrap();
            assert_eq!((seen.len(), seen[0].replica_id.as_str()), (1, "c"));
            cleanup.finish().await.unwrap();
        }
    }
}
