//! One tracing span per HTTP request, and a log line with its status and duration.

use std::time::Instant;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use tracing::{Instrument, debug, info, info_span};

/// Middleware: runs the request inside an `http` span and logs how it ended.
pub async fn trace_request(request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    let span = info_span!("http", method = %request.method(), path = %path);
    async move {
        let started = Instant::now();
        let response = next.run(request).await;
        let status = response.status().as_u16();
        let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        if path.starts_with("/api/") {
            info!(status, elapsed_ms, "request");
        } else {
            debug!(status, elapsed_ms, "request");
        }
        response
    }
    .instrument(span)
    .await
}
