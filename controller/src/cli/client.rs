//! The CLI's client of the controller's HTTP API: `--url` (or `VIGIL_URL`), and the token
//! from `VIGIL_TOKEN` or `<data-dir>/admin.token`. API errors come back as
//! [`Error::Api`] with the server's code, message and details.

use clap::Args;
use reqwest::{Method, RequestBuilder, Response};
use serde::de::DeserializeOwned;

use crate::config::{DEFAULT_URL, DataDirArg, ENV_TOKEN, ENV_URL};
use crate::data_dir::{ADMIN_TOKEN, DataDir};
use crate::error::ApiErrorBody;
use crate::{Error, Result};

/// Where the controller is and how to find the API token.
#[derive(Debug, Clone, Args)]
pub struct ClientArgs {
    /// The controller's HTTP API.
    #[arg(long, env = ENV_URL, default_value = DEFAULT_URL, value_name = "URL")]
    pub url: String,
    /// Where to read admin.token when VIGIL_TOKEN is not set.
    #[command(flatten)]
    pub data_dir: DataDirArg,
}

/// The API token: `VIGIL_TOKEN`, or `admin.token` in `--data-dir`.
pub fn token(args: &ClientArgs) -> Result<String> {
    match std::env::var(ENV_TOKEN) {
        Ok(token) if !token.trim().is_empty() => Ok(token.trim().to_owned()),
        _ => {
            let dir = DataDir::new(&args.data_dir.data_dir);
            dir.read_optional(ADMIN_TOKEN)?
                .map(|t| t.trim().to_owned())
                .filter(|t| !t.is_empty())
                .ok_or_else(|| {
                    Error::Config(format!(
                        "no API token: set {ENV_TOKEN} or point --data-dir at the controller's directory ({} not found)",
                        dir.path(ADMIN_TOKEN).display()
                    ))
                })
        }
    }
}

/// An authenticated client of one controller.
#[derive(Debug, Clone)]
pub struct ApiClient {
    base: String,
    token: String,
    http: reqwest::Client,
}

impl ApiClient {
    /// A client for `args.url` with the token from the environment or the data directory.
    pub fn new(args: &ClientArgs) -> Result<Self> {
        let token = token(args)?;
        let http = reqwest::Client::builder()
            .build()
            .map_err(|source| Error::Http {
                url: args.url.clone(),
                source,
            })?;
        Ok(ApiClient {
            base: args.url.trim_end_matches('/').to_owned(),
            token,
            http,
        })
    }

    /// A request to `path` with the bearer token.
    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token)
    }

    /// Sends a request; an answer other than 2xx becomes [`Error::Api`].
    pub async fn send(&self, request: RequestBuilder) -> Result<Response> {
        let response = request.send().await.map_err(|source| Error::Http {
            url: self.base.clone(),
            source,
        })?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let text = response.text().await.unwrap_or_default();
        Err(match serde_json::from_str::<ApiErrorBody>(&text) {
            Ok(body) => Error::Api {
                status: status.as_u16(),
                code: body.error.code,
                message: body.error.message,
                details: body.error.details,
            },
            Err(_) => Error::Api {
                status: status.as_u16(),
                code: "HTTP_ERROR".into(),
                message: format!("the controller answered {status}: {}", text.trim()),
                details: serde_json::Value::Null,
            },
        })
    }

    /// Sends a request whose answer is `text/event-stream`; its events as they arrive
    /// (`eventsource-stream`). A transport failure or a body that is not an event stream
    /// ends the stream with the error.
    pub async fn events(
        &self,
        request: RequestBuilder,
    ) -> Result<impl futures_util::Stream<Item = Result<eventsource_stream::Event>> + use<>> {
        use eventsource_stream::{EventStreamError, Eventsource};
        use futures_util::StreamExt;
        let response = self
            .send(request.header(reqwest::header::ACCEPT, "text/event-stream"))
            .await?;
        let url = self.base.clone();
        Ok(response
            .bytes_stream()
            .eventsource()
            .map(move |event| match event {
                Ok(event) => Ok(event),
                Err(EventStreamError::Transport(source)) => Err(Error::Http {
                    url: url.clone(),
                    source,
                }),
                Err(other) => Err(Error::Network(format!(
                    "the controller's answer is not an event stream: {other}"
                ))),
            }))
    }

    /// Sends a request and decodes its JSON answer.
    pub async fn json<T: DeserializeOwned>(&self, request: RequestBuilder) -> Result<T> {
        let response = self.send(request).await?;
        response.json().await.map_err(|source| Error::Http {
            url: self.base.clone(),
            source,
        })
    }
}
