//! Bearer-token authentication and role checks of the HTTP API, over the token service
//! ([`crate::access`]); `<data-dir>/admin.token` holds the first admin token, stored like
//! any other. [`require_role`] guards each route group: no or an unknown token is 401, too
//! low a role is 403 `FORBIDDEN`.

use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::Response;
use serde_json::json;

use super::ApiState;
pub use crate::access::Principal;
use crate::data_dir::{ADMIN_TOKEN, DataDir};
use crate::error::ApiCode;
pub use crate::roles::Role;
use crate::store::api_tokens::generate_token;
use crate::{Error, Result};

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
    let token = generate_token()?;
    dir.write_private(ADMIN_TOKEN, format!("{token}\n").as_bytes())?;
    Ok((token, true))
}

fn bearer(request: &Request) -> Result<&str> {
    let header = request.headers().get(AUTHORIZATION).ok_or_else(|| {
        Error::Unauthenticated("missing bearer token (Authorization: Bearer <token>)".into())
    })?;
    header
        .to_str()
        .ok()
        .and_then(|value| {
            let (scheme, token) = value.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        })
        .ok_or_else(|| {
            Error::Unauthenticated("the Authorization header is not a bearer token".into())
        })
}

/// The 403 of a role check.
pub fn forbidden(needed: Role, has: Role) -> Error {
    Error::coded_with(
        ApiCode::Forbidden,
        format!("this needs the {needed} role; the token has {has}"),
        json!({ "required_role": needed, "role": has }),
    )
}

/// Middleware: answers `503 REPLICA_FENCED` while this replica is fenced (every route
/// behind a token needs the database), then authenticates the bearer token (401), checks
/// that its role is at least the route group's (403) and attaches the [`Principal`].
pub async fn require_role(
    State((state, needed)): State<(ApiState, Role)>,
    mut request: Request,
    next: Next,
) -> Result<Response> {
    state.cluster.ensure_not_fenced()?;
    let token = bearer(&request)?;
    let found = state.access.authenticate(token).await?;
    if found.role < needed {
        tracing::info!(token = %found.name, role = %found.role, needed = %needed, "role too low");
        return Err(forbidden(needed, found.role));
    }
    request.extensions_mut().insert(found);
    Ok(next.run(request).await)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_are_ordered_and_parse() {
        assert!(Role::Viewer < Role::Operator && Role::Operator < Role::Admin);
        assert_eq!("Operator".parse::<Role>().unwrap(), Role::Operator);
        assert!("root".parse::<Role>().is_err());
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
