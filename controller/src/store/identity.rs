//! The controller identity a database belongs to (`controller_identity`, one row): the CA
//! fingerprint and grant public key of the first controller that served from it. Every
//! later start, and every replica, must bring the same keys.

use sqlx::Row;

use super::Store;
use crate::{Error, Result};

/// The keys a controller serves with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerIdentity {
    /// `sha256:<hex>` of the CA certificate.
    pub ca_fingerprint: String,
    /// The grant-signing public key, hex.
    pub grant_public_key: String,
}

impl Store {
    /// Records `mine` as the database's identity when it has none yet, else checks that it
    /// is the recorded one; a different identity is refused with both named.
    pub async fn claim_identity(&self, mine: &ControllerIdentity, now: i64) -> Result<()> {
        sqlx::query(
            "INSERT INTO controller_identity (id, ca_fingerprint, grant_public_key, recorded_at)
             VALUES (1, $1, $2, $3) ON CONFLICT (id) DO NOTHING",
        )
        .bind(&mine.ca_fingerprint)
        .bind(&mine.grant_public_key)
        .bind(now)
        .execute(self.pool())
        .await?;
        let row = sqlx::query(
            "SELECT ca_fingerprint, grant_public_key FROM controller_identity WHERE id = 1",
        )
        .fetch_one(self.pool())
        .await?;
        let recorded = ControllerIdentity {
            ca_fingerprint: row.try_get("ca_fingerprint")?,
            grant_public_key: row.try_get("grant_public_key")?,
        };
        if recorded == *mine {
            return Ok(());
        }
        Err(Error::Config(format!(
            "this database belongs to a controller with CA {} and grant key {}, but this one \
             has CA {} and grant key {}: its agents would not trust it. Start it with that \
             controller's keys (the same --secrets-dir on every replica, or the data directory \
             that made them)",
            recorded.ca_fingerprint,
            recorded.grant_public_key,
            mine.ca_fingerprint,
            mine.grant_public_key
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::all_stores;

    #[tokio::test]
    async fn the_first_identity_is_kept_and_another_is_refused() {
        for (store, _cleanup) in all_stores().await {
            let first = ControllerIdentity {
                ca_fingerprint: "sha256:aa".into(),
                grant_public_key: "11".into(),
            };
            store.claim_identity(&first, 1).await.unwrap();
            store.claim_identity(&first, 2).await.unwrap();
            let other_ca = ControllerIdentity {
                ca_fingerprint: "sha256:bb".into(),
                ..first.clone()
            };
            let err = store
                .claim_identity(&other_ca, 3)
                .await
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("sha256:aa") && err.contains("sha256:bb"),
                "{err}"
            );
            let other_key = ControllerIdentity {
                grant_public_key: "22".into(),
                ..first.clone()
            };
            assert!(store.claim_identity(&other_key, 4).await.is_err());
            store.claim_identity(&first, 5).await.unwrap();
        }
    }
}
