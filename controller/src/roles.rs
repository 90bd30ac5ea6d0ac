//! API roles, lowest first (viewer < operator < admin), below the HTTP layer: the store
//! keeps them with API tokens and the assistant checks them for control levels.

use std::fmt;
use std::str::FromStr;

use crate::{Error, Result};

/// Roles, lowest first: each may do what the lower ones may.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// May read (agents, remote reads).
    Viewer,
    /// May also decide approvals.
    Operator,
    /// May do everything: revoke, audit, raw execution.
    Admin,
}

impl Role {
    /// The stored and displayed name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Operator => "operator",
            Role::Admin => "admin",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = Error;

    fn from_str(s: &str) -> Result<Role> {
        match s.trim().to_ascii_lowercase().as_str() {
            "viewer" => Ok(Role::Viewer),
            "operator" => Ok(Role::Operator),
            "admin" => Ok(Role::Admin),
            other => Err(Error::InvalidInput(format!(
                "unknown role {other:?} (viewer, operator or admin)"
            ))),
        }
    }
}

/// A stored role (the store maps the `role` column through this).
impl TryFrom<String> for Role {
    type Error = Error;

    fn try_from(text: String) -> Result<Role> {
        text.parse()
    }
}
