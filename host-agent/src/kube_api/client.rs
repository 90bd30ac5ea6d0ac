//! Requests to the API server: one HTTP/1.1 connection per request (the agent makes a
//! handful per scan), TLS through rustls, bounded in time (connect and answer) and size
//! (JSON bodies). A non-2xx answer becomes [`Error::Api`] with the server's `Status`.

use super::config::{Auth, Config};
use super::types::{ObjectList, Status, Version};
use super::{ApiError, Error, Result, tls};
use http_body_util::{BodyExt, Empty};
use hyper::body::{Bytes, Incoming};
use hyper::header::{ACCEPT, AUTHORIZATION, HOST, HeaderValue};
use hyper::{Request, Response, StatusCode, Uri};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use serde::de::DeserializeOwned;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tracing::debug;

/// Longest wait for a connection and the answer's head.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest wait for a whole JSON body.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(60);
/// Largest JSON body read (a page of 2,000 pods with all their fields fits).
pub const MAX_JSON_BYTES: usize = 128 << 20;
/// Largest error body read.
const MAX_ERROR_BYTES: usize = 64 << 10;
/// `Accept` for JSON.
pub const JSON: &str = "application/json";

/// A byte stream to the API server, plain or TLS.
pub trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

/// A client for one API server. Cheap to clone.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    url: Uri,
    auth: Auth,
    tls: Option<(TlsConnector, ServerName<'static>)>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("url", &self.inner.url)
            .field("auth", &self.inner.auth)
            .finish_non_exhaustive()
    }
}

/// Query parameters of a list.
#[derive(Debug, Clone, Default)]
pub struct ListParams {
    pub field_selector: Option<String>,
    pub limit: Option<u32>,
    pub continue_token: Option<String>,
}

/// `path?key=value&…`, values form-encoded.
pub fn with_query(path: &str, query: &[(&str, &str)]) -> String {
    if query.is_empty() {
        return path.to_owned();
    }
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (k, v) in query {
        q.append_pair(k, v);
    }
    format!("{path}?{}", q.finish())
}

/// One path segment, percent-encoded.
pub fn segment(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

/// Read a body up to `limit` bytes; more is an error.
pub async fn read_body(mut body: Incoming, limit: usize) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            if out.len() + data.len() > limit {
                return Err(Error::TooLarge(limit));
            }
            out.extend_from_slice(&data);
        }
    }
    Ok(out)
}

async fn timed<T>(limit: Duration, f: impl Future<Output = Result<T>>) -> Result<T> {
    tokio::time::timeout(limit, f)
        .await
        .map_err(|_| Error::Timeout(limit))?
}

impl Client {
    /// A client for `config` (TLS set up here; nothing is sent).
    pub fn new(config: Config) -> Result<Client> {
        let tls = match config.url.scheme_str() {
            Some("https") => Some((
                TlsConnector::from(tls::client_config(&config)?),
                tls::server_name(&config)?,
            )),
            _ => None,
        };
        Ok(Client {
            inner: Arc::new(Inner {
                url: config.url,
                auth: config.auth,
                tls,
            }),
        })
    }

    /// The API server's base URL.
    pub fn url(&self) -> &Uri {
        &self.inner.url
    }

    /// Whether requests go over TLS.
    pub fn is_tls(&self) -> bool {
        self.inner.tls.is_some()
    }

    /// `host:port` of the API server, as the `Host` header.
    pub fn authority(&self) -> String {
        let url = &self.inner.url;
        let host = url.host().unwrap_or_default();
        match url.port_u16() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_owned(),
        }
    }

    /// The base URL's path prefix joined with `path` (which starts with `/`).
    pub fn full_path(&self, path: &str) -> String {
        format!("{}{path}", self.inner.url.path().trim_end_matches('/'))
    }

    /// The `Authorization` header, if any (a token file is read now).
    pub fn authorization(&self) -> Result<Option<HeaderValue>> {
        let value = match &self.inner.auth {
            Auth::None => return Ok(None),
            Auth::Bearer(token) => format!("Bearer {token}"),
            Auth::TokenFile(path) => {
                let token = super::kubeconfig::read_bounded(path)?;
                format!("Bearer {}", token.trim())
            }
            Auth::Basic(pair) => format!("Basic {pair}"),
        };
        HeaderValue::from_str(&value)
            .map(Some)
            .map_err(|_| Error::Config("the credentials are not a valid header value".to_owned()))
    }

    /// A connection to the API server, TLS when the URL is `https`.
    pub async fn connect(&self) -> Result<Box<dyn Io>> {
        let url = &self.inner.url;
        let host = url
            .host()
            .unwrap_or_default()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let port = url
            .port_u16()
            .unwrap_or(if self.is_tls() { 443 } else { 80 });
        let tcp = TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|e| Error::Connect(self.authority(), e))?;
        let _ = tcp.set_nodelay(true);
        match &self.inner.tls {
            None => Ok(Box::new(tcp)),
            Some((connector, name)) => {
                let tls = connector
                    .connect(name.clone(), tcp)
                    .await
                    .map_err(|e| Error::Tls(self.authority(), e))?;
                Ok(Box::new(tls))
            }
        }
    }

    /// `GET path_and_query` with `Accept: accept`; the answer's head once it is a 2xx.
    pub async fn get(&self, path_and_query: &str, accept: &str) -> Result<Response<Incoming>> {
        let response = timed(ANSWER_TIMEOUT, self.send(path_and_query, accept)).await?;
        if response.status().is_success() {
            return Ok(response);
        }
        Err(api_error(response).await)
    }

    async fn send(&self, path_and_query: &str, accept: &str) -> Result<Response<Incoming>> {
        let io = self.connect().await?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io)).await?;
        tokio::spawn(async move {
            if let Err(error) = conn.await {
                debug!(%error, "kubernetes API connection ended");
            }
        });
        let mut request = Request::get(self.full_path(path_and_query))
            .header(HOST, self.authority())
            .header(ACCEPT, accept)
            .header(
                "User-Agent",
                concat!("vigil-agent/", env!("CARGO_PKG_VERSION")),
            );
        if let Some(auth) = self.authorization()? {
            request = request.header(AUTHORIZATION, auth);
        }
        let request = request
            .body(Empty::<Bytes>::new())
            .map_err(|e| Error::Config(format!("bad request {path_and_query:?}: {e}")))?;
        Ok(sender.send_request(request).await?)
    }

    /// `GET` a JSON document.
    pub async fn get_json<T: DeserializeOwned>(&self, path_and_query: &str) -> Result<T> {
        self.get_json_as(path_and_query, JSON).await
    }

    /// `GET` a JSON document, asking for it with `accept`.
    pub async fn get_json_as<T: DeserializeOwned>(
        &self,
        path_and_query: &str,
        accept: &str,
    ) -> Result<T> {
        let response = self.get(path_and_query, accept).await?;
        let body = timed(
            BODY_TIMEOUT,
            read_body(response.into_body(), MAX_JSON_BYTES),
        )
        .await?;
        Ok(serde_json::from_slice(&body)?)
    }

    /// [`Client::get_json`], with a 404 as `None`.
    pub async fn get_opt<T: DeserializeOwned>(&self, path_and_query: &str) -> Result<Option<T>> {
        match self.get_json(path_and_query).await {
            Ok(found) => Ok(Some(found)),
            Err(Error::Api(e)) if e.code == 404 => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// One page of a list across all namespaces (`path` like `/api/v1/pods`).
    pub async fn list<T: DeserializeOwned>(
        &self,
        path: &str,
        params: &ListParams,
    ) -> Result<ObjectList<T>> {
        let limit = params.limit.map(|l| l.to_string());
        let mut query: Vec<(&str, &str)> = Vec::new();
        if let Some(fs) = &params.field_selector {
            query.push(("fieldSelector", fs));
        }
        if let Some(limit) = &limit {
            query.push(("limit", limit));
        }
        if let Some(token) = &params.continue_token {
            query.push(("continue", token));
        }
        self.get_json(&with_query(path, &query)).await
    }

    /// `GET /version`.
    pub async fn apiserver_version(&self) -> Result<Version> {
        self.get_json("/version").await
    }
}

/// The error a non-2xx answer stands for, with the server's `Status` message if it sent one.
pub async fn api_error(response: Response<Incoming>) -> Error {
    let code = response.status();
    let body = timed(
        ANSWER_TIMEOUT,
        read_body(response.into_body(), MAX_ERROR_BYTES),
    )
    .await
    .unwrap_or_default();
    Error::Api(api_error_from(code, &body))
}

/// An [`ApiError`] from a status code and the body that came with it.
pub fn api_error_from(code: StatusCode, body: &[u8]) -> ApiError {
    let status: Status = serde_json::from_slice(body).unwrap_or_default();
    let text = String::from_utf8_lossy(body);
    let message = status.message.filter(|m| !m.is_empty()).unwrap_or_else(|| {
        let text = text.trim();
        if text.is_empty() {
            code.canonical_reason().unwrap_or("error").to_owned()
        } else {
            text.chars().take(300).collect()
        }
    });
    ApiError {
        code: code.as_u16(),
        message,
        reason: status.reason.unwrap_or_default(),
    }
}
