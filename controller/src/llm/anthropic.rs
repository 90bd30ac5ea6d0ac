//! The Anthropic Messages protocol: `POST {base_url}/messages` with `stream: true`. The
//! system prompt is top-level, tool calls are `tool_use` content blocks, tool results are
//! `tool_result` blocks of a user message, and two messages in a row never share a role.
//! [`AnthropicDecoder`] emits a tool call at its `content_block_stop`.

mod request;

use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::Value;
use tracing::Instrument;

pub use request::{messages, request_body};

use super::sse::{self, Decoder};
use super::{
    ChatRequest, EventStream, LlmConfig, LlmError, ModelProvider, StreamEvent, ToolCall, retry,
};

/// The `anthropic-version` header sent with every call.
pub const API_VERSION: &str = "2023-06-01";

/// A model behind the Anthropic Messages API.
#[derive(Debug)]
pub struct Anthropic {
    config: LlmConfig,
    client: reqwest::Client,
}

impl Anthropic {
    /// The provider for `config`, sending with `client`.
    pub fn new(config: LlmConfig, client: reqwest::Client) -> Anthropic {
        Anthropic { config, client }
    }
}

impl ModelProvider for Anthropic {
    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<EventStream, LlmError>> {
        let span = tracing::info_span!("model_call", provider = "anthropic",
            model = %self.config.model, messages = request.messages.len());
        Box::pin(
            async move {
                let body = request_body(&self.config, request);
                let url = self.config.endpoint("messages");
                let response = retry::send(&self.config, || {
                    let builder = self
                        .client
                        .post(&url)
                        .header(reqwest::header::ACCEPT, "text/event-stream")
                        .header("anthropic-version", API_VERSION)
                        .json(&body);
                    match &self.config.api_key {
                        Some(key) => builder.header("x-api-key", key),
                        None => builder,
                    }
                })
                .await?;
                Ok(sse::events(
                    response,
                    AnthropicDecoder::default(),
                    self.config.idle_timeout,
                ))
            }
            .instrument(span),
        )
    }

    fn name(&self) -> &str {
        "anthropic"
    }

    fn model(&self) -> &str {
        &self.config.model
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Event {
    #[serde(rename = "type")]
    kind: String,
    message: Option<StartedMessage>,
    index: Option<u32>,
    content_block: Option<Block>,
    delta: Option<Delta>,
    usage: Option<Usage>,
    error: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct StartedMessage {
    usage: Option<Usage>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Block {
    #[serde(rename = "type")]
    kind: String,
    id: Option<String>,
    name: Option<String>,
    input: Option<Value>,
    text: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Delta {
    text: Option<String>,
    partial_json: Option<String>,
    stop_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Usage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
}

impl Usage {
    fn input(&self) -> Option<u64> {
        let parts = [
            self.input_tokens,
            self.cache_creation_input_tokens,
            self.cache_read_input_tokens,
        ];
        parts
            .iter()
            .any(Option::is_some)
            .then(|| parts.iter().flatten().sum())
    }
}

/// A `tool_use` block still arriving.
#[derive(Debug)]
struct OpenTool {
    index: u32,
    id: String,
    name: String,
    json: String,
    /// A non-empty `input` given whole in `content_block_start`.
    input: Option<String>,
}

/// Reassembles the events of one `messages` stream.
#[derive(Debug, Default)]
pub struct AnthropicDecoder {
    tools: Vec<OpenTool>,
    input_tokens: u64,
    output_tokens: u64,
    stop_reason: Option<String>,
    done: bool,
}

impl Decoder for AnthropicDecoder {
    fn feed(&mut self, data: &str) -> Result<Vec<StreamEvent>, LlmError> {
        let event: Event = sse::parse("messages event", data)?;
        let mut events = Vec::new();
        match event.kind.as_str() {
            "message_start" => {
                if let Some(usage) = event.message.and_then(|m| m.usage) {
                    self.count(&usage);
                }
            }
            "content_block_start" => {
                let block = event.content_block.unwrap_or_default();
                self.start(event.index.unwrap_or(0), block, &mut events);
            }
            "content_block_delta" => {
                let delta = event.delta.unwrap_or_default();
                if let Some(text) = delta.text.filter(|text| !text.is_empty()) {
                    events.push(StreamEvent::TextDelta(text));
                }
                if let Some(piece) = delta.partial_json {
                    let index = event.index.unwrap_or(0);
                    if let Some(tool) = self.tools.iter_mut().find(|t| t.index == index) {
                        tool.json.push_str(&piece);
                    }
                }
            }
            "content_block_stop" => {
                let index = event.index.unwrap_or(0);
                if let Some(at) = self.tools.iter().position(|t| t.index == index) {
                    events.push(StreamEvent::ToolCall(finish(self.tools.remove(at))));
                }
            }
            "message_delta" => {
                if let Some(reason) = event.delta.and_then(|d| d.stop_reason) {
                    self.stop_reason = Some(reason);
                }
                if let Some(usage) = event.usage {
                    self.count(&usage);
                }
            }
            "message_stop" => {
                self.done = true;
                for tool in std::mem::take(&mut self.tools) {
                    events.push(StreamEvent::ToolCall(finish(tool)));
                }
                events.push(StreamEvent::Usage {
                    input_tokens: self.input_tokens,
                    output_tokens: self.output_tokens,
                });
                events.push(StreamEvent::Finished {
                    stop_reason: self.stop_reason.take(),
                });
            }
            "error" => return Err(remote_error(event.error.as_ref())),
            _ => {} // ping, and event types newer than this client
        }
        Ok(events)
    }

    fn is_done(&self) -> bool {
        self.done
    }
}

impl AnthropicDecoder {
    fn count(&mut self, usage: &Usage) {
        if let Some(input) = usage.input() {
            self.input_tokens = input;
        }
        if let Some(output) = usage.output_tokens {
            self.output_tokens = output;
        }
    }

    fn start(&mut self, index: u32, block: Block, events: &mut Vec<StreamEvent>) {
        match block.kind.as_str() {
            "text" => {
                if let Some(text) = block.text.filter(|text| !text.is_empty()) {
                    events.push(StreamEvent::TextDelta(text));
                }
            }
            "tool_use" => self.tools.push(OpenTool {
                index,
                id: block.id.unwrap_or_else(|| format!("toolu_{index}")),
                name: block.name.unwrap_or_default(),
                json: String::new(),
                input: block
                    .input
                    .filter(|input| input.as_object().is_some_and(|o| !o.is_empty()))
                    .map(|input| input.to_string()),
            }),
            _ => {} // thinking and server-side tool blocks are not shown
        }
    }
}

fn finish(tool: OpenTool) -> ToolCall {
    let arguments = if !tool.json.is_empty() {
        tool.json
    } else {
        tool.input.unwrap_or_else(|| "{}".to_owned())
    };
    ToolCall {
        id: tool.id,
        name: tool.name,
        arguments,
    }
}

fn remote_error(error: Option<&Value>) -> LlmError {
    let field = |name: &str| {
        error
            .and_then(|e| e.get(name))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    LlmError::Remote {
        kind: field("type").unwrap_or_else(|| "error".into()),
        message: field("message").unwrap_or_else(|| "(no message)".into()),
    }
}

#[cfg(test)]
mod tests;
