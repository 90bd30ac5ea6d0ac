//! Bearer tokens of the HTTP API, stored by their SHA-256 with a role and a name. The
//! token itself is shown once, when created.

use sha2::{Digest, Sha256};
use sqlx::{FromRow, Row};

use super::Store;
use crate::roles::Role;
use crate::{Error, Result};

/// Prefix of every API token.
pub const TOKEN_PREFIX: &str = "vat_";

/// An API token as stored (never the token itself).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, sqlx::FromRow)]
pub struct ApiTokenRow {
    /// Short id: the first 12 hex characters of the hash.
    pub id: String,
    /// Who or what holds it (logged and audited as the actor).
    pub name: String,
    /// Its role.
    #[sqlx(try_from = "String")]
    pub role: Role,
    /// Creation time (Unix seconds).
    pub created_at: i64,
    /// Last successful use (Unix seconds).
    pub last_used: Option<i64>,
    /// Revocation time.
    pub revoked_at: Option<i64>,
}

/// SHA-256 of a token, hex.
pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.trim().as_bytes()))
}

/// A new random token (`vat_` and 64 hex characters).
pub fn generate_token() -> Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| Error::Certificate(format!("random token: {e}")))?;
    Ok(format!("{TOKEN_PREFIX}{}", hex::encode(bytes)))
}

/// Compares two byte strings without an early exit.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

const COLUMNS: &str = "id, name, role, created_at, last_used, revoked_at, token_hash";

impl Store {
    /// Creates a token; returns it (shown once) and its row.
    pub async fn create_api_token(
        &self,
        name: &str,
        role: Role,
        now: i64,
    ) -> Result<(String, ApiTokenRow)> {
        let token = generate_token()?;
        let row = self.insert_api_token(&token, name, role, now).await?;
        Ok((token, row))
    }

    /// Stores `token` (by hash) unless it is already stored; returns its row.
    pub async fn insert_api_token(
        &self,
        token: &str,
        name: &str,
        role: Role,
        now: i64,
    ) -> Result<ApiTokenRow> {
        let name = name.trim();
        if name.is_empty() || name.len() > 64 {
            return Err(Error::InvalidInput(
                "a token name must have 1 to 64 characters".into(),
            ));
        }
        let hash = hash_token(token);
        sqlx::query(
            "INSERT INTO api_tokens (id, token_hash, name, role, created_at) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (token_hash) DO NOTHING",
        )
        .bind(&hash[..12])
        .bind(&hash)
        .bind(name)
        .bind(role.as_str())
        .bind(now)
        .execute(self.pool())
        .await?;
        let sql = format!("SELECT {COLUMNS} FROM api_tokens WHERE token_hash = $1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(&hash)
            .fetch_one(self.pool())
            .await?;
        Ok(ApiTokenRow::from_row(&row)?)
    }

    /// The unrevoked token whose value is `presented`, after a constant-time comparison
    /// of the hashes; records its use at `now`.
    pub async fn authenticate(&self, presented: &str, now: i64) -> Result<Option<ApiTokenRow>> {
        let hash = hash_token(presented);
        let sql = format!("SELECT {COLUMNS} FROM api_tokens WHERE id = $1 AND revoked_at IS NULL");
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(&hash[..12])
            .fetch_all(self.pool())
            .await?;
        for row in rows {
            let stored: String = row.try_get("token_hash")?;
            if constant_time_eq(stored.as_bytes(), hash.as_bytes()) {
                let token = ApiTokenRow::from_row(&row)?;
                if token.last_used.is_none_or(|t| t < now) {
                    sqlx::query("UPDATE api_tokens SET last_used = $1 WHERE id = $2")
                        .bind(now)
                        .bind(&token.id)
                        .execute(self.pool())
                        .await?;
                }
                return Ok(Some(token));
            }
        }
        Ok(None)
    }

    /// Every token, oldest first.
    pub async fn list_api_tokens(&self) -> Result<Vec<ApiTokenRow>> {
        let sql = format!("SELECT {COLUMNS} FROM api_tokens ORDER BY created_at, id");
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_all(self.pool())
            .await?;
        rows.iter().map(|r| Ok(ApiTokenRow::from_row(r)?)).collect()
    }

    /// Revokes the token with `id` (idempotent); returns its row.
    pub async fn revoke_api_token(&self, id: &str, now: i64) -> Result<ApiTokenRow> {
        let id = id.trim().to_ascii_lowercase();
        sqlx::query("UPDATE api_tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL")
            .bind(now)
            .bind(&id)
            .execute(self.pool())
            .await?;
        let sql = format!("SELECT {COLUMNS} FROM api_tokens WHERE id = $1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(&id)
            .fetch_optional(self.pool())
            .await?
            .ok_or_else(|| Error::NotFound(format!("no API token with id {id:?}")))?;
        Ok(ApiTokenRow::from_row(&row)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::all_stores;

    #[tokio::test]
    async fn tokens_authenticate_until_revoked() {
        for (store, cleanup) in all_stores().await {
            let (token, row) = store
                .create_api_token("ci", Role::Operator, 10)
                .await
                .unwrap();
            assert!(token.starts_with(TOKEN_PREFIX));
            let found = store.authenticate(&token, 20).await.unwrap().unwrap();
            assert_eq!(
                (found.id.as_str(), found.role),
                (row.id.as_str(), Role::Operator)
            );
            assert!(store.authenticate("vat_wrong", 20).await.unwrap().is_none());
            let listed = store.list_api_tokens().await.unwrap();
            assert_eq!(listed[0].last_used, Some(20));
            // Storing the same token again (the admin.token file at every start) is a no-op.
            store
                .insert_api_token(&token, "ci", Role::Operator, 30)
                .await
                .unwrap();
            assert_eq!(store.list_api_tokens().await.unwrap().len(), 1);
            store.revoke_api_token(&row.id, 40).await.unwrap();
            assert!(store.authenticate(&token, 41).await.unwrap().is_none());
            assert!(store.revoke_api_token("nope", 1).await.is_err());
            cleanup.finish().await.unwrap();
        }
    }
}
