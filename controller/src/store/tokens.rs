//! Join tokens in the database: created by `token create`, listed and revoked by the CLI,
//! and consumed (uses decremented atomically) inside the enrollment transaction.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use sqlx::Row;

use super::{DbConnection, Store, labels_from_json, labels_to_json};
use crate::pki::join_token;
use crate::{Error, Result};

/// A join token as stored (never the token itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JoinTokenRow {
    /// The first 8 hex characters of the hash.
    pub id: String,
    /// Labels given to agents that enroll with the token.
    pub labels: BTreeMap<String, String>,
    /// Uses the token was created with.
    pub uses_total: i64,
    /// Uses left.
    pub uses_left: i64,
    /// Creation time (Unix seconds).
    pub created_at: i64,
    /// Expiry (Unix seconds).
    pub expires_at: i64,
    /// Revocation time, if revoked.
    pub revoked_at: Option<i64>,
}

/// What `token list` shows as a token's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenState {
    /// Usable.
    Active,
    /// Past its TTL.
    Expired,
    /// No uses left.
    UsedUp,
    /// Revoked.
    Revoked,
}

impl fmt::Display for TokenState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TokenState::Active => "active",
            TokenState::Expired => "expired",
            TokenState::UsedUp => "used up",
            TokenState::Revoked => "revoked",
        })
    }
}

impl JoinTokenRow {
    /// The token's state at `now`.
    pub fn state(&self, now: i64) -> TokenState {
        if self.revoked_at.is_some() {
            TokenState::Revoked
        } else if self.expires_at <= now {
            TokenState::Expired
        } else if self.uses_left <= 0 {
            TokenState::UsedUp
        } else {
            TokenState::Active
        }
    }

    /// Why this token cannot be used at `now`, or `None` when it can.
    fn refusal(&self, now: i64) -> Option<Error> {
        match self.state(now) {
            TokenState::Active => None,
            TokenState::Revoked => Some(Error::TokenRevoked),
            TokenState::Expired => Some(Error::TokenExpired),
            TokenState::UsedUp => Some(Error::TokenExhausted),
        }
    }
}

fn row_to_token(row: &sqlx::any::AnyRow) -> Result<JoinTokenRow> {
    Ok(JoinTokenRow {
        id: row.try_get("id")?,
        labels: labels_from_json(&row.try_get::<String, _>("labels")?),
        uses_total: row.try_get("uses_total")?,
        uses_left: row.try_get("uses_left")?,
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
        revoked_at: row.try_get("revoked_at")?,
    })
}

impl Store {
    /// Stores a new token by its hash.
    pub async fn insert_join_token(
        &self,
        hash: &str,
        labels: &BTreeMap<String, String>,
        uses: u32,
        now: i64,
        expires_at: i64,
    ) -> Result<JoinTokenRow> {
        sqlx::query(
            "INSERT INTO join_tokens (token_hash, id, labels, uses_total, uses_left, created_at, expires_at)
             VALUES ($1, $2, $3, $4, $4, $5, $6)",
        )
        .bind(hash)
        .bind(join_token::id_of(hash))
        .bind(labels_to_json(labels))
        .bind(i64::from(uses))
        .bind(now)
        .bind(expires_at)
        .execute(self.pool())
        .await?;
        Ok(JoinTokenRow {
            id: join_token::id_of(hash).to_owned(),
            labels: labels.clone(),
            uses_total: i64::from(uses),
            uses_left: i64::from(uses),
            created_at: now,
            expires_at,
            revoked_at: None,
        })
    }

    /// Every token, newest first.
    pub async fn list_join_tokens(&self) -> Result<Vec<JoinTokenRow>> {
        let sql = "SELECT id, labels, uses_total, uses_left, created_at, expires_at, revoked_at
                   FROM join_tokens ORDER BY created_at DESC, id";
        let rows = sqlx::query(sql).fetch_all(self.pool()).await?;
        rows.iter().map(row_to_token).collect()
    }

    /// Revokes the token whose id (8 hex), full hash or token value is `which`.
    pub async fn revoke_join_token(&self, which: &str, now: i64) -> Result<JoinTokenRow> {
        let which = which.trim();
        let hash = if join_token::is_well_formed(which) {
            join_token::hash(which)
        } else {
            which.to_ascii_lowercase()
        };
        let sql = "SELECT id, labels, uses_total, uses_left, created_at, expires_at, revoked_at, token_hash
                   FROM join_tokens WHERE id = $1 OR token_hash = $1";
        let rows = sqlx::query(sql).bind(&hash).fetch_all(self.pool()).await?;
        let row = match rows.as_slice() {
            [row] => row,
            [] => return Err(Error::NotFound(format!("no join token with id {which:?}"))),
            _ => {
                return Err(Error::InvalidInput(format!(
                    "{which:?} matches several join tokens; give the full hash"
                )));
            }
        };
        let token_hash: String = row.try_get("token_hash")?;
        let mut token = row_to_token(row)?;
        sqlx::query(
            "UPDATE join_tokens SET revoked_at = $1 WHERE token_hash = $2 AND revoked_at IS NULL",
        )
        .bind(now)
        .bind(&token_hash)
        .execute(self.pool())
        .await?;
        token.revoked_at = token.revoked_at.or(Some(now));
        Ok(token)
    }
}

/// Uses one use of the token with `hash` at `now`, inside the caller's transaction, and
/// returns its labels. The decrement is one conditional `UPDATE`, so two enrollments racing
/// for the last use cannot both win.
pub(crate) async fn consume_join_token(
    conn: &mut DbConnection,
    hash: &str,
    now: i64,
) -> Result<BTreeMap<String, String>> {
    let consumed = sqlx::query(
        "UPDATE join_tokens SET uses_left = uses_left - 1
         WHERE token_hash = $1 AND uses_left > 0 AND revoked_at IS NULL AND expires_at > $2
         RETURNING labels",
    )
    .bind(hash)
    .bind(now)
    .fetch_optional(&mut *conn)
    .await?;
    if let Some(row) = consumed {
        return Ok(labels_from_json(&row.try_get::<String, _>("labels")?));
    }
    let sql = "SELECT id, labels, uses_total, uses_left, created_at, expires_at, revoked_at
               FROM join_tokens WHERE token_hash = $1";
    let existing = sqlx::query(sql)
        .bind(hash)
        .fetch_optional(&mut *conn)
        .await?;
    Err(match existing {
        None => Error::TokenInvalid,
        Some(row) => row_to_token(&row)?
            .refusal(now)
            .unwrap_or(Error::TokenExhausted),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::temp_store;

    async fn consume(store: &Store, hash: &str, now: i64) -> Result<BTreeMap<String, String>> {
        let mut tx = store.pool().begin().await?;
        let labels = consume_join_token(&mut tx, hash, now).await?;
        tx.commit().await?;
        Ok(labels)
    }

    #[tokio::test]
    async fn uses_expiry_and_revocation_are_enforced() {
        let (store, _tmp) = temp_store().await;
        let labels = BTreeMap::from([("site".to_owned(), "home".to_owned())]);
        let two = join_token::generate().unwrap();
        store
            .insert_join_token(&two.hash, &labels, 2, 1000, 4600)
            .await
            .unwrap();
        assert_eq!(consume(&store, &two.hash, 1001).await.unwrap(), labels);
        consume(&store, &two.hash, 1002).await.unwrap();
        assert!(matches!(
            consume(&store, &two.hash, 1003).await,
            Err(Error::TokenExhausted)
        ));

        let short = join_token::generate().unwrap();
        store
            .insert_join_token(&short.hash, &labels, 5, 1000, 1001)
            .await
            .unwrap();
        assert!(matches!(
            consume(&store, &short.hash, 1001).await,
            Err(Error::TokenExpired)
        ));

        let revoked = join_token::generate().unwrap();
        store
            .insert_join_token(&revoked.hash, &labels, 5, 1000, 4600)
            .await
            .unwrap();
        let row = store
            .revoke_join_token(join_token::id_of(&revoked.hash), 1002)
            .await
            .unwrap();
        assert_eq!(row.state(1003), TokenState::Revoked);
        assert!(matches!(
            consume(&store, &revoked.hash, 1003).await,
            Err(Error::TokenRevoked)
        ));

        assert!(matches!(
            consume(&store, &join_token::hash("vjt_nope"), 1003).await,
            Err(Error::TokenInvalid)
        ));
        let listed = store.list_join_tokens().await.unwrap();
        assert_eq!(listed.len(), 3);
        let states: Vec<TokenState> = listed.iter().map(|t| t.state(1003)).collect();
        assert!(states.contains(&TokenState::UsedUp) && states.contains(&TokenState::Expired));
        assert!(store.revoke_join_token("ffffffff", 1).await.is_err());
        // Revoking by the token itself works too.
        let by_value = join_token::generate().unwrap();
        store
            .insert_join_token(&by_value.hash, &labels, 1, 1000, 4600)
            .await
            .unwrap();
        let row = store
            .revoke_join_token(&by_value.token, 1004)
            .await
            .unwrap();
        assert_eq!(row.revoked_at, Some(1004));
    }
}
