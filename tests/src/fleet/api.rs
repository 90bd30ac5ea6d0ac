//! The few HTTP API calls the simulator makes: join tokens (admin), the agent list and the
//! fan-out (for `measure`).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::{Error, Result};

/// How long one API call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// A join token and where it is used, from `POST /api/join-tokens`.
#[derive(Debug, Clone)]
pub struct JoinToken {
    /// `vjt_…`.
    pub token: String,
    /// The gateway the install line names, `https://HOST:PORT`.
    pub gateway: Option<String>,
    /// The CA pin the install line names, `sha256:<hex>`.
    pub ca_fingerprint: Option<String>,
}

/// A bearer-token client of one controller's HTTP API.
#[derive(Debug, Clone)]
pub struct ApiClient {
    base: String,
    token: String,
    http: reqwest::Client,
}

impl ApiClient {
    /// A client of `url` (`http://` or `https://`, trusting `ca` for the latter).
    pub fn new(url: &str, token: &str, ca: Option<&Path>) -> Result<ApiClient> {
        let base = url.trim().trim_end_matches('/').to_owned();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(Error::Usage(format!(
                "--url {url:?} must be the controller's HTTP API, http(s)://HOST:PORT"
            )));
        }
        let mut builder = reqwest::Client::builder().timeout(CALL_TIMEOUT);
        if let Some(path) = ca {
            let pem = std::fs::read(path)
                .map_err(|e| Error::Usage(format!("--http-ca {}: {e}", path.display())))?;
            let cert = reqwest::Certificate::from_pem(&pem)
                .map_err(|e| Error::Usage(format!("--http-ca {}: {e}", path.display())))?;
            builder = builder.add_root_certificate(cert);
        }
        let http = builder.build().map_err(|e| Error::Usage(e.to_string()))?;
        Ok(ApiClient {
            base,
            token: token.trim().to_owned(),
            http,
        })
    }

    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(u16, Value)> {
        let what = format!("{method} {path}");
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .header("accept", "application/json");
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.map_err(|e| Error::Api {
            call: what.clone(),
            message: e.to_string(),
        })?;
        let status = response.status().as_u16();
        let text = response.text().await.map_err(|e| Error::Api {
            call: what.clone(),
            message: e.to_string(),
        })?;
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Ok((status, value))
    }

    /// Creates a join token for `uses` agents, valid for an hour.
    pub async fn create_join_token(
        &self,
        uses: u32,
        labels: &BTreeMap<String, String>,
    ) -> Result<JoinToken> {
        let body = json!({"uses": uses, "ttl": "1h", "labels": labels});
        let (status, value) = self
            .call(reqwest::Method::POST, "/api/join-tokens", Some(&body))
            .await?;
        if status != 201 {
            return Err(Error::Api {
                call: "POST /api/join-tokens".into(),
                message: format!("{status}: {value}"),
            });
        }
        let token = value["token"].as_str().unwrap_or_default().to_owned();
        if token.is_empty() {
            return Err(Error::Api {
                call: "POST /api/join-tokens".into(),
                message: format!("no token in the answer: {value}"),
            });
        }
        let install = value["install"].as_str().unwrap_or_default();
        Ok(JoinToken {
            token,
            gateway: flag_value(install, "--url"),
            ca_fingerprint: flag_value(install, "--ca-fingerprint"),
        })
    }

    /// `GET /api/agents`: the whole list.
    pub async fn agents(&self) -> Result<Vec<Value>> {
        let (status, value) = self.call(reqwest::Method::GET, "/api/agents", None).await?;
        match value {
            Value::Array(list) if status == 200 => Ok(list),
            other => Err(Error::Api {
                call: "GET /api/agents".into(),
                message: format!("{status}: {other}"),
            }),
        }
    }

    /// `POST /api/exec/fanout` to every agent, as JSON; `None` when the controller has no
    /// such route (404).
    pub async fn fanout_all(&self, command: &str) -> Result<Option<Value>> {
        let body = json!({"all": true, "command": command});
        let (status, value) = self
            .call(reqwest::Method::POST, "/api/exec/fanout", Some(&body))
            .await?;
        match status {
            200 => Ok(Some(value)),
            404 | 405 => Ok(None),
            _ => Err(Error::Api {
                call: "POST /api/exec/fanout".into(),
                message: format!("{status}: {value}"),
            }),
        }
    }
}

/// The word after `flag` in an install line (`… --url https://h:8641 --token …`).
pub fn flag_value(line: &str, flag: &str) -> Option<String> {
    let mut words = line.split_whitespace();
    words.find(|w| *w == flag)?;
    words.next().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_gateway_and_pin_of_an_install_line() {
        let line = "curl -fsSL http://h:8640/install.sh | sh -s -- --controller http://h:8640 \
                    --insecure-http-ok --url https://h:8641 --token vjt_x --ca-fingerprint sha256:ab";
        assert_eq!(flag_value(line, "--url").as_deref(), Some("https://h:8641"));
        assert_eq!(
            flag_value(line, "--ca-fingerprint").as_deref(),
            Some("sha256:ab")
        );
        assert_eq!(flag_value(line, "--missing"), None);
        assert_eq!(flag_value("ends with --url", "--url"), None);
    }

    #[test]
    fn only_http_urls_are_accepted() {
        assert!(ApiClient::new("http://127.0.0.1:8640/", "t", None).is_ok());
        let error = ApiClient::new("h:8640", "t", None).unwrap_err().to_string();
        assert!(error.contains("http(s)://HOST:PORT"), "{error}");
    }
}
