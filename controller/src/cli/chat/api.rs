//! The chat endpoints of the controller's HTTP API, over the CLI's [`ApiClient`].

use reqwest::header::ACCEPT;
use reqwest::{Method, Response};
use serde_json::{Value, json};

use super::input::Answer;
use crate::Result;
use crate::cli::client::ApiClient;

/// A client of `/api/ai/*` and `/api/resources`.
#[derive(Debug, Clone)]
pub struct ChatApi {
    client: ApiClient,
}

impl ChatApi {
    /// Wraps an authenticated client.
    pub fn new(client: ApiClient) -> ChatApi {
        ChatApi { client }
    }

    /// `POST /api/ai/chat`: the event stream of one turn (a refusal is [`crate::Error::Api`]).
    pub async fn start_turn(&self, body: &Value) -> Result<Response> {
        let request = self
            .client
            .request(Method::POST, "/api/ai/chat")
            .header(ACCEPT, "text/event-stream")
            .json(body);
        self.client.send(request).await
    }

    /// `POST /api/ai/sessions/{id}/cancel`: whether a turn was running.
    pub async fn cancel(&self, session: &str) -> Result<bool> {
        let path = format!("/api/ai/sessions/{session}/cancel");
        let answer: Value = self
            .client
            .json(self.client.request(Method::POST, &path).json(&json!({})))
            .await?;
        Ok(answer["cancelled"].as_bool().unwrap_or(false))
    }

    /// `POST /api/ai/approvals/{id}/approve` (body `{}`) or `…/deny` (`{"reason": …}`).
    pub async fn decide(&self, approval: &str, answer: &Answer) -> Result<Value> {
        let (verb, body) = match answer {
            Answer::Approve => ("approve", json!({})),
            Answer::Deny(reason) => ("deny", json!({ "reason": reason })),
        };
        let path = format!("/api/ai/approvals/{approval}/{verb}");
        self.client
            .json(self.client.request(Method::POST, &path).json(&body))
            .await
    }

    /// `GET /api/ai/sessions`.
    pub async fn sessions(&self) -> Result<Vec<Value>> {
        self.client
            .json(self.client.request(Method::GET, "/api/ai/sessions"))
            .await
    }

    /// `GET /api/ai/sessions/{id}`.
    pub async fn session(&self, id: &str) -> Result<Value> {
        let path = format!("/api/ai/sessions/{id}");
        self.client
            .json(self.client.request(Method::GET, &path))
            .await
    }

    /// `GET /api/ai/sessions/{id}/messages`.
    pub async fn messages(&self, id: &str) -> Result<Vec<Value>> {
        let path = format!("/api/ai/sessions/{id}/messages");
        self.client
            .json(self.client.request(Method::GET, &path))
            .await
    }

    /// `GET /api/resources?q=…`.
    pub async fn resources(&self, query: &str) -> Result<Vec<Value>> {
        let request = self
            .client
            .request(Method::GET, "/api/resources")
            .query(&[("q", query)]);
        self.client.json(request).await
    }
}
