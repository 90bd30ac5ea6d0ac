//! Following pods and deployments across all namespaces: every change marks the inventory
//! as changed. Metadata-only watches keep the traffic small; errors back off (the watcher's
//! default exponential backoff), so a cluster that is away never makes this loop spin.

use futures_util::{Stream, StreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::PartialObjectMeta;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event, watcher};
use kube::{Api, Client};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tracing::{debug, warn};

/// Pause before a watch stream that ended is started again.
const RESTART_PAUSE: Duration = Duration::from_secs(5);

/// Watch pods and deployments until aborted, notifying `changed` for every change.
pub async fn follow(client: Client, changed: Arc<Notify>) {
    let pods: Api<PartialObjectMeta<Pod>> = Api::all(client.clone());
    let deployments: Api<PartialObjectMeta<Deployment>> = Api::all(client);
    tokio::join!(
        follow_kind(
            "pod",
            || watcher(pods.clone(), watcher::Config::default()),
            &changed
        ),
        follow_kind(
            "deployment",
            || watcher(deployments.clone(), watcher::Config::default()),
            &changed
        ),
    );
}

/// Follow one kind's watch stream, restarting it (after a pause) if it ever ends.
async fn follow_kind<S, T>(kind: &'static str, start: impl Fn() -> S, changed: &Notify)
where
    S: Stream<Item = Result<Event<T>, watcher::Error>> + Send,
{
    loop {
        let stream = start().default_backoff();
        let mut stream = std::pin::pin!(stream);
        // The first full list is what the scan already saw; later relists (after the
        // watch lost its place) may hide changes, so they count.
        let mut listed_once = false;
        while let Some(item) = stream.next().await {
            match item {
                Ok(Event::Apply(_) | Event::Delete(_)) => changed.notify_one(),
                Ok(Event::InitDone) => {
                    if listed_once {
                        changed.notify_one();
                    }
                    listed_once = true;
                }
                Ok(Event::Init | Event::InitApply(_)) => {}
                Err(e) => warn!(kind, error = %e, "kubernetes watch failed; retrying with backoff"),
            }
        }
        debug!(kind, "kubernetes watch stream ended; restarting");
        tokio::time::sleep(RESTART_PAUSE).await;
    }
}
