//! Sending one model call: the HTTP client, and retries with exponential backoff on 429,
//! 5xx and connection failures (honouring `Retry-After`), only before the answer streams.

use std::time::Duration;

use reqwest::{RequestBuilder, Response, StatusCode};
use tracing::{debug, warn};

use super::{LlmConfig, LlmError, truncate};

/// Longest wait between two attempts, whatever `Retry-After` says.
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(30);
/// Wait before the first retry when the server gives no `Retry-After`; doubles each time.
pub const FIRST_RETRY_DELAY: Duration = Duration::from_millis(500);
/// How much of an error body goes into [`LlmError::Http`].
pub const ERROR_BODY_CHARS: usize = 500;

/// The HTTP client for `config`: connect timeout, and the system's root certificates for
/// `https://` APIs (the workspace builds reqwest without built-in roots).
pub fn http_client(config: &LlmConfig) -> Result<reqwest::Client, LlmError> {
    let mut builder = reqwest::Client::builder().connect_timeout(config.connect_timeout);
    if config.base_url.trim_start().starts_with("https:") {
        let loaded = rustls_native_certs::load_native_certs();
        if loaded.certs.is_empty() {
            warn!(
                errors = loaded.errors.len(),
                "no system root certificates found for the model API"
            );
        }
        for der in loaded.certs {
            if let Ok(cert) = reqwest::Certificate::from_der(&der) {
                builder = builder.add_root_certificate(cert);
            }
        }
    }
    builder
        .build()
        .map_err(|e| LlmError::NotConfigured(format!("cannot build the HTTP client: {e}")))
}

/// The outcome of one attempt.
enum Attempt {
    Accepted(Response),
    Retry(LlmError, Option<Duration>),
    Fail(LlmError),
}

/// Sends the request `build` makes until the server accepts it (2xx) or retries run out.
pub async fn send(
    config: &LlmConfig,
    build: impl Fn() -> RequestBuilder,
) -> Result<Response, LlmError> {
    let mut retries = 0;
    loop {
        let (error, retry_after) = match attempt(config, build()).await {
            Attempt::Accepted(response) => return Ok(response),
            Attempt::Fail(error) => return Err(error),
            Attempt::Retry(error, retry_after) => (error, retry_after),
        };
        if retries >= config.max_retries {
            return Err(error);
        }
        let delay = retry_after
            .unwrap_or_else(|| backoff(retries))
            .min(MAX_RETRY_DELAY);
        retries += 1;
        warn!(%error, retry = retries, max_retries = config.max_retries,
              delay_ms = delay.as_millis() as u64, "model call failed; retrying");
        tokio::time::sleep(delay).await;
    }
}

/// The wait before retry number `retries + 1` without `Retry-After`.
pub fn backoff(retries: u32) -> Duration {
    FIRST_RETRY_DELAY
        .saturating_mul(2u32.saturating_pow(retries))
        .min(MAX_RETRY_DELAY)
}

async fn attempt(config: &LlmConfig, request: RequestBuilder) -> Attempt {
    let response = match tokio::time::timeout(config.request_timeout, request.send()).await {
        Err(_) => {
            let error = LlmError::Timeout(format!(
                "no response within {} s",
                config.request_timeout.as_secs_f32()
            ));
            return Attempt::Retry(error, None);
        }
        Ok(Err(error)) if error.is_builder() => {
            return Attempt::Fail(LlmError::NotConfigured(format!("bad request: {error}")));
        }
        Ok(Err(error)) => return Attempt::Retry(LlmError::Network(describe(&error)), None),
        Ok(Ok(response)) => response,
    };
    let status = response.status();
    debug!(status = status.as_u16(), "model API answered");
    if status.is_success() {
        return Attempt::Accepted(response);
    }
    let retry_after = retry_after(&response);
    let body = match tokio::time::timeout(config.request_timeout, response.text()).await {
        Ok(Ok(body)) => body,
        Ok(Err(error)) => format!("(error body unreadable: {error})"),
        Err(_) => "(error body timed out)".to_owned(),
    };
    let error = LlmError::Http {
        status: status.as_u16(),
        message: truncate(body.trim(), ERROR_BODY_CHARS),
    };
    if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
        Attempt::Retry(error, retry_after)
    } else {
        Attempt::Fail(error)
    }
}

/// `Retry-After` in seconds (the HTTP-date form is ignored: backoff applies).
fn retry_after(response: &Response) -> Option<Duration> {
    let value = response.headers().get(reqwest::header::RETRY_AFTER)?;
    let seconds: f64 = value.to_str().ok()?.trim().parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds.min(3600.0)))
}

/// A reqwest error with its causes, which carry the useful part ("connection refused").
pub(crate) fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        assert_eq!(backoff(0), Duration::from_millis(500));
        assert_eq!(backoff(1), Duration::from_secs(1));
        assert_eq!(backoff(3), Duration::from_secs(4));
        assert_eq!(backoff(40), MAX_RETRY_DELAY);
    }
}
