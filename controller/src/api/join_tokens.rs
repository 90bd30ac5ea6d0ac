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
use crate::Result;
use crate::agents::join_tokens::{Issued, JoinTokenRequest, check_uses};
use crate::clock::rfc3339;
use crate::pki::join_token;

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

/// Checks a request the way `token create` checks its flags.
pub fn validate(body: &CreateJoinToken) -> Result<JoinTokenRequest> {
    let uses = check_uses("uses", body.uses.unwrap_or(1))?;
    let ttl_s = match &body.ttl {
        Some(ttl) => join_token::parse_ttl(ttl)?,
        None => join_token::DEFAULT_TTL_S,
    };
    let pairs: Vec<String> = body
        .labels
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    Ok(JoinTokenRequest {
        uses,
        ttl_s,
        labels: join_token::parse_labels(&pairs)?,
    })
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
    let Issued { token, row } = state
        .agents
        .issue_join_token(validate(&body)?, &principal.name)
        .await?;
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
        let request = validate(&CreateJoinToken::default()).unwrap();
        assert_eq!(
            (request.uses, request.ttl_s, request.labels.len()),
            (1, join_token::DEFAULT_TTL_S, 0)
        );
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
