//! `GET /api/audit?since=<seq or RFC 3339>&limit=` (admin): rows of the audit chain;
//! `GET /api/audit/verify` (admin): the chain's verification state.

use axum::Json;
use axum::extract::{Query, State};
use serde::Deserialize;

use super::ApiState;
use crate::audit::AuditRow;
use crate::audit::Since;
use crate::{Error, Result};

/// Default and largest page.
const DEFAULT_LIMIT: i64 = 100;
const MAX_LIMIT: i64 = 1000;

/// The query.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditQuery {
    /// A sequence number (rows after it) or an RFC 3339 time (rows at or after it).
    pub since: Option<String>,
    /// At most this many rows (default 100, at most 1000).
    pub limit: Option<i64>,
}

/// Parses `since`: a number is a sequence number, anything else an RFC 3339 time.
pub fn parse_since(text: Option<&str>) -> Result<Since> {
    let Some(text) = text.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(Since::Seq(0));
    };
    if let Ok(seq) = text.parse::<i64>() {
        return Ok(Since::Seq(seq));
    }
    let at = time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .map_err(|_| {
            Error::InvalidInput(format!(
                "since {text:?} is neither a sequence number nor an RFC 3339 time"
            ))
        })?;
    Ok(Since::At(at.unix_timestamp()))
}

/// `GET /api/audit`.
pub async fn list(
    State(state): State<ApiState>,
    Query(query): Query<AuditQuery>,
) -> Result<Json<Vec<AuditRow>>> {
    let since = parse_since(query.since.as_deref())?;
    let limit = query.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(Error::InvalidInput(format!(
            "limit {limit} must be between 1 and {MAX_LIMIT}"
        )));
    }
    Ok(Json(state.audit.list(since, limit).await?))
}

/// `GET /api/audit/verify`: `{intact: true, rows}` or `{intact: false, broken_seq, why}`.
pub async fn verify(State(state): State<ApiState>) -> Result<Json<serde_json::Value>> {
    let result = state.audit.verify().await?;
    Ok(Json(match result {
        Ok(rows) => serde_json::json!({ "intact": true, "rows": rows }),
        Err(broken) => serde_json::json!({
            "intact": false,
            "broken_seq": broken.seq,
            "why": broken.why,
        }),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_is_a_seq_or_a_time() {
        assert_eq!(parse_since(Some("12")).unwrap(), Since::Seq(12));
        assert_eq!(
            parse_since(Some("1970-01-01T00:01:00Z")).unwrap(),
            Since::At(60)
        );
        assert!(parse_since(Some("yesterday")).is_err());
    }
}
