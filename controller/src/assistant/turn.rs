//! One chat turn: direct mode, or the model loop. The loop streams the model's answer,
//! runs its tool calls through the gates (reads and resolves up to four at once, writes
//! alone), refuses a final answer while a write is unverified and asks for a read instead,
//! and ends with `done`. Everything the model said and every tool result is stored as a
//! message of the session.

use std::sync::Arc;
use std::time::Instant;

use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::compaction::Conversation;
use super::direct;
use super::events::ChatEvent;
use super::gates::fsm::FsmState;
use super::history;
use super::phantom::{self, Executed};
use super::prefetch::{Prefetch, prefetch};
use super::prompt;
use super::quirks::{VisibleText, recover_tool_calls};
use super::service::Assistant;
use super::state::SessionState;
use super::tools_run::{CallOutcome, ToolRunner};
use crate::access::Principal;
use crate::approvals::ControlLevel;
use crate::clock::unix_now;
use crate::error::StreamErrorCode;
use crate::llm::{ChatRequest, LlmError, Message, StreamEvent, ToolCall};

/// Model calls in one turn; the last is forced to answer in text.
pub const MAX_ITERATIONS: u32 = 20;
/// Tool calls of one response that run at once.
pub const MAX_PARALLEL: usize = 4;
/// Tool calls after which the model is nudged to wrap up.
pub const WRAP_UP_AFTER: [u32; 2] = [12, 18];

/// A running turn.
#[derive(Debug)]
pub struct Turn {
    pub(super) assistant: Assistant,
    pub(super) session_id: String,
    /// Tokens the session used before this turn.
    tokens_before: u64,
    state: Arc<tokio::sync::Mutex<SessionState>>,
    pub(super) level: ControlLevel,
    pub(super) caller: Principal,
    events: mpsc::UnboundedSender<ChatEvent>,
    pub(super) cancel: CancellationToken,
    iterations: u32,
    tool_calls: u32,
    input_tokens: u64,
    output_tokens: u64,
}

impl Turn {
    /// A turn of `session_id` at `level`, sending its events on `events`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        assistant: Assistant,
        session_id: String,
        tokens_before: u64,
        state: Arc<tokio::sync::Mutex<SessionState>>,
        level: ControlLevel,
        caller: Principal,
        events: mpsc::UnboundedSender<ChatEvent>,
        cancel: CancellationToken,
    ) -> Turn {
        Turn {
            assistant,
            session_id,
            tokens_before,
            state,
            level,
            caller,
            events,
            cancel,
            iterations: 0,
            tool_calls: 0,
            input_tokens: 0,
            output_tokens: 0,
        }
    }

    /// A sender of this turn's events.
    pub(super) fn events_sender(&self) -> mpsc::UnboundedSender<ChatEvent> {
        self.events.clone()
    }

    /// Sends an event; a client that went away does not stop the turn.
    pub(super) fn emit(&self, event: ChatEvent) {
        let _ = self.events.send(event);
    }

    fn error(&self, code: StreamErrorCode, message: impl Into<String>) {
        let message = message.into();
        tracing::warn!(code = %code, %message, "turn error");
        self.emit(ChatEvent::Error { code, message });
    }

    async fn store_message(&self, role: &str, content: &str, data: Option<Value>) {
        if let Err(error) = self
            .assistant
            .store()
            .append_message(&self.session_id, role, content, data.as_ref(), unix_now())
            .await
        {
            tracing::error!(%error, "cannot store a chat message");
        }
    }

    /// Runs the turn to its end: `done` is always the last event.
    pub async fn run(mut self, message: String, mentions: Vec<String>) {
        let state = self.state.clone();
        let mut state = state.lock().await;
        state.begin_turn();
        self.store_message(
            "user",
            &message,
            (!mentions.is_empty()).then(|| json!({ "mentions": mentions })),
        )
        .await;
        let runner = ToolRunner::new(&self);
        let prefetched = self.prefetch(&message, &mentions);
        for resource in prefetched.matched.iter().cloned() {
            state.mention(resource);
        }
        if message.starts_with('/') {
            self.direct(&runner, &mut state, &message).await;
        } else if self.assistant.provider().is_none() {
            self.error(
                StreamErrorCode::ModelNotConfigured,
                "no model is configured: set VIGIL_LLM_PROVIDER (openai or anthropic), VIGIL_LLM_MODEL, \
                 VIGIL_LLM_BASE_URL for a local server (e.g. http://127.0.0.1:11434/v1 for Ollama) and \
                 VIGIL_LLM_API_KEY if it needs one, then restart the controller. Direct mode works \
                 without a model: try /query search NAME or /read @HOST uptime",
            );
        } else {
            self.model_loop(&runner, &mut state, &prefetched.block)
                .await;
        }
        if self.cancel.is_cancelled() {
            self.error(StreamErrorCode::Cancelled, "the turn was cancelled");
        }
        if let Err(error) = self
            .assistant
            .store()
            .add_session_usage(
                &self.session_id,
                self.input_tokens,
                self.output_tokens,
                unix_now(),
            )
            .await
        {
            tracing::error!(%error, "cannot record token usage");
        }
        self.emit(ChatEvent::Done {
            session_id: self.session_id.clone(),
            turns: self.iterations,
            tool_calls: self.tool_calls,
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
        });
    }

    async fn direct(&mut self, runner: &ToolRunner, state: &mut SessionState, message: &str) {
        let call = match direct::parse(message) {
            Ok(call) => call,
            Err(usage) => {
                self.emit(ChatEvent::Content {
                    text: usage.clone(),
                });
                self.store_message("assistant", &usage, None).await;
                return;
            }
        };
        let model_call = ToolCall {
            id: format!("direct_{}", uuid::Uuid::new_v4().simple()),
            name: call.tool,
            arguments: call.arguments.to_string(),
        };
        self.store_message(
            "assistant",
            "",
            Some(json!({ "tool_calls": [history::call_json(&model_call)], "direct": true })),
        )
        .await;
        let outcomes = self
            .run_calls(runner, state, std::slice::from_ref(&model_call))
            .await;
        for outcome in outcomes {
            let text = outcome.envelope.to_text();
            self.store_message(
                "tool",
                &text,
                Some(json!({ "tool_call_id": outcome.call.id, "name": outcome.call.name })),
            )
            .await;
        }
    }

    /// Resolves what the message refers to against the inventory.
    fn prefetch(&self, message: &str, mentions: &[String]) -> Prefetch {
        let inventory = self.assistant.exec().agents().inventory();
        let prefetched = prefetch(
            message,
            mentions,
            |text| inventory.search(text, None, 50),
            |id| inventory.get(id).map(|view| view.resource),
        );
        tracing::debug!(matched = prefetched.matched.len(), unmatched = ?prefetched.unmatched, "prefetch");
        prefetched
    }

    async fn model_loop(
        &mut self,
        runner: &ToolRunner,
        state: &mut SessionState,
        prefetched: &str,
    ) {
        let Some(provider) = self.assistant.provider().cloned() else {
            return;
        };
        let mut conversation = match history::load(self.assistant.store(), &self.session_id).await {
            Ok(messages) => Conversation::from_history(messages),
            Err(error) => {
                self.error(
                    StreamErrorCode::Internal,
                    format!("cannot load the session's messages: {error}"),
                );
                return;
            }
        };
        // The external MCP servers' lists as of now (their notifications keep them current
        // during the turn).
        self.assistant.external().refresh().await;
        let mut nudged = 0usize;
        let mut text_only_next = false;
        let mut executed: Vec<Executed> = Vec::new();
        while self.iterations < MAX_ITERATIONS && !self.cancel.is_cancelled() {
            if self.over_budget() {
                return;
            }
            self.iterations += 1;
            self.assistant.exec().metrics().iteration();
            let last = self.iterations == MAX_ITERATIONS;
            conversation.compact(self.iterations, |_, _| None);
            let tools = prompt::tool_specs_with(&self.assistant.external().tools());
            let request = ChatRequest {
                system: prompt::system(self.level, &state.context_block(), prefetched),
                messages: conversation.messages().to_vec(),
                tools,
                text_only: last || text_only_next,
                max_tokens: None,
            };
            let Some((text, mut calls)) = self.call_model(provider.as_ref(), &request).await else {
                return;
            };
            if request.text_only && !calls.is_empty() {
                tracing::info!(
                    calls = calls.len(),
                    "ignoring tool calls of a text-only model call"
                );
                calls.clear();
            }
            if calls.is_empty() {
                match state.check_final_answer() {
                    Ok(()) => {
                        let text = self.check_phantom(text, &executed, state.fsm_state().as_str());
                        self.store_message("assistant", &text, None).await;
                        return;
                    }
                    Err(demand) if !last => {
                        self.assistant
                            .exec()
                            .metrics()
                            .gate_block("fsm_final", state.fsm_state().as_str());
                        self.emit(ChatEvent::ContentReplaced {
                            text: String::new(),
                            reason: "the last write is not verified yet; the assistant reads before answering".into(),
                        });
                        conversation.push(
                            Message::Assistant {
                                text,
                                tool_calls: Vec::new(),
                            },
                            self.iterations,
                        );
                        conversation.push(Message::User { text: demand }, self.iterations);
                        continue;
                    }
                    Err(_) => {
                        let note = "\n\n(Vigil: the last change was not verified by a read.)";
                        self.emit(ChatEvent::Content { text: note.into() });
                        self.store_message("assistant", &format!("{text}{note}"), None)
                            .await;
                        return;
                    }
                }
            }
            self.store_message("assistant", &text, Some(json!({ "tool_calls": calls.iter().map(history::call_json).collect::<Vec<_>>() })))
                .await;
            conversation.push(
                Message::Assistant {
                    text,
                    tool_calls: calls.clone(),
                },
                self.iterations,
            );
            let was_verifying = state.fsm_state() == FsmState::Verifying;
            let outcomes = self.run_calls(runner, state, &calls).await;
            executed.extend(outcomes.iter().map(|o| executed_of(runner, o)));
            // A write verified by a read ends the work: the next call answers in text.
            text_only_next = was_verifying && state.fsm_state() == FsmState::Reading;
            for outcome in outcomes {
                let content = outcome.envelope.to_text();
                self.store_message(
                    "tool",
                    &content,
                    Some(json!({ "tool_call_id": outcome.call.id, "name": outcome.call.name })),
                )
                .await;
                conversation.push(
                    Message::Tool {
                        tool_call_id: outcome.call.id.clone(),
                        name: outcome.call.name.clone(),
                        content,
                    },
                    self.iterations,
                );
            }
            if let Some(&limit) = WRAP_UP_AFTER.get(nudged)
                && self.tool_calls >= limit
            {
                nudged += 1;
                conversation.push(
                    Message::User {
                        text: format!(
                            "(Vigil: {} tool calls so far in this turn. Wrap up: answer with what you found, \
                             or make only the calls you still need.)",
                            self.tool_calls
                        ),
                    },
                    self.iterations,
                );
            }
        }
        tracing::debug!(saved_chars = conversation.saved, "compaction");
    }

    /// A final answer that claims what no successful call of this turn did is replaced by
    /// a safe message (and counted).
    fn check_phantom(&self, text: String, executed: &[Executed], fsm: &'static str) -> String {
        let Some(found) = phantom::detect(&text, executed) else {
            return text;
        };
        tracing::warn!(reason = %found.reason, claims = ?found.claims, "phantom answer replaced");
        self.assistant.exec().metrics().gate_block("phantom", fsm);
        let safe = phantom::safe_message(&found);
        self.emit(ChatEvent::ContentReplaced {
            text: safe.clone(),
            reason: found.reason,
        });
        safe
    }

    /// True (after saying so) when the session used its token budget.
    fn over_budget(&self) -> bool {
        let budget = self.assistant.token_budget();
        let used = self.tokens_before + self.input_tokens + self.output_tokens;
        if budget == 0 || used < budget {
            return false;
        }
        self.error(
            StreamErrorCode::BudgetExceeded,
            format!(
                "this session used {used} tokens, its budget is {budget} (--session-token-budget): \
                 start a new session to go on"
            ),
        );
        true
    }

    /// One streamed model call: the text (streamed as `content`) and the tool calls.
    async fn call_model(
        &mut self,
        provider: &dyn crate::llm::ModelProvider,
        request: &ChatRequest,
    ) -> Option<(String, Vec<ToolCall>)> {
        let started = Instant::now();
        let stream = tokio::select! {
            () = self.cancel.cancelled() => return None,
            stream = provider.stream(request) => stream,
        };
        let mut stream = match stream {
            Ok(stream) => stream,
            Err(error) => {
                self.model_error(&error);
                return None;
            }
        };
        let (mut text, mut calls) = (String::new(), Vec::new());
        let mut visible = VisibleText::new();
        let mut raw = String::new();
        loop {
            let event = tokio::select! {
                () = self.cancel.cancelled() => return None,
                event = stream.next() => event,
            };
            match event {
                None | Some(Ok(StreamEvent::Finished { .. })) => break,
                Some(Ok(StreamEvent::TextDelta(delta))) => {
                    raw.push_str(&delta);
                    let shown = visible.push(&delta);
                    if !shown.is_empty() {
                        text.push_str(&shown);
                        self.emit(ChatEvent::Content { text: shown });
                    }
                }
                Some(Ok(StreamEvent::ToolCall(call))) => calls.push(call),
                Some(Ok(StreamEvent::Usage {
                    input_tokens,
                    output_tokens,
                })) => {
                    self.input_tokens += input_tokens;
                    self.output_tokens += output_tokens;
                }
                Some(Err(error)) => {
                    self.model_error(&error);
                    if !text.is_empty() {
                        self.store_message(
                            "assistant",
                            &text,
                            Some(json!({ "interrupted": true })),
                        )
                        .await;
                    }
                    return None;
                }
            }
        }
        let rest = visible.finish();
        if !rest.is_empty() {
            text.push_str(&rest);
            self.emit(ChatEvent::Content { text: rest });
        }
        if calls.is_empty() && !request.text_only {
            self.recover_text_calls(&raw, &mut text, &mut calls);
        }
        tracing::debug!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            calls = calls.len(),
            "model answered"
        );
        Some((text, calls))
    }

    /// Tool calls a local model wrote into its text become real calls (through the same
    /// gates); the visible answer is replaced by the text around them.
    fn recover_text_calls(&mut self, raw: &str, text: &mut String, calls: &mut Vec<ToolCall>) {
        let names = crate::tools::table::names();
        let Some(recovered) = recover_tool_calls(raw, &names) else {
            return;
        };
        tracing::info!(
            calls = recovered.calls.len(),
            "recovered tool calls written as text"
        );
        for (n, call) in recovered.calls.into_iter().enumerate() {
            calls.push(ToolCall {
                id: format!("text_{}_{n}", uuid::Uuid::new_v4().simple()),
                name: call.name,
                arguments: call.arguments,
            });
        }
        self.emit(ChatEvent::ContentReplaced {
            text: recovered.text.clone(),
            reason: "the model wrote its tool call as text; it runs as a tool call".into(),
        });
        *text = recovered.text;
    }

    fn model_error(&self, error: &LlmError) {
        self.error(
            StreamErrorCode::ModelError,
            format!("the model failed: {error}"),
        );
    }

    /// Runs one response's tool calls: consecutive reads and resolves up to
    /// [`MAX_PARALLEL`] at once, writes alone; results come back in the model's order.
    async fn run_calls(
        &mut self,
        runner: &ToolRunner,
        state: &mut SessionState,
        calls: &[ToolCall],
    ) -> Vec<CallOutcome> {
        let mut outcomes = Vec::with_capacity(calls.len());
        let mut index = 0;
        while index < calls.len() {
            if self.cancel.is_cancelled() {
                for call in &calls[index..] {
                    outcomes.push(CallOutcome::cancelled(call));
                }
                break;
            }
            let batch_end = runner.batch_end(calls, index, MAX_PARALLEL);
            let batch = &calls[index..batch_end];
            self.tool_calls += u32::try_from(batch.len()).unwrap_or(u32::MAX);
            outcomes.extend(runner.run_batch(state, batch).await);
            index = batch_end;
        }
        outcomes
    }
}

/// What phantom detection needs to know of a tool call and its answer.
fn executed_of(runner: &ToolRunner, outcome: &CallOutcome) -> Executed {
    let args: Value = serde_json::from_str(&outcome.call.arguments).unwrap_or_default();
    let action = args
        .get("action")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let envelope = &outcome.envelope;
    let data = envelope.data.clone().unwrap_or_default();
    let command = data
        .get("command")
        .or_else(|| args.get("command"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let output = match (data.get("stdout"), data.get("stderr")) {
        (Some(out), err) => format!(
            "{}{}",
            out.as_str().unwrap_or_default(),
            err.and_then(Value::as_str).unwrap_or_default()
        ),
        _ => data.to_string(),
    };
    Executed {
        write: runner.class_of(&outcome.call) == crate::tools::class::ToolClass::Write,
        tool: outcome.call.name.clone(),
        action,
        ok: envelope.ok,
        command,
        output,
    }
}
