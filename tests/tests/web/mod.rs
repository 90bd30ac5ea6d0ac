//! The web page in a real browser (Chromium over WebDriver) against a real controller, a
//! real agent and the scripted model: sign-in, streamed Markdown and tool cards with real
//! output, `@` and `/` autocomplete, cancel, approval cards (approve with a diff, deny with
//! a reason), model output rendered inert, the findings, agents, resources and audit views, and
//! screenshots at a desktop and a phone width (target/screenshots; docs/images with
//! VIGIL_UPDATE_SCREENSHOTS=1).

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::print_stderr)]

mod browser;
mod chat;
mod findings;
mod writes;

use serde_json::Value;
use vigil_tests::chat::{ChatHost, scripted_llm_args};
use vigil_tests::model_server::{Protocol, ScriptedModel};

/// A desktop and a phone viewport.
pub const DESKTOP: (u32, u32) = (1280, 860);
pub const PHONE: (u32, u32) = (390, 844);

/// A controller with an agent, and the model when there is one.
#[derive(Debug)]
pub struct Env {
    pub host: ChatHost,
    pub model: Option<ScriptedModel>,
}

impl Env {
    /// With the scripted OpenAI-compatible model.
    pub async fn with_model() -> Env {
        let model = ScriptedModel::start(Protocol::OpenAi).await;
        let host = ChatHost::start(scripted_llm_args(&model, Protocol::OpenAi)).await;
        Env {
            host,
            model: Some(model),
        }
    }

    /// Direct mode: no model configured.
    pub async fn without_model() -> Env {
        Env {
            host: ChatHost::start(Vec::new()).await,
            model: None,
        }
    }

    pub fn model(&self) -> &ScriptedModel {
        self.model.as_ref().expect("a model")
    }

    pub fn base(&self) -> String {
        self.host.ctrl.api.base().to_owned()
    }

    pub fn token(&self) -> String {
        self.host.ctrl.api.token().to_owned()
    }

    /// The one chat session's id.
    pub async fn only_session(&self) -> Value {
        let (status, sessions) = self.host.ctrl.api.get("/api/ai/sessions").await;
        assert_eq!(status, 200, "{sessions}");
        assert_eq!(sessions.as_array().unwrap().len(), 1, "{sessions}");
        sessions[0].clone()
    }
}

/// A tool call for the scripted model.
pub fn call(name: &str, args: Value) -> (String, Value) {
    (name.to_owned(), args)
}
