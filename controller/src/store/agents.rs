//! Enrolled agents: the enrollment transaction (token use, new agent, revocation of the
//! identity it replaces), what the stream reports (hello, facts, renewals) and revocation.

use std::collections::BTreeMap;

use sqlx::Row;
use vigil_shared::ids::AgentId;

use super::revocations::{RevocationKind, insert_revocation};
use super::tokens::consume_join_token;
use super::{DbConnection, Store, labels_from_json, labels_to_json};
use crate::{Error, Result};

/// An agent as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentRow {
    /// Its identity.
    pub id: AgentId,
    /// The host name it reported.
    pub hostname: String,
    /// Labels from its join token.
    pub labels: BTreeMap<String, String>,
    /// Serial of its newest certificate (hex).
    pub cert_serial: String,
    /// Expiry of its newest certificate (Unix seconds).
    pub cert_expires_at: i64,
    /// The agent's version.
    pub version: String,
    /// Whether its last hello said `--read-only`.
    pub read_only: bool,
    /// When it was last seen on a stream (Unix seconds).
    pub last_seen: Option<i64>,
    /// Its last host facts (JSON).
    pub facts: Option<serde_json::Value>,
    /// Enrollment time (Unix seconds).
    pub created_at: i64,
    /// Revocation time, if revoked.
    pub revoked_at: Option<i64>,
    /// What an admin added to the paths this agent's reads never see.
    pub hidden_paths: Vec<String>,
}

/// What enrollment stores about a new agent.
#[derive(Debug, Clone)]
pub struct NewAgent {
    /// The new identity.
    pub id: AgentId,
    /// The host name from the request.
    pub hostname: String,
    /// The agent's version from the request.
    pub version: String,
    /// Serial of the issued certificate.
    pub cert_serial: String,
    /// Expiry of the issued certificate.
    pub cert_expires_at: i64,
}

/// What the streams report about an agent, as one batched write stores it.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentState {
    /// The agent.
    pub id: AgentId,
    /// Its host name.
    pub hostname: String,
    /// Its version.
    pub version: String,
    /// Whether its hello said `--read-only`.
    pub read_only: bool,
    /// When it was last seen (Unix seconds).
    pub last_seen: Option<i64>,
    /// Its host facts (JSON text); absent facts leave the stored ones alone.
    pub facts: Option<String>,
}

impl AgentState {
    /// The reported part of `row`.
    pub fn of(row: &AgentRow) -> Self {
        AgentState {
            id: row.id,
            hostname: row.hostname.clone(),
            version: row.version.clone(),
            read_only: row.read_only,
            last_seen: row.last_seen,
            facts: row.facts.as_ref().map(serde_json::Value::to_string),
        }
    }
}

/// The result of a successful enrollment transaction.
#[derive(Debug, Clone)]
pub struct Enrolled {
    /// Labels from the join token, now the agent's.
    pub labels: BTreeMap<String, String>,
    /// The previous identity, when it was revoked in the same transaction.
    pub revoked_previous: Option<AgentId>,
    /// The hidden paths an admin set on the previous identity, carried over to the new
    /// one (a re-enrolled host keeps hiding what it hid).
    pub hidden_paths: Vec<String>,
}

fn row_to_agent(row: &sqlx::any::AnyRow) -> Result<AgentRow> {
    let id: String = row.try_get("id")?;
    let facts: Option<String> = row.try_get("facts")?;
    Ok(AgentRow {
        id: id
            .parse()
            .map_err(|_| Error::InvalidInput(format!("stored agent id {id:?} is not a UUID")))?,
        hostname: row.try_get("hostname")?,
        labels: labels_from_json(&row.try_get::<String, _>("labels")?),
        cert_serial: row.try_get("cert_serial")?,
        cert_expires_at: row.try_get("cert_expires_at")?,
        version: row.try_get("version")?,
        read_only: row.try_get::<i64, _>("read_only")? != 0,
        last_seen: row.try_get("last_seen")?,
        facts: facts.and_then(|f| serde_json::from_str(&f).ok()),
        created_at: row.try_get("created_at")?,
        revoked_at: row.try_get("revoked_at")?,
        hidden_paths: serde_json::from_str(&row.try_get::<String, _>("hidden_paths")?)
            .unwrap_or_default(),
    })
}

impl Store {
    /// The enrollment transaction: uses one use of the join token, stores the new agent
    /// with the token's labels and, when `previous` names an agent enrolled from the same
    /// host name, revokes it. Nothing is stored when the token is refused.
    pub async fn enroll_agent(
        &self,
        token_hash: &str,
        agent: &NewAgent,
        previous: Option<AgentId>,
        now: i64,
    ) -> Result<Enrolled> {
        let mut tx = self.pool().begin().await?;
        let labels = consume_join_token(&mut tx, token_hash, now).await?;
        sqlx::query(
            "INSERT INTO agents (id, hostname, labels, cert_serial, cert_expires_at, version, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(agent.id.to_string())
        .bind(&agent.hostname)
        .bind(labels_to_json(&labels))
        .bind(&agent.cert_serial)
        .bind(agent.cert_expires_at)
        .bind(&agent.version)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        let mut revoked_previous = None;
        let mut hidden_paths = Vec::new();
        if let Some(previous) = previous {
            let sql =
                "SELECT hostname, hidden_paths FROM agents WHERE id = $1 AND revoked_at IS NULL";
            let row = sqlx::query(sql)
                .bind(previous.to_string())
                .fetch_optional(&mut *tx)
                .await?;
            let found = row
                .map(|r| -> Result<(String, String)> {
                    Ok((r.try_get("hostname")?, r.try_get("hidden_paths")?))
                })
                .transpose()?;
            match found {
                Some((host, hidden)) if host == agent.hostname => {
                    revoke_in(&mut tx, previous, "replaced by a new enrollment", now).await?;
                    revoked_previous = Some(previous);
                    sqlx::query("UPDATE agents SET hidden_paths = $1 WHERE id = $2")
                        .bind(&hidden)
                        .bind(agent.id.to_string())
                        .execute(&mut *tx)
                        .await?;
                    hidden_paths = serde_json::from_str(&hidden).unwrap_or_default();
                }
                Some((host, _)) => tracing::warn!(
                    %previous, previous_host = %host, host = %agent.hostname,
                    "not revoking the previous identity: it belongs to another host name"
                ),
                None => tracing::debug!(%previous, "previous identity unknown or already revoked"),
            }
        }
        tx.commit().await?;
        Ok(Enrolled {
            labels,
            revoked_previous,
            hidden_paths,
        })
    }

    /// Enrolled agents, oldest first; revoked ones only when `include_revoked`.
    pub async fn list_agents(&self, include_revoked: bool) -> Result<Vec<AgentRow>> {
        let sql = if include_revoked {
            "SELECT id, hostname, labels, cert_serial, cert_expires_at, version, CASE WHEN read_only THEN 1 ELSE 0 END AS read_only,
                    last_seen, facts, created_at, revoked_at, hidden_paths FROM agents ORDER BY created_at, id"
        } else {
            "SELECT id, hostname, labels, cert_serial, cert_expires_at, version, CASE WHEN read_only THEN 1 ELSE 0 END AS read_only,
                    last_seen, facts, created_at, revoked_at, hidden_paths FROM agents
             WHERE revoked_at IS NULL ORDER BY created_at, id"
        };
        let rows = sqlx::query(sql).fetch_all(self.pool()).await?;
        rows.iter().map(row_to_agent).collect()
    }

    /// Every enrolled agent's id, revoked ones included.
    pub async fn list_agent_ids(&self) -> Result<Vec<AgentId>> {
        let ids: Vec<String> = sqlx::query_scalar("SELECT id FROM agents")
            .fetch_all(self.pool())
            .await?;
        ids.iter()
            .map(|id| {
                id.parse().map_err(|_| {
                    Error::InvalidInput(format!("stored agent id {id:?} is not a UUID"))
                })
            })
            .collect()
    }

    /// One agent, revoked or not.
    pub async fn get_agent(&self, id: AgentId) -> Result<Option<AgentRow>> {
        let sql = "SELECT id, hostname, labels, cert_serial, cert_expires_at, version, CASE WHEN read_only THEN 1 ELSE 0 END AS read_only,
                          last_seen, facts, created_at, revoked_at, hidden_paths FROM agents WHERE id = $1";
        let row = sqlx::query(sql)
            .bind(id.to_string())
            .fetch_optional(self.pool())
            .await?;
        row.as_ref().map(row_to_agent).transpose()
    }

    /// Records what a stream's hello said.
    pub async fn record_hello(
        &self,
        id: AgentId,
        hostname: &str,
        version: &str,
        read_only: bool,
        now: i64,
    ) -> Result<()> {
        sqlx::query(
            "UPDATE agents SET hostname = $1, version = $2, read_only = $3, last_seen = $4 WHERE id = $5",
        )
        .bind(hostname)
        .bind(version)
        .bind(read_only)
        .bind(now)
        .bind(id.to_string())
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Records what the streams reported about several agents, in one transaction.
    pub async fn record_agent_states(&self, states: &[AgentState]) -> Result<()> {
        if states.is_empty() {
            return Ok(());
        }
        let mut tx = self.pool().begin().await?;
        for state in states {
            sqlx::query(
                "UPDATE agents SET hostname = $1, version = $2, read_only = $3,
                        last_seen = COALESCE($4, last_seen), facts = COALESCE($5, facts)
                 WHERE id = $6",
            )
            .bind(&state.hostname)
            .bind(&state.version)
            .bind(state.read_only)
            .bind(state.last_seen)
            .bind(state.facts.as_deref())
            .bind(state.id.to_string())
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Records the agent's host facts.
    pub async fn record_facts(
        &self,
        id: AgentId,
        facts: &serde_json::Value,
        now: i64,
    ) -> Result<()> {
        sqlx::query("UPDATE agents SET facts = $1, last_seen = $2 WHERE id = $3")
            .bind(facts.to_string())
            .bind(now)
            .bind(id.to_string())
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Records when the agent was last seen.
    pub async fn record_last_seen(&self, id: AgentId, now: i64) -> Result<()> {
        sqlx::query("UPDATE agents SET last_seen = $1 WHERE id = $2")
            .bind(now)
            .bind(id.to_string())
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Replaces what an admin added to the paths the agent's reads never see. Returns
    /// false when no such agent exists.
    pub async fn set_hidden_paths(&self, id: AgentId, paths: &[String]) -> Result<bool> {
        let text = serde_json::to_string(paths)?;
        let done = sqlx::query("UPDATE agents SET hidden_paths = $1 WHERE id = $2")
            .bind(text)
            .bind(id.to_string())
            .execute(self.pool())
            .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Every agent's hidden paths (what an admin added), revoked agents left out.
    pub async fn list_hidden_paths(&self) -> Result<Vec<(AgentId, Vec<String>)>> {
        let rows = sqlx::query("SELECT id, hidden_paths FROM agents WHERE revoked_at IS NULL")
            .fetch_all(self.pool())
            .await?;
        rows.iter()
            .map(|row| {
                let id: String = row.try_get("id")?;
                let id = id.parse().map_err(|_| {
                    Error::InvalidInput(format!("stored agent id {id:?} is not a UUID"))
                })?;
                let paths = serde_json::from_str(&row.try_get::<String, _>("hidden_paths")?)
                    .unwrap_or_default();
                Ok((id, paths))
            })
            .collect()
    }

    /// Records a renewed certificate.
    pub async fn record_renewal(&self, id: AgentId, serial: &str, expires_at: i64) -> Result<()> {
        sqlx::query("UPDATE agents SET cert_serial = $1, cert_expires_at = $2 WHERE id = $3")
            .bind(serial)
            .bind(expires_at)
            .bind(id.to_string())
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Revokes an agent (idempotent). Returns false when no such agent exists.
    pub async fn revoke_agent(&self, id: AgentId, reason: &str, now: i64) -> Result<bool> {
        let mut tx = self.pool().begin().await?;
        let exists = sqlx::query("SELECT id FROM agents WHERE id = $1")
            .bind(id.to_string())
            .fetch_optional(&mut *tx)
            .await?
            .is_some();
        if exists {
            revoke_in(&mut tx, id, reason, now).await?;
        }
        tx.commit().await?;
        Ok(exists)
    }
}

async fn revoke_in(conn: &mut DbConnection, id: AgentId, reason: &str, now: i64) -> Result<()> {
    sqlx::query("UPDATE agents SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL")
        .bind(now)
        .bind(id.to_string())
        .execute(&mut *conn)
        .await?;
    insert_revocation(conn, RevocationKind::Agent, &id.to_string(), reason, now).await
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;
    use crate::pki::join_token;

    /// Enrolls an agent named `host` through a fresh one-use join token; its stored row.
    pub async fn enroll(store: &Store, host: &str) -> AgentRow {
        let token = join_token::generate().unwrap();
        store
            .insert_join_token(&token.hash, &BTreeMap::new(), 1, 10, i64::MAX / 2)
            .await
            .unwrap();
        let agent = NewAgent {
            id: AgentId::new_random(),
            hostname: host.into(),
            version: "0.1.0".into(),
            cert_serial: "0abc".into(),
            cert_expires_at: 99,
        };
        store
            .enroll_agent(&token.hash, &agent, None, 20)
            .await
            .unwrap();
        store.get_agent(agent.id).await.unwrap().unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pki::join_token;
    use crate::store::test_support::temp_store;

    fn new_agent(host: &str) -> NewAgent {
        NewAgent {
            id: AgentId::new_random(),
            hostname: host.into(),
            version: "0.1.0".into(),
            cert_serial: "0abc".into(),
            cert_expires_at: 99,
        }
    }

    #[tokio::test]
    async fn enrollment_stores_the_agent_and_replaces_the_previous_identity() {
        let (store, _tmp) = temp_store().await;
        let token = join_token::generate().unwrap();
        let labels = BTreeMap::from([("role".to_owned(), "db".to_owned())]);
        store
            .insert_join_token(&token.hash, &labels, 3, 10, 1000)
            .await
            .unwrap();

        let first = new_agent("node-1");
        let done = store
            .enroll_agent(&token.hash, &first, None, 20)
            .await
            .unwrap();
        assert_eq!(done.labels, labels);
        let row = store.get_agent(first.id).await.unwrap().unwrap();
        assert_eq!(
            (row.hostname.as_str(), row.labels.clone()),
            ("node-1", labels.clone())
        );

        let hide = vec!["/srv/keys".to_owned(), "/home/*/.vault-token".to_owned()];
        assert!(store.set_hidden_paths(first.id, &hide).await.unwrap());
        assert!(
            !store
                .set_hidden_paths(AgentId::new_random(), &hide)
                .await
                .unwrap()
        );

        // Another host cannot revoke node-1 by naming it, nor take what it hides.
        let stranger = new_agent("other");
        let done = store
            .enroll_agent(&token.hash, &stranger, Some(first.id), 21)
            .await
            .unwrap();
        assert_eq!(done.revoked_previous, None);
        assert!(done.hidden_paths.is_empty());

        let second = new_agent("node-1");
        let done = store
            .enroll_agent(&token.hash, &second, Some(first.id), 22)
            .await
            .unwrap();
        assert_eq!(done.revoked_previous, Some(first.id));
        // The new identity of the same host keeps hiding what the old one hid.
        assert_eq!(done.hidden_paths, hide);
        let row = store.get_agent(second.id).await.unwrap().unwrap();
        assert_eq!(row.hidden_paths, hide);
        let listed: Vec<AgentId> = store
            .list_agents(false)
            .await
            .unwrap()
            .iter()
            .map(|a| a.id)
            .collect();
        assert_eq!(listed, vec![stranger.id, second.id]);
        let (ids, _) = store.load_revocations().await.unwrap();
        assert_eq!(ids, vec![first.id]);

        // The token is used up: nothing is stored for a refused enrollment.
        let refused = new_agent("node-2");
        let err = store
            .enroll_agent(&token.hash, &refused, None, 23)
            .await
            .unwrap_err();
        assert!(matches!(err, Error::TokenExhausted), "{err:?}");
        assert!(store.get_agent(refused.id).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn stream_reports_and_revocation_are_recorded() {
        let (store, _tmp) = temp_store().await;
        let token = join_token::generate().unwrap();
        store
            .insert_join_token(&token.hash, &BTreeMap::new(), 1, 10, 1000)
            .await
            .unwrap();
        let agent = new_agent("h");
        store
            .enroll_agent(&token.hash, &agent, None, 20)
            .await
            .unwrap();
        store
            .record_hello(agent.id, "h2", "0.2.0", true, 30)
            .await
            .unwrap();
        store
            .record_facts(agent.id, &serde_json::json!({"cpus": 4}), 31)
            .await
            .unwrap();
        store.record_renewal(agent.id, "ff", 500).await.unwrap();
        let row = store.get_agent(agent.id).await.unwrap().unwrap();
        assert!(row.read_only);
        assert_eq!((row.version.as_str(), row.last_seen), ("0.2.0", Some(31)));
        assert_eq!(row.facts.unwrap()["cpus"], 4);
        assert_eq!((row.cert_serial.as_str(), row.cert_expires_at), ("ff", 500));
        assert!(store.revoke_agent(agent.id, "test", 40).await.unwrap());
        assert!(
            store.revoke_agent(agent.id, "test", 41).await.unwrap(),
            "idempotent"
        );
        assert_eq!(
            store.get_agent(agent.id).await.unwrap().unwrap().revoked_at,
            Some(40)
        );
        assert!(
            !store
                .revoke_agent(AgentId::new_random(), "x", 1)
                .await
                .unwrap()
        );
    }
}
