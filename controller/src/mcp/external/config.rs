//! How an external MCP server is configured: `--mcp-server NAME=URL` (repeatable),
//! `--mcp-server-trusted NAME`, the bearer token in `VIGIL_MCP_SERVER_TOKEN_<NAME>`, or a
//! `[[mcp_servers]]` table of the configuration file with `name`, `url`, `trusted`,
//! `bearer_token` and `headers`. A name is what the model sees in `mcp__NAME__TOOL`.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::{Error, Result};

/// Longest server name.
const MAX_NAME: usize = 24;

/// One external MCP server.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// Lowercase letters, digits and `-` (at most 24): the `NAME` of `mcp__NAME__TOOL`.
    pub name: String,
    /// Its streamable HTTP endpoint (`http://` or `https://`).
    pub url: String,
    /// Its tools that say `readOnlyHint: true` are reads (run without a person); every
    /// other tool of every server is a write.
    #[serde(default)]
    pub trusted: bool,
    /// Sent as `Authorization: Bearer …`.
    #[serde(default)]
    pub bearer_token: Option<String>,
    /// Extra headers sent with every request (for example an API key header).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

/// The token and header values stay out of logs and `{:?}`.
impl std::fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConfig")
            .field("name", &self.name)
            .field("url", &self.url)
            .field("trusted", &self.trusted)
            .field("bearer_token", &self.bearer_token.as_ref().map(|_| "…"))
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl ServerConfig {
    /// Checks the name and URL.
    pub fn validate(&self) -> Result<()> {
        let name_ok = !self.name.is_empty()
            && self.name.len() <= MAX_NAME
            && self
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !name_ok {
            return Err(Error::Config(format!(
                "MCP server name {:?}: use 1-{MAX_NAME} lowercase letters, digits and '-'",
                self.name
            )));
        }
        if !(self.url.starts_with("http://") || self.url.starts_with("https://")) {
            return Err(Error::Config(format!(
                "MCP server {}: url {:?} must start with http:// or https://",
                self.name, self.url
            )));
        }
        Ok(())
    }
}

/// The servers of the flags and the file: `NAME=URL` flags (trusted when named in
/// `trusted`, their token from `token_of(NAME)`) after the file's tables; a name given
/// twice is refused.
pub fn servers(
    flags: &[String],
    trusted: &[String],
    file: Vec<ServerConfig>,
    token_of: impl Fn(&str) -> Option<String>,
) -> Result<Vec<ServerConfig>> {
    let mut all = file;
    for flag in flags {
        let (name, url) = flag
            .split_once('=')
            .ok_or_else(|| Error::Config(format!("--mcp-server {flag:?}: expected NAME=URL")))?;
        let name = name.trim().to_owned();
        all.push(ServerConfig {
            bearer_token: token_of(&name),
            url: url.trim().to_owned(),
            trusted: false,
            headers: BTreeMap::new(),
            name,
        });
    }
    for name in trusted {
        let server = all.iter_mut().find(|s| s.name == *name).ok_or_else(|| {
            Error::Config(format!(
                "--mcp-server-trusted {name}: no MCP server has that name"
            ))
        })?;
        server.trusted = true;
    }
    for (i, server) in all.iter().enumerate() {
        server.validate()?;
        if all[..i].iter().any(|s| s.name == server.name) {
            return Err(Error::Config(format!(
                "MCP server {} is configured twice",
                server.name
            )));
        }
    }
    Ok(all)
}

/// The environment variable of a server's bearer token.
pub fn token_variable(name: &str) -> String {
    format!(
        "VIGIL_MCP_SERVER_TOKEN_{}",
        name.to_ascii_uppercase().replace('-', "_")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_tables_trust_and_tokens_combine() {
        let file = vec![ServerConfig {
            name: "docs".into(),
            url: "https://docs.example/mcp".into(),
            trusted: false,
            bearer_token: None,
            headers: BTreeMap::from([("X-Key".into(), "k".into())]),
        }];
        let all = servers(
            &["tickets=http://127.0.0.1:9/mcp".into()],
            &["tickets".into()],
            file,
            |name| (name == "tickets").then(|| "t0k".into()),
        )
        .unwrap();
        assert_eq!(all.len(), 2);
        assert!(all[1].trusted && !all[0].trusted);
        assert_eq!(all[1].bearer_token.as_deref(), Some("t0k"));
        assert!(!format!("{all:?}").contains("t0k"));
        assert_eq!(token_variable("my-srv"), "VIGIL_MCP_SERVER_TOKEN_MY_SRV");
    }

    #[test]
    fn bad_names_urls_and_duplicates_are_refused() {
        for flag in [
            "x",
            "Bad=http://a",
            "a__b=http://a",
            "ok=ftp://a",
            "=http://a",
        ] {
            assert!(
                servers(&[flag.into()], &[], vec![], |_| None).is_err(),
                "{flag}"
            );
        }
        let twice = ["a=http://x".to_owned(), "a=http://y".to_owned()];
        assert!(servers(&twice, &[], vec![], |_| None).is_err());
        assert!(servers(&[], &["nobody".into()], vec![], |_| None).is_err());
    }
}
