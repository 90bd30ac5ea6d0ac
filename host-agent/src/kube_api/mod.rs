//! A small Kubernetes API client: only what discovery and `pod:` targets use (lists, a
//! metadata watch, `GET` of a pod, pod logs, pod exec), over HTTP/1.1 with hyper and
//! rustls, decoding only the fields the agent reads ([`types`]).
//!
//! Start with [`Config`] (from a [`Kubeconfig`]'s current context, or in-cluster) and
//! [`Client`]; [`exec`] is the websocket. Kubeconfig credential plugins (`exec`,
//! `auth-provider`) are refused, never run.

pub mod client;
pub mod config;
pub mod exec;
pub mod kubeconfig;
pub mod pods;
mod tls;
pub mod types;

pub use client::{Client, ListParams};
pub use config::{Auth, Config};
pub use kubeconfig::Kubeconfig;
pub use pods::LogParams;

use std::time::Duration;

/// What the API server said when it refused a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status (404, 403, …).
    pub code: u16,
    pub message: String,
    /// The `Status` reason (`NotFound`, `Forbidden`, …), if given.
    pub reason: String,
}

/// A failed configuration or request.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Config(String),
    /// The kubeconfig asks for something the agent refuses to do (run a credential plugin).
    #[error("{0}")]
    Refused(String),
    #[error("the API answered {} {}: {}", .0.code, .0.reason, .0.message)]
    Api(ApiError),
    #[error("cannot connect to {0}: {1}")]
    Connect(String, #[source] std::io::Error),
    #[error("TLS with {0} failed: {1}")]
    Tls(String, #[source] std::io::Error),
    #[error("HTTP: {0}")]
    Http(#[from] hyper::Error),
    #[error("the API did not answer within {0:?}")]
    Timeout(Duration),
    #[error("the answer is larger than {0} bytes")]
    TooLarge(usize),
    #[error("cannot decode the answer: {0}")]
    Decode(#[from] serde_json::Error),
    #[error("websocket: {0}")]
    WebSocket(Box<tokio_tungstenite::tungstenite::Error>),
}

/// The client's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod client_tests;
#[cfg(test)]
mod tests;
