//! Who a request comes from: API bearer tokens as a service. [`Access::authenticate`]
//! turns a token into a [`Principal`] (the token's name and role) for the HTTP API's role
//! check and the gRPC chat service alike; the assistant and the audit log name callers by
//! the same type. Tokens live hashed in the store ([`crate::store::api_tokens`]).

use crate::clock::unix_now;
use crate::roles::Role;
use crate::store::Store;
use crate::{Error, Result};

/// Who made a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The token's name: the actor in logs and the audit log.
    pub name: String,
    /// The role.
    pub role: Role,
}

/// What separates the token's name from the client's in the actor of an MCP call.
const MCP_ACTOR: &str = " via MCP (";

/// The actor of a call an MCP client made with the token named `token`: `<token> via MCP
/// (<client>)`, in the audit trail and on the approvals it raises.
pub fn mcp_actor(token: &str, client: &str) -> String {
    format!("{token}{MCP_ACTOR}{client})")
}

/// True when `created_by` is the actor of an MCP call made with the token named `token`
/// (that token may not approve what it requested).
pub fn requested_through_mcp_by(created_by: &str, token: &str) -> bool {
    created_by
        .strip_prefix(token)
        .is_some_and(|rest| rest.starts_with(MCP_ACTOR))
}

/// API tokens, checked against the store.
#[derive(Debug, Clone)]
pub struct Access {
    store: Store,
}

impl Access {
    /// Tokens kept in `store`.
    pub fn new(store: Store) -> Self {
        Access { store }
    }

    /// The principal `token` names; an unknown, expired or revoked token is
    /// `UNAUTHENTICATED`.
    pub async fn authenticate(&self, token: &str) -> Result<Principal> {
        let found = self
            .store
            .authenticate(token, unix_now())
            .await?
            .ok_or_else(|| Error::Unauthenticated("invalid bearer token".into()))?;
        Ok(Principal {
            name: found.name,
            role: found.role,
        })
    }

    /// Makes the content of `admin.token` an admin API token named `admin` (stored hashed;
    /// a no-op when it already is).
    pub async fn register_admin(&self, token: &str) -> Result<()> {
        self.store
            .insert_api_token(token, "admin", Role::Admin, unix_now())
            .await
            .map(|_| ())
    }
}
