//! The OpenAI-compatible protocol: `POST {base_url}/chat/completions` with `stream: true`.
//! Tool-call deltas arrive split across chunks keyed by `index` (id and name first, the
//! arguments in pieces); [`OpenAiDecoder`] reassembles them and emits each call whole when
//! the choice finishes or at `[DONE]` (not when the next index starts: some servers
//! interleave the calls' pieces).

mod request;

use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::Value;
use tracing::Instrument;

pub use request::request_body;

use super::sse::{self, Decoder};
use super::{
    ChatRequest, EventStream, LlmConfig, LlmError, ModelProvider, StreamEvent, ToolCall, retry,
};

/// A model behind an OpenAI-compatible API.
#[derive(Debug)]
pub struct OpenAi {
    config: LlmConfig,
    client: reqwest::Client,
}

impl OpenAi {
    /// The provider for `config`, sending with `client`.
    pub fn new(config: LlmConfig, client: reqwest::Client) -> OpenAi {
        OpenAi { config, client }
    }
}

impl ModelProvider for OpenAi {
    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<EventStream, LlmError>> {
        let span = tracing::info_span!("model_call", provider = "openai",
            model = %self.config.model, messages = request.messages.len());
        Box::pin(
            async move {
                let body = request_body(&self.config, request);
                let url = self.config.endpoint("chat/completions");
                let response = retry::send(&self.config, || {
                    let builder = self
                        .client
                        .post(&url)
                        .header(reqwest::header::ACCEPT, "text/event-stream")
                        .json(&body);
                    match &self.config.api_key {
                        Some(key) => builder.bearer_auth(key),
                        None => builder,
                    }
                })
                .await?;
                Ok(sse::events(
                    response,
                    OpenAiDecoder::default(),
                    self.config.idle_timeout,
                ))
            }
            .instrument(span),
        )
    }

    fn name(&self) -> &str {
        "openai"
    }

    fn model(&self) -> &str {
        &self.config.model
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Chunk {
    choices: Option<Vec<Choice>>,
    usage: Option<Usage>,
    error: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Choice {
    delta: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Delta {
    content: Option<String>,
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ToolCallDelta {
    index: Option<u32>,
    id: Option<String>,
    function: Option<FunctionDelta>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct FunctionDelta {
    name: Option<String>,
    /// A string piece; a few servers send the whole object instead.
    arguments: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Usage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
}

/// A tool call still arriving.
#[derive(Debug)]
struct Partial {
    index: u32,
    id: Option<String>,
    name: String,
    arguments: String,
}

/// Reassembles the chunks of one `chat/completions` stream.
#[derive(Debug, Default)]
pub struct OpenAiDecoder {
    calls: Vec<Partial>,
    usage: Option<(u64, u64)>,
    stop_reason: Option<String>,
    done: bool,
}

/// Ids for tool calls the server sent without one: unique in this process.
static NEXT_CALL_ID: AtomicU64 = AtomicU64::new(0);

impl Decoder for OpenAiDecoder {
    fn feed(&mut self, data: &str) -> Result<Vec<StreamEvent>, LlmError> {
        let mut events = Vec::new();
        if data.trim() == "[DONE]" {
            self.done = true;
            self.flush(&mut events);
            if let Some((input_tokens, output_tokens)) = self.usage {
                events.push(StreamEvent::Usage {
                    input_tokens,
                    output_tokens,
                });
            }
            events.push(StreamEvent::Finished {
                stop_reason: self.stop_reason.take(),
            });
            return Ok(events);
        }
        let chunk: Chunk = sse::parse("chat/completions chunk", data)?;
        if let Some(error) = chunk.error {
            return Err(remote_error(&error));
        }
        for choice in chunk.choices.unwrap_or_default() {
            let delta = choice.delta.unwrap_or_default();
            if let Some(text) = delta.content.filter(|text| !text.is_empty()) {
                events.push(StreamEvent::TextDelta(text));
            }
            for call in delta.tool_calls.unwrap_or_default() {
                self.merge(call);
            }
            if let Some(reason) = choice.finish_reason {
                self.stop_reason = Some(reason);
                self.flush(&mut events);
            }
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some((
                usage.prompt_tokens.unwrap_or(0),
                usage.completion_tokens.unwrap_or(0),
            ));
        }
        Ok(events)
    }

    fn is_done(&self) -> bool {
        self.done
    }
}

impl OpenAiDecoder {
    fn merge(&mut self, delta: ToolCallDelta) {
        let position = match delta.index {
            Some(index) => self.calls.iter().position(|call| call.index == index),
            // No index: a new id starts a new call, anything else continues the last one.
            None => match (&delta.id, self.calls.last()) {
                (Some(id), Some(last)) if last.id.as_ref().is_some_and(|last| last != id) => None,
                (_, Some(_)) => Some(self.calls.len() - 1),
                (_, None) => None,
            },
        };
        let position = position.unwrap_or_else(|| {
            let index = delta
                .index
                .unwrap_or_else(|| self.calls.iter().map(|c| c.index + 1).max().unwrap_or(0));
            self.calls.push(Partial {
                index,
                id: None,
                name: String::new(),
                arguments: String::new(),
            });
            self.calls.len() - 1
        });
        let Some(call) = self.calls.get_mut(position) else {
            return;
        };
        if let Some(id) = delta.id.filter(|id| !id.is_empty()) {
            call.id = Some(id);
        }
        let function = delta.function.unwrap_or_default();
        if let Some(name) = function.name {
            // Names come whole in the first delta; a few servers repeat them in every one.
            if call.name != name {
                call.name.push_str(&name);
            }
        }
        match function.arguments {
            Some(Value::String(piece)) => call.arguments.push_str(&piece),
            Some(Value::Null) | None => {}
            Some(whole) => call.arguments.push_str(&whole.to_string()),
        }
    }

    fn flush(&mut self, events: &mut Vec<StreamEvent>) {
        self.calls.sort_by_key(|call| call.index);
        for call in self.calls.drain(..) {
            let id = call.id.unwrap_or_else(|| {
                format!("call_{}", NEXT_CALL_ID.fetch_add(1, Ordering::Relaxed))
            });
            events.push(StreamEvent::ToolCall(ToolCall {
                id,
                name: call.name,
                arguments: call.arguments,
            }));
        }
    }
}

fn remote_error(error: &Value) -> LlmError {
    let field = |name: &str| error.get(name).and_then(Value::as_str).map(str::to_owned);
    LlmError::Remote {
        kind: field("type")
            .or_else(|| field("code"))
            .unwrap_or_else(|| "error".into()),
        message: field("message").unwrap_or_else(|| super::truncate(&error.to_string(), 500)),
    }
}

#[cfg(test)]
mod tests;
