//! Join tokens: `vjt_<32 lowercase hex>` (128 random bits). Only the SHA-256 of a token is
//! stored; its id is the first 8 hex characters of that hash. Also the parsers for the
//! `token create` flags (TTL durations, `k=v` labels).

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use crate::{Error, Result};

/// Every join token starts with this.
pub const TOKEN_PREFIX: &str = "vjt_";
/// Default lifetime of a join token, in seconds.
pub const DEFAULT_TTL_S: i64 = 3600;
/// Longest lifetime of a join token, in seconds.
pub const MAX_TTL_S: i64 = 24 * 3600;
/// Most uses one token may allow.
pub const MAX_USES: u32 = 10_000;

/// A freshly generated token: the secret (shown once) and its stored hash.
#[derive(Debug, Clone)]
pub struct NewToken {
    /// `vjt_<32 hex>`, printed once and never stored.
    pub token: String,
    /// Lowercase hex SHA-256 of the token.
    pub hash: String,
}

/// Generates a new random token.
pub fn generate() -> Result<NewToken> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| Error::Certificate(format!("random token: {e}")))?;
    let token = format!("{TOKEN_PREFIX}{}", hex::encode(bytes));
    Ok(NewToken {
        hash: hash(&token),
        token,
    })
}

/// The stored form of a token: lowercase hex SHA-256.
pub fn hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// The short id shown by `token list`: the first 8 hex characters of the hash.
pub fn id_of(hash: &str) -> &str {
    hash.get(..8).unwrap_or(hash)
}

/// True when `value` has the shape of a token (`vjt_` and 32 lowercase hex characters).
pub fn is_well_formed(value: &str) -> bool {
    value.strip_prefix(TOKEN_PREFIX).is_some_and(|rest| {
        rest.len() == 32
            && rest
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// Parses a TTL such as `90s`, `30m`, `1h`, `1h30m` or `24h` into seconds; at most 24 h.
pub fn parse_ttl(value: &str) -> Result<i64> {
    let bad = || {
        Error::InvalidInput(format!(
            "invalid TTL {value:?}: use a number with a unit, for example 30m, 1h or 24h"
        ))
    };
    let mut total: i64 = 0;
    let mut digits = String::new();
    for c in value.trim().chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => return Err(bad()),
        };
        let n: i64 = digits.parse().map_err(|_| bad())?;
        total = n
            .checked_mul(unit)
            .and_then(|s| total.checked_add(s))
            .ok_or_else(bad)?;
        digits.clear();
    }
    if !digits.is_empty() || total == 0 {
        return Err(bad());
    }
    if total > MAX_TTL_S {
        return Err(Error::InvalidInput(format!(
            "TTL {value} is longer than the 24h maximum for join tokens"
        )));
    }
    Ok(total)
}

/// Parses `--label k=v` values into a map (keys: letters, digits, `.`, `_`, `-`, `/`).
pub fn parse_labels(values: &[String]) -> Result<BTreeMap<String, String>> {
    let mut labels = BTreeMap::new();
    for value in values {
        let (key, val) = value.split_once('=').ok_or_else(|| {
            Error::InvalidInput(format!("label {value:?} is not of the form key=value"))
        })?;
        let key_ok = !key.is_empty()
            && key.len() <= 63
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'));
        if !key_ok {
            return Err(Error::InvalidInput(format!(
                "label key {key:?} must be 1-63 letters, digits, '.', '_', '-' or '/'"
            )));
        }
        if val.len() > 255 || val.chars().any(char::is_control) {
            return Err(Error::InvalidInput(format!(
                "label value for {key:?} must be at most 255 characters without control characters"
            )));
        }
        labels.insert(key.to_owned(), val.to_owned());
    }
    Ok(labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_have_the_contract_shape() {
        let t = generate().unwrap();
        assert!(is_well_formed(&t.token), "{}", t.token);
        assert_eq!(t.hash, hash(&t.token));
        assert_eq!(id_of(&t.hash).len(), 8);
        assert_ne!(generate().unwrap().token, t.token);
        assert!(!is_well_formed("vjt_ABCDEF00000000000000000000000000"));
        assert!(!is_well_formed("vjt_00"));
    }

    #[test]
    fn ttls_parse_and_the_maximum_is_24h() {
        assert_eq!(parse_ttl("30m").unwrap(), 1800);
        assert_eq!(parse_ttl("1h").unwrap(), 3600);
        assert_eq!(parse_ttl("24h").unwrap(), 86_400);
        assert_eq!(parse_ttl("1h30m").unwrap(), 5400);
        assert_eq!(parse_ttl("1s").unwrap(), 1);
        let err = parse_ttl("25h").unwrap_err().to_string();
        assert!(err.contains("24h maximum"), "{err}");
        assert!(parse_ttl("2d").is_err());
        for bad in ["", "0m", "10", "h", "1x", "-1h", "99999999999999999999h"] {
            assert!(parse_ttl(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn labels_parse() {
        let labels = parse_labels(&["site=home".into(), "role=db".into()]).unwrap();
        assert_eq!(labels["site"], "home");
        assert!(parse_labels(&["novalue".into()]).is_err());
        assert!(parse_labels(&["bad key=x".into()]).is_err());
    }
}
