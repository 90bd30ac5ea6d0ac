//! `POST /api/join-tokens` (admin): a join token and the ready-to-paste install line, with
//! the same limits as `vigil-controller token create`.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};

use super::install::InstallSite;
use super::json_body::JsonBody;
use super::{ApiState, Principal, Role};
use crate::clock::{rfc3339, unix_now};
use crate::pki::join_token;
use crate::{Error, Result};

/// The request body; every field is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateJoinToken {
    /// How many agents may enroll with it (default 1).
    pub uses: Option<u32>,
    /// How long it is valid: `90s`, `30m`, `1h`, at most `24h` (default 1h).
    pub ttl: Option<String>,
    /// Labels given to agents that enroll with it.
    pub labels: Option<BTreeMap<String, String>>,
}

/// The response: the token is shown once.
#[derive(Debug, Serialize)]
pub struct CreatedJoinToken {
    /// `vjt_…`.
    pub token: String,
    /// The short id `token list` shows.
    pub id: String,
    /// RFC 3339 expiry.
    pub expires_at: String,
    /// `curl … | sh -s -- …` to paste on the host.
    pub install: String,
}

/// Checks a request the way `token create` checks its flags; returns (uses, ttl, labels).
pub fn validate(body: &CreateJoinToken) -> Result<(u32, i64, BTreeMap<String, String>)> {
    let uses = body.uses.unwrap_or(1);
    if uses == 0 || uses > join_token::MAX_USES {
        return Err(Error::InvalidInput(format!(
            "uses must be between 1 and {}",
            join_token::MAX_USES
        )));
    }
    let ttl = match &body.ttl {
        Some(ttl) => join_token::parse_ttl(ttl)?,
        None => join_token::DEFAULT_TTL_S,
    };
    let pairs: Vec<String> = body
        .labels
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    Ok((uses, ttl, join_token::parse_labels(&pairs)?))
}

/// `POST /api/join-tokens`.
pub async fn create(
    State(state): State<ApiState>,
    Extension(site): Extension<Arc<InstallSite>>,
    Extension(principal): Extension<Principal>,
    JsonBody(body): JsonBody<CreateJoinToken>,
) -> Result<(StatusCode, Json<CreatedJoinToken>)> {
    if principal.role < Role::Admin {
        return Err(super::auth::forbidden(Role::Admin, principal.role));
    }
    let (uses, ttl, labels) = validate(&body)?;
    let token = join_token::generate()?;
    let now = unix_now();
    let row = state
        .agents
        .store()
        .insert_join_token(&token.hash, &labels, uses, now, now + ttl)
        .await?;
    tracing::info!(actor = %principal.name, id = %row.id, uses, ttl_s = ttl, "created a join token");
    crate::audit::record(
        state.agents.store(),
        crate::audit::Entry::new(&principal.name, "join_token.create", &row.id),
    )
    .await;
    Ok((
        StatusCode::CREATED,
        Json(CreatedJoinToken {
            install: site.install_line(&token.token),
            token: token.token,
            id: row.id,
            expires_at: rfc3339(row.expires_at),
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_validated_like_the_cli() {
        let (uses, ttl, labels) = validate(&CreateJoinToken::default()).unwrap();
        assert_eq!((uses, ttl, labels.len()), (1, join_token::DEFAULT_TTL_S, 0));
        let bad = |body: CreateJoinToken| validate(&body).unwrap_err().to_string();
        assert!(
            bad(CreateJoinToken {
                uses: Some(0),
                ..Default::default()
            })
            .contains("uses")
        );
        assert!(
            bad(CreateJoinToken {
                ttl: Some("25h".into()),
                ..Default::default()
            })
            .contains("24h")
        );
        let labels = BTreeMap::from([("bad key".to_owned(), "x".to_owned())]);
        assert!(
            bad(CreateJoinToken {
                labels: Some(labels),
                ..Default::default()
            })
            .contains("label key")
        );
        assert!(serde_json::from_str::<CreateJoinToken>(r#"{"usez":1}"#).is_err());
    }
}
