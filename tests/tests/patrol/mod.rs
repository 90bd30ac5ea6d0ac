//! Watching unasked, with real parts: patrol checks against real state (a tmpfs filled
//! past the threshold), Alertmanager's webhook from Debian's `prometheus` and
//! `prometheus-alertmanager` started by the test, and notifications to a local webhook
//! receiver across a controller restart and a receiver that is down for a while.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::print_stderr)] // helpers outside #[test] functions

mod alerts;
mod checks;
mod outbox;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::Value;
use tokio::net::TcpListener;

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Received {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// A webhook receiver on 127.0.0.1 that records every POST and answers 200.
pub struct Receiver {
    pub addr: SocketAddr,
    pub got: Arc<Mutex<Vec<Received>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    /// On a free port, or on `port`.
    pub async fn start(port: u16) -> Receiver {
        let listener = TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("bind receiver");
        let addr = listener.local_addr().expect("addr");
        let got: Arc<Mutex<Vec<Received>>> = Arc::default();
        let app = Router::new()
            .route(
                "/hook",
                post(
                    |State(got): State<Arc<Mutex<Vec<Received>>>>,
                     headers: HeaderMap,
                     body: Bytes| async move {
                        got.lock().unwrap().push(Received { headers, body });
                        StatusCode::OK
                    },
                ),
            )
            .with_state(got.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver { addr, got, task }
    }

    pub fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    /// The messages of `event` so far.
    pub fn events(&self, event: &str) -> Vec<Received> {
        self.got
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.json()["event"] == event)
            .cloned()
            .collect()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The findings with `status` whose check is `check`.
pub async fn findings(api: &vigil_tests::Api, status: &str, check: &str) -> Vec<Value> {
    let (code, body) = api.get(&format!("/api/findings?status={status}")).await;
    assert_eq!(code, 200, "{body}");
    body["findings"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|f| f["check"] == check)
        .collect()
}
