//! Turning a [`Running`] command into an HTTP answer: one JSON object
//! (`Accept: application/json`) or a `text/event-stream` with `stdout`, `stderr` and
//! `exit` events (and `error` when the stream breaks). A client that goes away cancels the
//! command. Refusals happen before this point and are ordinary API errors.

use std::convert::Infallible;

use axum::Json;
use axum::http::HeaderMap;
use axum::http::header::ACCEPT;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tracing::Instrument;
use vigil_proto::agent::v1::exec_event;

use crate::exec::{ExecExit, Running, Utf8Carry};
use crate::{Error, Result};

/// How the caller wants the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseFormat {
    /// One JSON object at the end.
    Json,
    /// Server-sent events as output arrives.
    EventStream,
}

impl ResponseFormat {
    /// JSON when `Accept` names `application/json`, events otherwise.
    pub fn from_headers(headers: &HeaderMap) -> Self {
        let json = headers
            .get_all(ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|item| {
                item.split(';')
                    .next()
                    .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
            });
        if json {
            ResponseFormat::Json
        } else {
            ResponseFormat::EventStream
        }
    }
}

/// Answers `running` in the format the caller's `Accept` asks for.
pub async fn respond(running: Running, headers: &HeaderMap) -> Result<Response> {
    match ResponseFormat::from_headers(headers) {
        ResponseFormat::Json => Ok(Json(running.collect(|_, _| {}).await?).into_response()),
        ResponseFormat::EventStream => {
            let (tx, rx) = mpsc::channel(32);
            tokio::spawn(pump(running, tx).in_current_span());
            Ok(Sse::new(ReceiverStream::new(rx))
                .keep_alive(KeepAlive::default())
                .into_response())
        }
    }
}

type EventSender = mpsc::Sender<Result<Event, Infallible>>;

fn error_event(error: &Error) -> Event {
    let data = serde_json::json!({ "code": error.api_code(), "message": error.to_string() });
    Event::default().event("error").data(data.to_string())
}

/// Forwards events until the command ends, the deadline passes or the client goes away
/// (then the command is dropped, which cancels it on the agent).
async fn pump(mut running: Running, tx: EventSender) {
    let mut stdout = Utf8Carry::default();
    let mut stderr = Utf8Carry::default();
    loop {
        let kind = tokio::select! {
            () = tx.closed() => {
                tracing::info!(request_id = %running.request_id(), "client went away; cancelling the command");
                return;
            }
            event = running.next_event() => match event {
                Ok(kind) => kind,
                Err(error) => {
                    let _ = tx.send(Ok(error_event(&error))).await;
                    return;
                }
            },
        };
        let mut events = Vec::new();
        match kind {
            exec_event::Kind::Started(_) => {}
            exec_event::Kind::StdoutChunk(chunk) => {
                events.extend(text_event("stdout", stdout.push(&chunk)))
            }
            exec_event::Kind::StderrChunk(chunk) => {
                events.extend(text_event("stderr", stderr.push(&chunk)))
            }
            exec_event::Kind::Finished(finished) => {
                events.extend(text_event("stdout", stdout.finish()));
                events.extend(text_event("stderr", stderr.finish()));
                let exit = ExecExit {
                    queued_ms: running.queued_ms(),
                    ..ExecExit::from_finished(&finished)
                };
                let exit = serde_json::to_string(&exit).unwrap_or_default();
                events.push(Event::default().event("exit").data(exit));
            }
            exec_event::Kind::Rejected(rejected) => {
                events.push(error_event(&Error::AgentRejected {
                    code: rejected.code,
                    reason: rejected.reason,
                }))
            }
        }
        for event in events {
            if tx.send(Ok(event)).await.is_err() {
                return;
            }
        }
        if running.ended() {
            return;
        }
    }
}

fn text_event(name: &'static str, text: String) -> Option<Event> {
    (!text.is_empty()).then(|| Event::default().event(name).data(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_json_selects_json() {
        let mut headers = HeaderMap::new();
        assert_eq!(
            ResponseFormat::from_headers(&headers),
            ResponseFormat::EventStream
        );
        headers.insert(
            ACCEPT,
            "text/html, application/json; q=0.9".parse().unwrap(),
        );
        assert_eq!(ResponseFormat::from_headers(&headers), ResponseFormat::Json);
    }
}
