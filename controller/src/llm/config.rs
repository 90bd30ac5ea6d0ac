//! Which model to call and how patiently: [`LlmConfig`].

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use super::LlmError;

/// Default API root of [`Provider::OpenAi`].
pub const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// Default API root of [`Provider::Anthropic`].
pub const DEFAULT_ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com/v1";
/// Output token cap sent when a request sets none (Anthropic requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;
/// Default time to wait for the response headers of one attempt.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Default time to wait for a TCP/TLS connection.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default longest silence between two chunks of a streamed answer.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// Default number of retries after the first attempt.
pub const DEFAULT_MAX_RETRIES: u32 = 3;

/// The wire protocol of the model API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// OpenAI-compatible `chat/completions` (OpenAI, Ollama, vLLM, llama.cpp, LM Studio,
    /// OpenRouter, LiteLLM).
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
}

impl Provider {
    /// The name used in configuration: `openai` or `anthropic`.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
        }
    }

    /// The provider's public API root.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Provider::OpenAi => DEFAULT_OPENAI_BASE_URL,
            Provider::Anthropic => DEFAULT_ANTHROPIC_BASE_URL,
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Provider {
    type Err = LlmError;

    fn from_str(value: &str) -> Result<Provider, LlmError> {
        match value.trim().to_ascii_lowercase().as_str() {
            "openai" => Ok(Provider::OpenAi),
            "anthropic" => Ok(Provider::Anthropic),
            other => Err(LlmError::NotConfigured(format!(
                "unknown provider {other:?}: use openai (any OpenAI-compatible server) or anthropic"
            ))),
        }
    }
}

/// Everything needed to call one model.
#[derive(Clone, PartialEq)]
pub struct LlmConfig {
    /// The wire protocol.
    pub provider: Provider,
    /// The API root; the client appends `/chat/completions` or `/messages`.
    pub base_url: String,
    /// Sent as `Authorization: Bearer` (OpenAI) or `x-api-key` (Anthropic) when set.
    pub api_key: Option<String>,
    /// The model's name.
    pub model: String,
    /// Longest wait for the response headers of one attempt.
    pub request_timeout: Duration,
    /// Longest wait for a connection.
    pub connect_timeout: Duration,
    /// Longest silence between two chunks of a streamed answer.
    pub idle_timeout: Duration,
    /// Retries after the first attempt (429, 5xx, connection errors).
    pub max_retries: u32,
}

impl LlmConfig {
    /// `model` at the provider's default API root with default timeouts, no API key.
    pub fn new(provider: Provider, model: impl Into<String>) -> LlmConfig {
        LlmConfig {
            provider,
            base_url: provider.default_base_url().to_owned(),
            api_key: None,
            model: model.into(),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_retries: DEFAULT_MAX_RETRIES,
        }
    }

    /// Refuses an empty model or a base URL that is not `http(s)://…`.
    pub fn check(&self) -> Result<(), LlmError> {
        if self.model.trim().is_empty() {
            return Err(LlmError::NotConfigured(format!(
                "provider {} needs a model name (VIGIL_LLM_MODEL / --llm-model)",
                self.provider
            )));
        }
        let url = reqwest::Url::parse(self.base_url.trim()).map_err(|e| {
            LlmError::NotConfigured(format!("base URL {:?} is not a URL: {e}", self.base_url))
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(LlmError::NotConfigured(format!(
                "base URL {:?} must be http:// or https://",
                self.base_url
            )));
        }
        Ok(())
    }

    /// `base_url` joined with `path` (`chat/completions`, `messages`).
    pub(crate) fn endpoint(&self, path: &str) -> String {
        format!("{}/{path}", self.base_url.trim().trim_end_matches('/'))
    }
}

impl fmt::Debug for LlmConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmConfig")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("model", &self.model)
            .field("request_timeout", &self.request_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("max_retries", &self.max_retries)
            .finish()
    }
}
