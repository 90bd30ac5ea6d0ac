//! Model providers: a thin streaming client for the two wire protocols Vigil speaks to a
//! language model, with no vendor SDK.
//!
//! - [`openai`]: `POST {base_url}/chat/completions`, the OpenAI-compatible protocol spoken
//!   by OpenAI, Ollama (`http://HOST:11434/v1`), vLLM, llama.cpp, LM Studio, OpenRouter and
//!   LiteLLM.
//! - [`anthropic`]: `POST {base_url}/messages`, the Anthropic Messages protocol.
//!
//! Both turn a [`ChatRequest`] into one streamed answer: an [`EventStream`] of
//! [`StreamEvent`]s (text deltas, complete tool calls, usage, then `Finished`). The serde
//! types are tolerant (missing fields default, unknown fields are ignored); a tool call's
//! arguments are passed on as the exact text the model streamed, even when it is not JSON.
//! [`retry`] retries 429, 5xx and connection failures before any byte of the answer is
//! delivered; [`sse`] applies the idle timeout between chunks and refuses a stream that ends
//! before the protocol's end marker. Start at [`build`] with an [`LlmConfig`].

pub mod anthropic;
pub mod config;
pub mod openai;
pub mod retry;
pub mod sse;

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;

use futures_util::Stream;
use futures_util::future::BoxFuture;

pub use config::{
    DEFAULT_ANTHROPIC_BASE_URL, DEFAULT_MAX_TOKENS, DEFAULT_OPENAI_BASE_URL, LlmConfig, Provider,
};

/// A tool the model may call: its name, what it does, and the JSON schema of its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The tool's name (`query`, `read`, …).
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON schema of the tool's single argument object.
    pub parameters: serde_json::Value,
}

/// One tool call made by the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The call's id, echoed in the tool result (`call_<n>` when the server sent none).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments exactly as the model streamed them: JSON text, possibly broken.
    pub arguments: String,
}

/// One message of the conversation (the system prompt is [`ChatRequest::system`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// What the person wrote (or text the controller injects on their side).
    User {
        /// The text.
        text: String,
    },
    /// An earlier answer of the model.
    Assistant {
        /// Its text (may be empty).
        text: String,
        /// Its tool calls (may be empty).
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call.
    Tool {
        /// The [`ToolCall::id`] this answers.
        tool_call_id: String,
        /// The tool's name.
        name: String,
        /// The result's text.
        content: String,
    },
}

/// One model call.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatRequest {
    /// The system prompt (empty: none).
    pub system: String,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// Forbid tool use for this call (the last turn of a budget).
    pub text_only: bool,
    /// Cap on output tokens (Anthropic requires one: default [`DEFAULT_MAX_TOKENS`]).
    pub max_tokens: Option<u32>,
}

/// One event of a streamed answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// A piece of the answer's text.
    TextDelta(String),
    /// A tool call, once all of it has arrived.
    ToolCall(ToolCall),
    /// Token usage of the whole call.
    Usage {
        /// Tokens read (prompt, including cached prompt tokens).
        input_tokens: u64,
        /// Tokens written.
        output_tokens: u64,
    },
    /// The answer is complete (always the last event of a successful stream).
    Finished {
        /// Why the model stopped (`stop`, `tool_calls`, `end_turn`, `tool_use`, …), as sent.
        stop_reason: Option<String>,
    },
}

/// The events of one streamed answer; an error ends it.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, LlmError>> + Send>>;

/// A language model behind one of the supported wire protocols.
pub trait ModelProvider: Send + Sync + fmt::Debug {
    /// Sends `request` and returns its answer as a stream, once the server accepted it
    /// (retries happen in here, never after the first event).
    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<EventStream, LlmError>>;
    /// The protocol: `openai` or `anthropic`.
    fn name(&self) -> &str;
    /// The model's name as sent to the server.
    fn model(&self) -> &str;
}

/// What can go wrong talking to a model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    /// No model is configured, or the configuration cannot work.
    #[error("no language model is configured: {0}")]
    NotConfigured(String),
    /// The server answered with an HTTP error (after any retries).
    #[error("model API answered HTTP {status}: {message}")]
    Http {
        /// The HTTP status code.
        status: u16,
        /// The server's error body (truncated).
        message: String,
    },
    /// The server could not be reached or the connection broke.
    #[error("cannot reach the model API: {0}")]
    Network(String),
    /// The server sent something that is not the protocol (bad SSE or JSON, early end).
    #[error("model API protocol error: {0}")]
    Protocol(String),
    /// The server did not answer or went silent for too long.
    #[error("model API timed out: {0}")]
    Timeout(String),
    /// The server reported an error inside the stream (Anthropic `error` event, or an
    /// `error` object in an OpenAI-compatible chunk).
    #[error("model API reported an error ({kind}): {message}")]
    Remote {
        /// The error's type (`overloaded_error`, …), `error` when none was given.
        kind: String,
        /// The error's message.
        message: String,
    },
}

impl LlmError {
    /// What the chat answers when no model is configured: how to configure one.
    pub fn not_configured() -> LlmError {
        LlmError::NotConfigured(
            "set VIGIL_LLM_PROVIDER (openai, for any OpenAI-compatible server, or anthropic) \
             and VIGIL_LLM_MODEL, and VIGIL_LLM_BASE_URL / VIGIL_LLM_API_KEY as needed \
             (or --llm-provider, --llm-model, --llm-base-url, --llm-api-key, or the [llm] \
             table of the --config file), then restart the controller"
                .into(),
        )
    }
}

/// Builds the provider `config` names, with its HTTP client.
pub fn build(config: &LlmConfig) -> Result<Arc<dyn ModelProvider>, LlmError> {
    config.check()?;
    let client = retry::http_client(config)?;
    Ok(match config.provider {
        Provider::OpenAi => Arc::new(openai::OpenAi::new(config.clone(), client)),
        Provider::Anthropic => Arc::new(anthropic::Anthropic::new(config.clone(), client)),
    })
}

/// Cuts `text` to at most `max` characters, marking the cut.
pub(crate) fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}… (truncated)", &text[..at]),
        None => text.to_owned(),
    }
}
