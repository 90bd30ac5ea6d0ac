//! Issuing join tokens, the one way in for a new agent. `vigil-controller token create`,
//! `POST /api/join-tokens` and `serve --local-agent` all issue through [`issue`]: it checks
//! the limits, stores only the token's hash and records the issue in the audit log. The
//! token's format and the flags' parsers are in [`crate::pki::join_token`].

use std::collections::BTreeMap;

use crate::audit::{self, Entry};
use crate::clock::unix_now;
use crate::pki::join_token::{self, MAX_USES, NewToken};
use crate::store::Store;
use crate::store::tokens::JoinTokenRow;
use crate::{Error, Result};

/// What to issue.
#[derive(Debug, Clone)]
pub struct JoinTokenRequest {
    /// How many agents may enroll with it (1 to [`MAX_USES`]).
    pub uses: u32,
    /// Seconds it is valid.
    pub ttl_s: i64,
    /// Labels given to the agents that enroll with it.
    pub labels: BTreeMap<String, String>,
}

/// A token just issued: the secret (shown once) and its stored row.
#[derive(Debug, Clone)]
pub struct Issued {
    /// The token and its hash.
    pub token: NewToken,
    /// What the store keeps.
    pub row: JoinTokenRow,
}

/// Refuses a use count outside 1 to [`MAX_USES`]; `what` names it the way the caller
/// took it (`--uses`, `uses`).
pub fn check_uses(what: &str, uses: u32) -> Result<u32> {
    if uses == 0 || uses > MAX_USES {
        return Err(Error::InvalidInput(format!(
            "{what} must be between 1 and {MAX_USES}"
        )));
    }
    Ok(uses)
}

/// Generates a token, stores its hash with `request`'s limits and audits it as `actor`.
pub async fn issue(store: &Store, request: JoinTokenRequest, actor: &str) -> Result<Issued> {
    let uses = check_uses("uses", request.uses)?;
    let token = join_token::generate()?;
    let now = unix_now();
    let row = store
        .insert_join_token(&token.hash, &request.labels, uses, now, now + request.ttl_s)
        .await?;
    tracing::info!(%actor, id = %row.id, uses, ttl_s = request.ttl_s, "issued a join token");
    audit::record(store, Entry::new(actor, "join_token.create", &row.id)).await;
    Ok(Issued { token, row })
}
