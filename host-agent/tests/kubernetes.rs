//! The Kubernetes source and pod backend against a local stand-in API server serving
//! recorded-shaped JSON (`tests/kubernetes/server.rs`, fixtures in
//! `tests/fixtures/kubernetes/`): discovery in `inventory.rs`, exec and logs in `pod.rs`.

mod inventory;
mod pod;
mod server;

use std::future::Future;
use std::time::Duration;

/// The pod most tests use: two containers, `server` first, running.
pub const JELLYFIN: &str = "jellyfin-7c9d8f6b5-x2x9k";

/// Fail instead of hanging: a guard, not a measurement.
pub async fn guarded<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .unwrap_or_else(|_| panic!("the test hung"))
}
