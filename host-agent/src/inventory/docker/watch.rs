//! Following the engine's container events: every event that changes what a scan would
//! see marks a change; the stream is reopened with backoff when it ends or fails.

use bollard::Docker;
use bollard::models::EventMessage;
use bollard::query_parameters::EventsOptions;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio_stream::StreamExt;
use tracing::{debug, warn};

/// First wait before reopening the event stream.
const BACKOFF_MIN: Duration = Duration::from_secs(1);
/// Longest wait before reopening it.
const BACKOFF_MAX: Duration = Duration::from_secs(30);

/// Container actions that change a container's resource (`health_status: healthy`
/// counts as `health_status`). Exec, attach, top and copy events do not, and the exec
/// backend causes them on every command.
const CHANGES: &[&str] = &[
    "create",
    "start",
    "restart",
    "stop",
    "die",
    "kill",
    "oom",
    "destroy",
    "rename",
    "pause",
    "unpause",
    "update",
    "health_status",
];

/// Whether an event's action changes what a scan reports.
pub fn is_change(action: &str) -> bool {
    let verb = action.split(':').next().unwrap_or_default().trim();
    CHANGES.contains(&verb)
}

/// Follow the engine's container events forever, notifying `changed` for each change.
/// After the stream was lost, a reconnection also notifies (events may have been
/// missed). Never returns; the task is aborted when the agent stops.
pub async fn follow_events(docker: Docker, changed: Arc<Notify>) {
    let mut backoff = BACKOFF_MIN;
    let mut lost = false;
    loop {
        if lost {
            match docker.ping().await {
                Ok(_) => {
                    debug!("docker engine answers again; rescanning");
                    changed.notify_one();
                }
                Err(error) => {
                    debug!(%error, "docker engine still unreachable");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(BACKOFF_MAX);
                    continue;
                }
            }
        }
        let options = EventsOptions {
            filters: Some(HashMap::from([(
                "type".to_owned(),
                vec!["container".to_owned()],
            )])),
            ..EventsOptions::default()
        };
        let mut events = docker.events(Some(options));
        let mut seen = 0u64;
        let ended = loop {
            match events.next().await {
                Some(Ok(event)) => {
                    seen += 1;
                    if relevant(&event) {
                        changed.notify_one();
                    }
                }
                Some(Err(error)) => break error.to_string(),
                None => break "the stream ended".to_owned(),
            }
        };
        if seen > 0 {
            backoff = BACKOFF_MIN;
        }
        warn!(reason = %ended, retry_in_s = backoff.as_secs(), "docker event stream lost");
        lost = true;
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(BACKOFF_MAX);
    }
}

fn relevant(event: &EventMessage) -> bool {
    let action = event.action.as_deref().unwrap_or_default();
    let change = is_change(action);
    if change {
        let id = event
            .actor
            .as_ref()
            .and_then(|a| a.id.as_deref())
            .unwrap_or_default();
        debug!(
            action,
            container = id.get(..12).unwrap_or(id),
            "docker container event"
        );
    }
    change
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifecycle_events_are_changes_exec_events_are_not() {
        for a in [
            "start",
            "die",
            "destroy",
            "health_status: unhealthy",
            "rename",
            "pause",
        ] {
            assert!(is_change(a), "{a}");
        }
        for a in [
            "exec_create: sh -c ls",
            "exec_start: sh",
            "exec_die",
            "attach",
            "top",
            "",
        ] {
            assert!(!is_change(a), "{a}");
        }
    }
}
