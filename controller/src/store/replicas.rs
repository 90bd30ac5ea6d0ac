//! The replicas of one controller (`controller_replicas`) and which of them holds each
//! agent's stream (`agent_owners`). Leases are timed by the database's clock, so replicas
//! with skewed clocks still agree on who is alive: a replica is live while its
//! `lease_expires_at` is ahead of the database's now.

use sqlx::Row;
use vigil_shared::ids::AgentId;

use super::{Backend, Store};
use crate::{Error, Result};

/// A replica as it registers itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaRecord {
    /// Its id (a UUID chosen at start).
    pub id: String,
    /// Where the other replicas reach its forwarding listener (`HOST:PORT`; empty when it
    /// has none, as a single controller on SQLite).
    pub cluster_address: String,
    /// Its agent gateway (`HOST:PORT`).
    pub gateway_address: String,
    /// Its version.
    pub version: String,
}

/// A replica as the table lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaRow {
    /// What it registered.
    pub record: ReplicaRecord,
    /// When it registered (ms since the epoch, the database's clock).
    pub started_at: i64,
    /// When it last renewed its lease (ms).
    pub renewed_at: i64,
    /// When its lease lapses unless renewed (ms).
    pub lease_expires_at: i64,
    /// How many agent streams it held at its last renewal.
    pub agents_held: i64,
    /// `serving` or `draining`.
    pub state: String,
    /// True while its lease has not lapsed (by the database's clock when listed).
    pub live: bool,
}

/// One agent's owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentOwner {
    /// The agent.
    pub agent: AgentId,
    /// The replica holding its newest stream.
    pub replica_id: String,
    /// That replica's forwarding address.
    pub cluster_address: String,
    /// Which of that replica's streams it is.
    pub conn: u64,
}

/// The database's clock in milliseconds since the epoch, as an SQL expression.
pub(crate) fn now_ms(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => "CAST((julianday('now') - 2440587.5) * 86400000.0 AS BIGINT)",
        Backend::Postgres => "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)",
    }
}

fn parse_agent(text: &str) -> Result<AgentId> {
    text.parse()
        .map_err(|_| Error::InvalidInput(format!("stored agent id {text:?} is not a UUID")))
}

impl Store {
    /// Registers `me` (or renews it, when the row is there) with a lease of `lease_ms`
    /// from the database's now; returns when the lease lapses (ms, the database's clock).
    pub async fn renew_replica(
        &self,
        me: &ReplicaRecord,
        agents_held: i64,
        state: &str,
        lease_ms: i64,
    ) -> Result<i64> {
        let now = now_ms(self.backend());
        let sql = format!(
            "INSERT INTO controller_replicas (id, cluster_address, gateway_address, version,
                 started_at, renewed_at, lease_expires_at, agents_held, state)
             VALUES ($1, $2, $3, $4, {now}, {now}, {now} + $5, $6, $7)
             ON CONFLICT (id) DO UPDATE SET cluster_address = excluded.cluster_address,
                 gateway_address = excluded.gateway_address, version = excluded.version,
                 renewed_at = excluded.renewed_at, lease_expires_at = excluded.lease_expires_at,
                 agents_held = excluded.agents_held, state = excluded.state
             RETURNING lease_expires_at"
        );
        let expires: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .bind(&me.id)
            .bind(&me.cluster_address)
            .bind(&me.gateway_address)
            .bind(&me.version)
            .bind(lease_ms)
            .bind(agents_held)
            .bind(state)
            .fetch_one(self.pool())
            .await?;
        Ok(expires)
    }

    /// Every replica the table holds, live ones first, then by start.
    pub async fn list_replicas(&self) -> Result<Vec<ReplicaRow>> {
        let now = now_ms(self.backend());
        let sql = format!(
            "SELECT id, cluster_address, gateway_address, version, started_at, renewed_at,
                    lease_expires_at, agents_held, state,
                    CASE WHEN lease_expires_at > {now} THEN 1 ELSE 0 END AS live
             FROM controller_replicas ORDER BY live DESC, started_at, id"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_all(self.pool())
            .await?;
        rows.iter()
            .map(|row| {
                Ok(ReplicaRow {
                    record: ReplicaRecord {
                        id: row.try_get("id")?,
                        cluster_address: row.try_get("cluster_address")?,
                        gateway_address: row.try_get("gateway_address")?,
                        version: row.try_get("version")?,
                    },
                    started_at: row.try_get("started_at")?,
                    renewed_at: row.try_get("renewed_at")?,
                    lease_expires_at: row.try_get("lease_expires_at")?,
                    agents_held: row.try_get("agents_held")?,
                    state: row.try_get("state")?,
                    live: row.try_get::<i64, _>("live")? != 0,
                })
            })
            .collect()
    }

    /// Removes a replica and the streams it held (a clean stop).
    pub async fn remove_replica(&self, id: &str) -> Result<()> {
        let mut tx = self.pool().begin().await?;
        sqlx::query("DELETE FROM agent_owners WHERE replica_id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM controller_replicas WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Forgets replicas whose lease lapsed more than `after_ms` ago, with the streams they
    /// held; returns how many.
    pub async fn forget_lapsed_replicas(&self, after_ms: i64) -> Result<u64> {
        let now = now_ms(self.backend());
        let lapsed =
            format!("SELECT id FROM controller_replicas WHERE lease_expires_at < {now} - $1");
        let mut tx = self.pool().begin().await?;
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "DELETE FROM agent_owners WHERE replica_id IN ({lapsed})"
        )))
        .bind(after_ms)
        .execute(&mut *tx)
        .await?;
        let gone = sqlx::query(sqlx::AssertSqlSafe(format!(
            "DELETE FROM controller_replicas WHERE id IN ({lapsed})"
        )))
        .bind(after_ms)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        tx.commit().await?;
        Ok(gone)
    }

    /// Records that `replica` holds `agent`'s newest stream (`conn` tells its streams
    /// apart), over whichever replica held it before.
    pub async fn claim_agent(&self, agent: AgentId, replica: &str, conn: u64) -> Result<()> {
        let now = now_ms(self.backend());
        let sql = format!(
            "INSERT INTO agent_owners (agent_id, replica_id, conn, since) VALUES ($1, $2, $3, {now})
             ON CONFLICT (agent_id) DO UPDATE SET replica_id = excluded.replica_id,
                 conn = excluded.conn, since = excluded.since"
        );
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(agent.to_string())
            .bind(replica)
            .bind(i64::try_from(conn).unwrap_or(i64::MAX))
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Forgets that `replica` holds `agent`'s stream `conn` (it ended); a newer stream's
    /// row, on this replica or another, stays.
    pub async fn release_agent(&self, agent: AgentId, replica: &str, conn: u64) -> Result<()> {
        sqlx::query(
            "DELETE FROM agent_owners WHERE agent_id = $1 AND replica_id = $2 AND conn = $3",
        )
        .bind(agent.to_string())
        .bind(replica)
        .bind(i64::try_from(conn).unwrap_or(i64::MAX))
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Every agent held by a live replica, with that replica's forwarding address.
    pub async fn live_agent_owners(&self) -> Result<Vec<AgentOwner>> {
        self.owners_where("", None).await
    }

    /// The live replica holding `agent`'s stream, if any.
    pub async fn live_owner_of(&self, agent: AgentId) -> Result<Option<AgentOwner>> {
        Ok(self
            .owners_where("AND o.agent_id = $1", Some(agent))
            .await?
            .pop())
    }

    async fn owners_where(&self, filter: &str, agent: Option<AgentId>) -> Result<Vec<AgentOwner>> {
        let now = now_ms(self.backend());
        let sql = format!(
            "SELECT o.agent_id, o.replica_id, o.conn, r.cluster_address FROM agent_owners o
             JOIN controller_replicas r ON r.id = o.replica_id
             WHERE r.lease_expires_at > {now} {filter}"
        );
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        if let Some(agent) = agent {
            query = query.bind(agent.to_string());
        }
        let rows = query.fetch_all(self.pool()).await?;
        rows.iter()
            .map(|row| {
                Ok(AgentOwner {
                    agent: parse_agent(&row.try_get::<String, _>("agent_id")?)?,
                    replica_id: row.try_get("replica_id")?,
                    cluster_address: row.try_get("cluster_address")?,
                    conn: u64::try_from(row.try_get::<i64, _>("conn")?).unwrap_or_default(),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::all_stores;

    fn record(id: &str) -> ReplicaRecord {
        ReplicaRecord {
            id: id.into(),
            cluster_address: format!("{id}.internal:8642"),
            gateway_address: format!("{id}.internal:8641"),
            version: "0.0.0".into(),
        }
    }

    #[tokio::test]
    async fn leases_decide_who_is_live_and_the_newest_stream_owns_the_agent() {
        for (store, _cleanup) in all_stores().await {
            let (a, b) = (record("a"), record("b"));
            let expires = store.renew_replica(&a, 0, "serving", 60_000).await.unwrap();
            assert!(
                expires > 1_700_000_000_000,
                "{expires}: milliseconds since the epoch"
            );
            // b's lease is already over: it is listed, not live.
            store.renew_replica(&b, 0, "serving", -1).await.unwrap();
            let listed = store.list_replicas().await.unwrap();
            assert_eq!(listed.len(), 2);
            assert_eq!((listed[0].record.id.as_str(), listed[0].live), ("a", true));
            assert_eq!((listed[1].record.id.as_str(), listed[1].live), ("b", false));

            let agent = AgentId::new_random();
            store.claim_agent(agent, "a", 1).await.unwrap();
            let owner = store.live_owner_of(agent).await.unwrap().unwrap();
            assert_eq!(owner.cluster_address, "a.internal:8642");
            // A newer stream on b takes the agent, though b is not live: nobody owns it.
            store.claim_agent(agent, "b", 7).await.unwrap();
            assert_eq!(store.live_owner_of(agent).await.unwrap(), None);
            // a's old stream ending does not remove b's row; b's does.
            store.release_agent(agent, "a", 1).await.unwrap();
            store.renew_replica(&b, 1, "serving", 60_000).await.unwrap();
            let owners = store.live_agent_owners().await.unwrap();
            assert_eq!(
                owners
                    .iter()
                    .map(|o| (o.agent, o.replica_id.as_str(), o.conn))
                    .collect::<Vec<_>>(),
                vec![(agent, "b", 7)]
            );
            store.release_agent(agent, "b", 7).await.unwrap();
            assert!(store.live_agent_owners().await.unwrap().is_empty());

            // A lapsed replica is forgotten with its streams; a clean stop removes itself.
            store.claim_agent(agent, "b", 8).await.unwrap();
            store
                .renew_replica(&b, 1, "serving", -120_000)
                .await
                .unwrap();
            assert_eq!(store.forget_lapsed_replicas(60_000).await.unwrap(), 1);
            store.renew_replica(&b, 1, "serving", 60_000).await.unwrap();
            assert!(
                store.live_agent_owners().await.unwrap().is_empty(),
                "b's streams went with its row"
            );
            store.remove_replica("b").await.unwrap();
            store.remove_replica("a").await.unwrap();
            assert!(store.list_replicas().await.unwrap().is_empty());
        }
    }
}
