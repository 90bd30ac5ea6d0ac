//! Following pods and deployments across all namespaces: every change marks the inventory
//! as changed. Each kind is listed once to learn where to start, then watched from there
//! (metadata only, to keep the traffic small), again from the last version seen when the
//! server ends a watch, and listed again when the watch lost its place. Errors back off
//! (1 s, doubling to a minute), so a cluster that is away never makes this loop spin.

use crate::kube_api::client::{Client, with_query};
use crate::kube_api::types::{ObjectList, WatchEvent};
use crate::kube_api::{ApiError, Error};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde::de::IgnoredAny;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tracing::{debug, warn};

/// `Accept` of the first list: object metadata only, else the full objects.
const METADATA_LIST: &str =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
/// `Accept` of a watch: object metadata only, else the full objects.
const METADATA: &str =
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
/// How long the server keeps one watch open.
const WATCH_SECONDS: u64 = 290;
/// Silence on a watch after which it counts as failed.
const WATCH_IDLE: Duration = Duration::from_secs(WATCH_SECONDS + 40);
/// Longest watch event read (a full object, when the server ignores the metadata ask).
const MAX_EVENT_BYTES: usize = 16 << 20;
/// Pause before re-watching when a watch ended without saying anything.
const RESTART_PAUSE: Duration = Duration::from_secs(5);
const BACKOFF_START: Duration = Duration::from_secs(1);
const BACKOFF_MAX: Duration = Duration::from_secs(60);

/// Watch pods and deployments until aborted, notifying `changed` for every change.
pub async fn follow(client: Client, changed: Arc<Notify>) {
    tokio::join!(
        follow_kind(&client, "pod", "/api/v1/pods", &changed),
        follow_kind(&client, "deployment", "/apis/apps/v1/deployments", &changed),
    );
}

/// Follow one kind forever, listing again after a lost place and backing off on errors.
async fn follow_kind(client: &Client, kind: &'static str, path: &str, changed: &Notify) {
    // The first list is what the scan already saw; later lists (after the watch lost its
    // place) may hide changes, so they count.
    let mut listed_once = false;
    let mut backoff = BACKOFF_START;
    loop {
        match list_and_watch(client, path, changed, &mut listed_once).await {
            Ok(()) => {
                debug!(kind, "kubernetes watch lost its place; listing again");
                backoff = BACKOFF_START;
            }
            Err(error) => {
                warn!(kind, %error, "kubernetes watch failed; retrying with backoff");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(BACKOFF_MAX);
            }
        }
    }
}

/// List to learn the resource version, then watch from it until the server says the
/// version is gone (`Ok`) or something fails.
async fn list_and_watch(
    client: &Client,
    path: &str,
    changed: &Notify,
    listed_once: &mut bool,
) -> Result<(), Error> {
    let list: ObjectList<IgnoredAny> = client
        .get_json_as(&with_query(path, &[("limit", "1")]), METADATA_LIST)
        .await?;
    let mut version = list.metadata.resource_version.unwrap_or_default();
    if *listed_once {
        changed.notify_one();
    }
    *listed_once = true;
    loop {
        let seconds = WATCH_SECONDS.to_string();
        let query = with_query(
            path,
            &[
                ("watch", "true"),
                ("resourceVersion", &version),
                ("allowWatchBookmarks", "true"),
                ("timeoutSeconds", &seconds),
            ],
        );
        let body = client.get(&query, METADATA).await?.into_body();
        let mut lines = Lines::new(body);
        let mut said_anything = false;
        while let Some(line) = tokio::time::timeout(WATCH_IDLE, lines.next())
            .await
            .map_err(|_| Error::Timeout(WATCH_IDLE))??
        {
            said_anything = true;
            let event: WatchEvent = serde_json::from_slice(&line)?;
            match event.type_.as_str() {
                "ADDED" | "MODIFIED" | "DELETED" => changed.notify_one(),
                "ERROR" if event.object.code == Some(410) => return Ok(()),
                "ERROR" => {
                    return Err(Error::Api(ApiError {
                        code: event.object.code.unwrap_or(500),
                        message: "the watch reported an error".to_owned(),
                        reason: String::new(),
                    }));
                }
                _ => {}
            }
            if let Some(v) = event.object.metadata.resource_version {
                version = v;
            }
        }
        if !said_anything {
            tokio::time::sleep(RESTART_PAUSE).await;
        }
    }
}

/// The lines of a streamed body, each at most [`MAX_EVENT_BYTES`].
struct Lines {
    body: Incoming,
    buf: Vec<u8>,
    done: bool,
}

impl Lines {
    fn new(body: Incoming) -> Self {
        Lines {
            body,
            buf: Vec::new(),
            done: false,
        }
    }

    /// The next non-empty line, or `None` at the end of the body.
    async fn next(&mut self) -> Result<Option<Vec<u8>>, Error> {
        loop {
            if let Some(at) = self.buf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=at).collect();
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                return Ok(Some(line));
            }
            if self.buf.len() > MAX_EVENT_BYTES {
                return Err(Error::TooLarge(MAX_EVENT_BYTES));
            }
            if self.done {
                let rest = std::mem::take(&mut self.buf);
                return Ok((!rest.iter().all(u8::is_ascii_whitespace)).then_some(rest));
            }
            match self.body.frame().await {
                Some(frame) => {
                    if let Ok(data) = frame?.into_data() {
                        self.buf.extend_from_slice(&data);
                    }
                }
                None => self.done = true,
            }
        }
    }
}
