//! Bearer-token authentication of the HTTP API. Today one token, the content of
//! `<data-dir>/admin.token`, with the role `admin`; the roles issue adds hashed API tokens
//! and checks the [`Principal`] this middleware attaches to each request.

use std::fmt;

use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::Response;
use sha2::{Digest, Sha256};

use super::ApiState;
use crate::data_dir::{ADMIN_TOKEN, DataDir};
use crate::{Error, Result};

/// Roles, lowest first (only `Admin` exists until the roles issue).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// May read.
    Viewer,
    /// May approve writes.
    Operator,
    /// May do everything.
    Admin,
}

/// Who made a request, attached to the request's extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// A name for logs (`admin`).
    pub name: String,
    /// The role.
    pub role: Role,
}

/// The admin token, kept only as its SHA-256.
#[derive(Clone)]
pub struct AdminAuth {
    digest: [u8; 32],
}

impl fmt::Debug for AdminAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AdminAuth(..)")
    }
}

impl AdminAuth {
    /// Accepts exactly `token`.
    pub fn new(token: &str) -> Self {
        AdminAuth {
            digest: Sha256::digest(token.trim().as_bytes()).into(),
        }
    }

    /// True when `presented` is the token; the comparison takes the same time whatever
    /// the input (both sides are hashed, then compared without an early exit).
    pub fn check(&self, presented: &str) -> bool {
        let digest: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        digest
            .iter()
            .zip(self.digest.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
    }
}

/// Reads `admin.token`, creating it (`vat_` and 64 hex characters, mode 0600) on first
/// start. Returns the token and whether it was created.
pub fn load_or_create_admin_token(dir: &DataDir) -> Result<(String, bool)> {
    let _lock = dir.lock()?;
    if let Some(text) = dir.read_optional(ADMIN_TOKEN)? {
        let token = text.trim().to_owned();
        if !token.is_empty() {
            return Ok((token, false));
        }
    }
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| Error::Certificate(format!("random token: {e}")))?;
    let token = format!("vat_{}", hex::encode(bytes));
    dir.write_private(ADMIN_TOKEN, format!("{token}\n").as_bytes())?;
    Ok((token, true))
}

/// Middleware: refuses requests without the right bearer token (401), attaches the
/// [`Principal`] otherwise.
pub async fn require_token(
    State(state): State<ApiState>,
    mut request: Request,
    next: Next,
) -> Result<Response> {
    let header = request.headers().get(AUTHORIZATION).ok_or_else(|| {
        Error::Unauthenticated("missing bearer token (Authorization: Bearer <token>)".into())
    })?;
    let token = header
        .to_str()
        .ok()
        .and_then(|value| {
            let (scheme, token) = value.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        })
        .ok_or_else(|| {
            Error::Unauthenticated("the Authorization header is not a bearer token".into())
        })?;
    if !state.auth.check(token) {
        return Err(Error::Unauthenticated("invalid bearer token".into()));
    }
    request.extensions_mut().insert(Principal {
        name: "admin".into(),
        role: Role::Admin,
    });
    Ok(next.run(request).await)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_token_passes() {
        let auth = AdminAuth::new("vat_abc\n");
        assert!(auth.check("vat_abc"));
        assert!(!auth.check("vat_abd"));
        assert!(!auth.check(""));
    }

    #[test]
    fn the_admin_token_is_created_once() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path());
        let (token, created) = load_or_create_admin_token(&dir).unwrap();
        assert!(created && token.starts_with("vat_") && token.len() == 68);
        let (again, created) = load_or_create_admin_token(&dir).unwrap();
        assert_eq!((again.as_str(), created), (token.as_str(), false));
    }
}
