//! `@name` words in a message: extracted here, and each resolved through
//! `GET /api/resources?q=` to the resource whose id, name or alias it names exactly. Those
//! go in the request's `mentions`; the others stay in the text for the server's own
//! resolution.

use serde_json::Value;
use tracing::debug;

use super::api::ChatApi;

/// Characters that end a sentence rather than a name (`how is @web?`).
const TRAILING: &[char] = &['.', ',', ';', ':', '!', '?', ')', ']', '}', '"', '\'', '`'];

/// The `@name` words of `text`, without the `@` and trailing punctuation, deduplicated in
/// order. An `@` inside a word (an email address) is not a mention.
pub fn extract(text: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        let Some(name) = word.strip_prefix('@') else {
            continue;
        };
        let name = name.trim_end_matches(TRAILING);
        if !name.is_empty() && !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    }
    names
}

/// The id of the row that `name` names exactly: its id, or (ignoring ASCII case) its name
/// or one of its aliases.
pub fn exact_match(name: &str, rows: &[Value]) -> Option<String> {
    let same = |v: &Value| v.as_str().is_some_and(|s| s.eq_ignore_ascii_case(name));
    rows.iter()
        .find(|r| r["id"].as_str() == Some(name))
        .or_else(|| rows.iter().find(|r| same(&r["name"])))
        .or_else(|| {
            rows.iter().find(|r| {
                r["aliases"]
                    .as_array()
                    .is_some_and(|aliases| aliases.iter().any(same))
            })
        })
        .and_then(|r| r["id"].as_str().map(str::to_owned))
}

/// The resource ids of the `@name` words in `text` that match a resource exactly. A
/// failed look-up is logged and skipped: the server resolves names in the text too.
pub async fn resolve(api: &ChatApi, text: &str) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for name in extract(text) {
        match api.resources(&name).await {
            Ok(rows) => {
                if let Some(id) = exact_match(&name, &rows)
                    && !ids.contains(&id)
                {
                    ids.push(id);
                }
            }
            Err(error) => debug!(%error, mention = %name, "resolving a mention failed"),
        }
    }
    ids
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn extracts_mentions_without_punctuation() {
        assert_eq!(
            extract("is @web up? check @lxc:delly:141, @web and me@example.com @ @."),
            ["web", "lxc:delly:141"]
        );
        assert!(extract("/read host uptime").is_empty());
    }

    #[test]
    fn matches_by_id_name_or_alias_only_exactly() {
        let rows = vec![
            json!({"id": "lxc:delly:141", "name": "web-1", "aliases": ["www"]}),
            json!({"id": "host:abc", "name": "web", "aliases": []}),
        ];
        assert_eq!(exact_match("web", &rows).as_deref(), Some("host:abc"));
        assert_eq!(exact_match("WWW", &rows).as_deref(), Some("lxc:delly:141"));
        assert_eq!(
            exact_match("lxc:delly:141", &rows).as_deref(),
            Some("lxc:delly:141")
        );
        assert_eq!(exact_match("we", &rows), None);
        assert_eq!(exact_match("web", &[]), None);
    }
}
