//! One chat turn: posts the message, streams the events to the [`Screen`], asks the
//! person about each `approval_needed` and posts the decision, and on Ctrl-C cancels the
//! turn (`POST /api/ai/sessions/{id}/cancel`); a second Ctrl-C gives up at once.

use std::collections::VecDeque;
use std::time::Duration;

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures_util::StreamExt;
use serde_json::Value;
use tokio::signal::unix::Signal;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;
use tracing::debug;

use super::api::ChatApi;
use super::describe;
use super::input::parse_answer;
use super::screen::Screen;
use crate::assistant::events::{ApprovalNeeded, ChatEvent};
use crate::error::StreamErrorCode;
use crate::{Error, Result};

/// How long a cancelled turn may take to send its last events.
const CANCEL_GRACE: Duration = Duration::from_secs(10);
/// The question after an approval.
pub const APPROVE_PROMPT: &str = "approve? [y/N/reason] ";

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// `done` arrived; `errors` when an `error` event came before it.
    Done { errors: bool },
    /// Ctrl-C cancelled it.
    Cancelled,
    /// A second Ctrl-C: the person wants out.
    Interrupted,
    /// The stream ended without `done`.
    Lost,
}

/// What the caller keeps from a turn.
#[derive(Debug, Clone)]
pub struct Ended {
    /// How it ended.
    pub outcome: Outcome,
    /// The session of the turn (from its `session` event).
    pub session: Option<String>,
}

/// What one turn needs.
#[derive(Debug)]
pub struct Turn<'a> {
    /// The controller.
    pub api: &'a ChatApi,
    /// Where to write.
    pub screen: &'a mut Screen,
    /// The person's lines, when there is a person to ask.
    pub lines: Option<&'a mut UnboundedReceiver<String>>,
    /// SIGINT.
    pub interrupts: &'a mut Signal,
}

enum Step {
    Event(Option<std::result::Result<Event, EventStreamError<reqwest::Error>>>),
    Line(Option<String>),
    Interrupt,
    GraceOver,
}

fn ended(outcome: Outcome, session: &Option<String>) -> Ended {
    Ended {
        outcome,
        session: session.clone(),
    }
}

async fn next_line(lines: &mut Option<&mut UnboundedReceiver<String>>) -> Option<String> {
    match lines {
        Some(lines) => lines.recv().await,
        None => std::future::pending().await,
    }
}

impl Turn<'_> {
    /// Runs the turn of `body` (`{session_id?, message, mentions?, control_level?}`).
    pub async fn run(mut self, body: &Value) -> Result<Ended> {
        let response = self.api.start_turn(body).await?;
        let mut stream = response.bytes_stream().eventsource();
        let mut session: Option<String> = None;
        let mut pending: VecDeque<ApprovalNeeded> = VecDeque::new();
        let mut errors = false;
        let mut cancelling: Option<Instant> = None;
        loop {
            let grace = cancelling.unwrap_or_else(Instant::now);
            let step = tokio::select! {
                event = stream.next() => Step::Event(event),
                line = next_line(&mut self.lines), if self.lines.is_some() => Step::Line(line),
                _ = self.interrupts.recv() => Step::Interrupt,
                () = tokio::time::sleep_until(grace), if cancelling.is_some() => Step::GraceOver,
            };
            match step {
                Step::Event(Some(Ok(sse))) => {
                    let event = match ChatEvent::decode(&sse.event, &sse.data) {
                        Ok(event) => event,
                        Err(why) => {
                            self.screen.line(&format!("error: BAD_EVENT: {why}"))?;
                            continue;
                        }
                    };
                    match &event {
                        ChatEvent::Session { session_id, .. } => {
                            session = Some(session_id.clone());
                        }
                        ChatEvent::Error {
                            code: StreamErrorCode::Cancelled,
                            ..
                        } if cancelling.is_some() => {
                            continue;
                        }
                        ChatEvent::Error { .. } => errors = true,
                        _ => {}
                    }
                    self.screen.event(&event)?;
                    match event {
                        ChatEvent::Done { .. } => {
                            let outcome = match cancelling {
                                Some(_) => Outcome::Cancelled,
                                None => Outcome::Done { errors },
                            };
                            return Ok(ended(outcome, &session));
                        }
                        ChatEvent::ApprovalNeeded(needed) => {
                            pending.push_back(needed);
                            if pending.len() == 1 {
                                self.ask(&pending)?;
                            }
                        }
                        ChatEvent::ApprovalResolved { approval_id, .. } => {
                            let front = pending.front().map(|p| p.approval_id.clone());
                            pending.retain(|p| p.approval_id != approval_id);
                            if front.as_deref() == Some(approval_id.as_str()) {
                                self.ask(&pending)?;
                            }
                        }
                        _ => {}
                    }
                }
                Step::Event(None) => {
                    self.screen.end_answer()?;
                    if cancelling.is_some() {
                        return Ok(ended(Outcome::Cancelled, &session));
                    }
                    self.screen
                        .line("error: STREAM_ENDED: the controller closed the stream before the turn ended")?;
                    return Ok(ended(Outcome::Lost, &session));
                }
                Step::Event(Some(Err(EventStreamError::Transport(source)))) => {
                    let error = Error::Http {
                        url: String::new(),
                        source,
                    };
                    self.screen
                        .line(&format!("error: STREAM_ENDED: {}", describe(&error).1))?;
                    return Ok(ended(Outcome::Lost, &session));
                }
                Step::Event(Some(Err(other))) => {
                    self.screen.line(&format!(
                        "error: STREAM_ENDED: not an event stream: {other}"
                    ))?;
                    return Ok(ended(Outcome::Lost, &session));
                }
                Step::Line(Some(line)) => {
                    self.screen.prompt_answered();
                    self.answer(&mut pending, &line).await?;
                }
                Step::Line(None) => {
                    self.lines = None;
                    self.ask(&pending)?;
                }
                Step::Interrupt if cancelling.is_some() => {
                    return Ok(ended(Outcome::Interrupted, &session));
                }
                Step::Interrupt => {
                    cancelling = Some(Instant::now() + CANCEL_GRACE);
                    self.cancel(session.as_deref()).await?;
                }
                Step::GraceOver => return Ok(ended(Outcome::Cancelled, &session)),
            }
        }
    }

    /// Asks about the first pending approval: a prompt when a person can answer, or how to
    /// decide it elsewhere.
    fn ask(&mut self, pending: &VecDeque<ApprovalNeeded>) -> Result<()> {
        let Some(needed) = pending.front() else {
            return Ok(());
        };
        if self.lines.is_some() {
            let prompt = self.screen.style().bold(APPROVE_PROMPT);
            return self.screen.prompt(&prompt);
        }
        let id = &needed.approval_id;
        self.screen.line(&format!(
            "waiting for a decision: vigil-controller approvals approve {id}  (or: approvals deny {id} --reason TEXT)"
        ))
    }

    /// Posts the person's answer to the first pending approval.
    async fn answer(&mut self, pending: &mut VecDeque<ApprovalNeeded>, line: &str) -> Result<()> {
        let Some(needed) = pending.pop_front() else {
            let note = "(a turn is running: that line was not sent; Ctrl-C cancels the turn)";
            let note = self.screen.style().dim(note);
            return self.screen.line(&note);
        };
        let answer = parse_answer(line);
        debug!(approval = %needed.approval_id, ?answer, "deciding an approval");
        if let Err(error) = self.api.decide(&needed.approval_id, &answer).await {
            let (code, message) = describe(&error);
            let text = format!("error: {code}: {message}");
            self.screen.line(&self.screen.style().red(&text))?;
        }
        self.ask(pending)
    }

    async fn cancel(&mut self, session: Option<&str>) -> Result<()> {
        self.screen
            .line(&self.screen.style().yellow("^C cancelling the turn…"))?;
        let Some(session) = session else {
            return Ok(());
        };
        if let Err(error) = self.api.cancel(session).await {
            let (code, message) = describe(&error);
            self.screen.line(&format!("error: {code}: {message}"))?;
        }
        Ok(())
    }
}
