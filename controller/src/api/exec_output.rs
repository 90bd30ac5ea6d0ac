//! Turning a command's events into an HTTP answer. The first event decides the status: an
//! agent refusal is `403` with the agent's code; otherwise the answer is either one JSON
//! object (`Accept: application/json`) or a `text/event-stream` with `stdout`, `stderr`
//! and `exit` events (and `error` when the stream breaks). A client that goes away cancels
//! the command.

use std::convert::Infallible;
use std::time::Duration;

use axum::Json;
use axum::http::HeaderMap;
use axum::http::header::ACCEPT;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_stream::wrappers::ReceiverStream;
use tracing::Instrument;
use vigil_proto::agent::v1::{ExecRequest, Finished, exec_event, finished};
use vigil_shared::ids::AgentId;

use super::exec::MAX_TIMEOUT_S;
use crate::audit::exec::ExecTrail;
use crate::gateway::{Dispatcher, ExecStream};
use crate::{Error, Result};

/// Extra time past the command's own timeout before the controller gives up on it.
const DEADLINE_GRACE: Duration = Duration::from_secs(15);
/// Most output kept for a JSON answer, per stream.
const MAX_JSON_OUTPUT: usize = 32 * 1024 * 1024;
/// The agent's default timeout when the request says 0.
const DEFAULT_TIMEOUT_S: u32 = 30;

/// The `exit` event's data: how the command ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecExit {
    /// The exit code of a command that exited.
    pub exit_code: Option<i32>,
    /// The signal that ended the command.
    pub signal: Option<i32>,
    /// True when output was cut at the output cap.
    pub truncated: bool,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
}

/// The JSON answer: the exit plus the whole output (UTF-8, lossy).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecOutcome {
    /// The exit code of a command that exited.
    pub exit_code: Option<i32>,
    /// The signal that ended the command.
    pub signal: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// True when output was cut at the output cap.
    pub truncated: bool,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
}

impl ExecExit {
    pub(crate) fn from_finished(finished: &Finished) -> Self {
        let (exit_code, signal) = match finished.status {
            Some(finished::Status::ExitCode(code)) => (Some(code), None),
            Some(finished::Status::Signal(signal)) => (None, Some(signal)),
            None => (None, None),
        };
        ExecExit {
            exit_code,
            signal,
            truncated: finished.truncated,
            duration_ms: finished.duration_ms,
        }
    }
}

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

/// Send `request` to `agent` with its audit trail (`action` is the audit action, `target`
/// the target as recorded) and answer in the format the caller's `Accept` asks for.
pub async fn run_audited(
    state: &super::ApiState,
    headers: &HeaderMap,
    principal: &super::Principal,
    action: &str,
    agent: AgentId,
    target: &str,
    request: ExecRequest,
) -> Result<Response> {
    let trail = ExecTrail::new(
        state.agents.store().clone(),
        state.metrics.clone(),
        &principal.name,
        action,
        &agent.to_string(),
        target,
        &request.command,
    );
    run(
        &state.dispatcher,
        agent,
        request,
        ResponseFormat::from_headers(headers),
        trail,
    )
    .await
}

/// Sends `request` to `agent` and answers in `format` (see the module documentation).
pub async fn run(
    dispatcher: &Dispatcher,
    agent: AgentId,
    request: ExecRequest,
    format: ResponseFormat,
    mut trail: ExecTrail,
) -> Result<Response> {
    let timeout_s = match request.timeout_s {
        0 => DEFAULT_TIMEOUT_S,
        n => n.min(MAX_TIMEOUT_S),
    };
    let deadline = Instant::now() + Duration::from_secs(u64::from(timeout_s)) + DEADLINE_GRACE;
    let mut stream = dispatcher
        .exec(agent, request)
        .await
        .inspect_err(|e| trail.failed(e.api_code()))?;
    let first = next_event(&mut stream, &mut trail, deadline, timeout_s).await?;
    if let exec_event::Kind::Rejected(rejected) = first {
        tracing::info!(code = %rejected.code, reason = %rejected.reason, "the agent refused a command");
        return Err(Error::AgentRejected {
            code: rejected.code,
            reason: rejected.reason,
        });
    }
    match format {
        ResponseFormat::Json => {
            Ok(Json(collect(stream, first, deadline, timeout_s, trail).await?).into_response())
        }
        ResponseFormat::EventStream => Ok(event_stream(stream, first, deadline, timeout_s, trail)),
    }
}

async fn next_event(
    stream: &mut ExecStream,
    trail: &mut ExecTrail,
    deadline: Instant,
    timeout_s: u32,
) -> Result<exec_event::Kind> {
    let next = match tokio::time::timeout_at(deadline, stream.next()).await {
        Err(_) => Err(Error::ExecTimeout(u64::from(timeout_s))),
        Ok(None) => Err(Error::AgentGone(stream.agent())),
        Ok(Some(kind)) => Ok(kind),
    };
    match &next {
        Ok(kind) => trail.observe(kind),
        Err(error) => trail.failed(error.api_code()),
    }
    next
}

fn append_capped(buffer: &mut Vec<u8>, chunk: &[u8], truncated: &mut bool) {
    let room = MAX_JSON_OUTPUT.saturating_sub(buffer.len());
    if chunk.len() > room {
        *truncated = true;
    }
    buffer.extend_from_slice(&chunk[..chunk.len().min(room)]);
}

async fn collect(
    mut stream: ExecStream,
    first: exec_event::Kind,
    deadline: Instant,
    timeout_s: u32,
    mut trail: ExecTrail,
) -> Result<ExecOutcome> {
    let (mut stdout, mut stderr, mut cut) = (Vec::new(), Vec::new(), false);
    let mut next = Some(first);
    loop {
        let kind = match next.take() {
            Some(kind) => kind,
            None => next_event(&mut stream, &mut trail, deadline, timeout_s).await?,
        };
        match kind {
            exec_event::Kind::Started(_) => {}
            exec_event::Kind::StdoutChunk(chunk) => append_capped(&mut stdout, &chunk, &mut cut),
            exec_event::Kind::StderrChunk(chunk) => append_capped(&mut stderr, &chunk, &mut cut),
            exec_event::Kind::Finished(finished) => {
                let exit = ExecExit::from_finished(&finished);
                return Ok(ExecOutcome {
                    exit_code: exit.exit_code,
                    signal: exit.signal,
                    stdout: String::from_utf8_lossy(&stdout).into_owned(),
                    stderr: String::from_utf8_lossy(&stderr).into_owned(),
                    truncated: exit.truncated || cut,
                    duration_ms: exit.duration_ms,
                });
            }
            exec_event::Kind::Rejected(rejected) => {
                return Err(Error::AgentRejected {
                    code: rejected.code,
                    reason: rejected.reason,
                });
            }
        }
    }
}

type EventSender = mpsc::Sender<Result<Event, Infallible>>;

fn event_stream(
    stream: ExecStream,
    first: exec_event::Kind,
    deadline: Instant,
    timeout_s: u32,
    trail: ExecTrail,
) -> Response {
    let (tx, rx) = mpsc::channel(32);
    tokio::spawn(pump(stream, first, deadline, timeout_s, tx, trail).in_current_span());
    Sse::new(ReceiverStream::new(rx))
        .keep_alive(KeepAlive::default())
        .into_response()
}

fn error_event(error: &Error) -> Event {
    let data = serde_json::json!({ "code": error.api_code(), "message": error.to_string() });
    Event::default().event("error").data(data.to_string())
}

/// Forwards events until the command ends, the deadline passes or the client goes away
/// (then `stream` is dropped, which cancels the command on the agent).
async fn pump(
    mut stream: ExecStream,
    first: exec_event::Kind,
    deadline: Instant,
    timeout_s: u32,
    tx: EventSender,
    mut trail: ExecTrail,
) {
    let mut stdout = Utf8Carry::default();
    let mut stderr = Utf8Carry::default();
    let mut next = Some(first);
    loop {
        let kind = match next.take() {
            Some(kind) => kind,
            None => tokio::select! {
                () = tx.closed() => {
                    tracing::info!(request_id = %stream.request_id(), "client went away; cancelling the command");
                    return;
                }
                event = next_event(&mut stream, &mut trail, deadline, timeout_s) => match event {
                    Ok(kind) => kind,
                    Err(error) => {
                        let _ = tx.send(Ok(error_event(&error))).await;
                        return;
                    }
                },
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
                let exit =
                    serde_json::to_string(&ExecExit::from_finished(&finished)).unwrap_or_default();
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
        if stream.ended() {
            return;
        }
    }
}

fn text_event(name: &'static str, text: String) -> Option<Event> {
    (!text.is_empty()).then(|| Event::default().event(name).data(text))
}

/// Decodes a byte stream as UTF-8 chunk by chunk, holding back a character split between
/// two chunks and replacing invalid bytes with U+FFFD.
#[derive(Debug, Default)]
pub struct Utf8Carry {
    pending: Vec<u8>,
}

impl Utf8Carry {
    /// The text of `chunk` (plus what was held back), holding back an incomplete tail.
    pub fn push(&mut self, chunk: &[u8]) -> String {
        self.pending.extend_from_slice(chunk);
        let mut out = String::new();
        let mut rest: &[u8] = &self.pending;
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    out.push_str(text);
                    rest = &[];
                    break;
                }
                Err(error) => {
                    let (valid, after) = rest.split_at(error.valid_up_to());
                    out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match error.error_len() {
                        Some(len) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            rest = &after[len..];
                        }
                        None => {
                            rest = after;
                            break;
                        }
                    }
                }
            }
        }
        let tail = rest.to_vec();
        self.pending = tail;
        out
    }

    /// Whatever is still held back, lossily.
    pub fn finish(&mut self) -> String {
        let out = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_characters_are_joined_and_invalid_bytes_replaced() {
        let mut carry = Utf8Carry::default();
        let euro = "€".as_bytes();
        assert_eq!(carry.push(&[b'a', euro[0]]), "a");
        assert_eq!(carry.push(&euro[1..]), "€");
        assert_eq!(carry.push(&[0xff, b'b']), "\u{FFFD}b");
        assert_eq!(carry.push(&[euro[0]]), "");
        assert_eq!(carry.finish(), "\u{FFFD}");
    }

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

    #[test]
    fn exits_report_code_or_signal() {
        let exit = ExecExit::from_finished(&Finished {
            status: Some(finished::Status::Signal(9)),
            duration_ms: 5,
            truncated: true,
        });
        assert_eq!(
            (exit.exit_code, exit.signal, exit.truncated),
            (None, Some(9), true)
        );
    }
}
