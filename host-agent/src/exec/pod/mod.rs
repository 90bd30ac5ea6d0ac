//! The pod exec backend (docs/inventory.md): `pod:NS/NAME/C` targets run `sh -c CMD`
//! through the API's exec websocket, or, for a `kubectl logs …` payload ([`logs`]), read
//! the pod's log. The pod is looked up first, so a pod that does not exist (or, for exec,
//! is not running) is refused with `NOT_FOUND` before anything starts. Output is forwarded
//! by the [`pump`](crate::exec::pump) under the request's limits. Stopping a command
//! closes the websocket (`detach.rs`); the API gives no way to kill the remote process,
//! which may run on (this is logged).

mod detach;
pub mod logs;

use crate::exec::pump::{Exit, Piece, Pump};
use crate::exec::{Backend, CHUNK_BYTES, ExecError, Outcome, Run};
use crate::guard::{Refusal, RejectCode};
use crate::kube_api::exec::{ExecSocket, Frame, decode};
use crate::kube_api::types::Status;
use crate::kube_api::{Client, Error};
use detach::Detach;
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use std::future::Future;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tracing::{debug, info, warn};
use vigil_shared::ids::ExecTarget;

/// Runs commands in pods through the Kubernetes API.
#[derive(Clone)]
pub struct PodBackend {
    client: Client,
}

impl std::fmt::Debug for PodBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PodBackend").finish_non_exhaustive()
    }
}

fn refusal(code: RejectCode, reason: impl Into<String>) -> Refusal {
    Refusal {
        code,
        reason: reason.into(),
    }
}

/// An API failure before anything started: `NOT_FOUND` for a 404, else `EXECUTION_FAILED`.
fn api_refusal(what: &str, e: &Error) -> Refusal {
    match e {
        Error::Api(s) if s.code == 404 => {
            refusal(RejectCode::NotFound, format!("{what}: {}", s.message))
        }
        _ => refusal(RejectCode::ExecutionFailed, format!("{what}: {e}")),
    }
}

/// The exit code an exec's status reports; other failures (the shell could not start, the
/// container is gone) are returned as text for stderr.
pub fn exit_code(status: Option<&Status>) -> Result<i32, ExecError> {
    let Some(status) = status else {
        return Err(ExecError::Unusable(
            "the exec stream ended without an exit status".to_owned(),
        ));
    };
    match (status.status.as_deref(), status.reason.as_deref()) {
        (Some("Success"), _) => Ok(0),
        (Some("Failure"), Some("NonZeroExitCode")) => status
            .details
            .as_ref()
            .and_then(|d| d.causes.as_ref())
            .into_iter()
            .flatten()
            .find(|c| c.reason.as_deref() == Some("ExitCode"))
            .and_then(|c| c.message.as_deref()?.trim().parse().ok())
            .ok_or_else(|| {
                ExecError::Unusable("a non-zero exit code the API did not state".to_owned())
            }),
        _ => {
            Err(ExecError::Unusable(status.message.clone().unwrap_or_else(
                || format!("exec failed: {:?}", status.reason),
            )))
        }
    }
}

impl PodBackend {
    /// A backend using `client` (its default namespace is never used).
    pub fn new(client: Client) -> Self {
        PodBackend { client }
    }

    async fn run_pod(&self, run: Run<'_>) -> Result<Outcome, Refusal> {
        let started = Instant::now();
        let ExecTarget::Pod {
            namespace,
            name,
            container,
        } = run.target
        else {
            return Err(refusal(
                RejectCode::InvalidInput,
                format!("target {} is not a pod", run.target),
            ));
        };
        let pod = bounded(&run, started, self.client.get_pod(namespace, name))
            .await?
            .map_err(|e| api_refusal(&format!("looking up pod {namespace}/{name}"), &e))?
            .ok_or_else(|| {
                refusal(
                    RejectCode::NotFound,
                    format!("pod {namespace}/{name} does not exist"),
                )
            })?;
        let containers: Vec<&str> = pod
            .spec
            .as_ref()
            .map(|s| s.containers.iter().map(|c| c.name.as_str()).collect())
            .unwrap_or_default();
        if !container.is_empty() && !containers.contains(&container.as_str()) {
            return Err(refusal(
                RejectCode::NotFound,
                format!(
                    "pod {namespace}/{name} has no container {container:?} (it has {containers:?})"
                ),
            ));
        }
        if let Some(call) = logs::parse(run.command, namespace, name, container) {
            let call = call.map_err(|e| refusal(RejectCode::InvalidInput, e.to_string()))?;
            let params = call.params(run.limits.output_cap.saturating_add(1));
            let body = bounded(
                &run,
                started,
                self.client.pod_logs(namespace, name, &params),
            )
            .await?
            .map_err(|e| api_refusal(&format!("reading the log of pod {namespace}/{name}"), &e))?;
            let (tx, rx) = mpsc::channel(4);
            let mut detach = Detach::new(vec![tokio::spawn(forward_log(body, tx))]);
            let mut pump = Pump::for_run(&run);
            pump.cut_exit = Some(0);
            return Ok(pump.run(started, rx, &mut detach).await);
        }
        let phase = pod
            .status
            .as_ref()
            .and_then(|s| s.phase.as_deref())
            .unwrap_or("Unknown");
        if phase != "Running" {
            return Err(refusal(
                RejectCode::NotFound,
                format!("pod {namespace}/{name} is {phase}, not Running"),
            ));
        }
        let argv = ["sh", "-c", run.command];
        let container = (!container.is_empty()).then_some(container.as_str());
        let exec = self.client.exec(namespace, name, container, &argv);
        let socket = bounded(&run, started, exec)
            .await?
            .map_err(|e| api_refusal(&format!("exec in pod {namespace}/{name}"), &e))?;
        let (tx, rx) = mpsc::channel(4);
        let mut detach = Detach::new(vec![tokio::spawn(forward_exec(socket, tx))]);
        let outcome = Pump::for_run(&run).run(started, rx, &mut detach).await;
        if detach.stopped {
            info!(
                request = %run.request_id,
                pod = %format!("{namespace}/{name}"),
                "closed the exec stream; the process in the pod may still be running"
            );
        }
        Ok(outcome)
    }
}

/// Send `data` as pieces of at most [`CHUNK_BYTES`]; `false` when the pump is gone.
async fn send_chunks(tx: &mpsc::Sender<Piece>, data: &[u8], wrap: fn(Vec<u8>) -> Piece) -> bool {
    for chunk in data.chunks(CHUNK_BYTES) {
        if tx.send(wrap(chunk.to_vec())).await.is_err() {
            return false;
        }
    }
    true
}

/// Forward an exec stream's stdout and stderr, then its exit (the status's code, or its
/// failure on stderr and no code).
async fn forward_exec(mut socket: ExecSocket, tx: mpsc::Sender<Piece>) {
    let mut status = None;
    while let Some(message) = socket.next().await {
        let message = match message {
            Ok(message) => message,
            Err(error) => {
                debug!(%error, "the exec stream failed");
                break;
            }
        };
        let sent = match decode(message) {
            Frame::Stdout(data) => send_chunks(&tx, &data, Piece::Stdout).await,
            Frame::Stderr(data) => send_chunks(&tx, &data, Piece::Stderr).await,
            Frame::Status(s) => {
                status = Some(s);
                break;
            }
            Frame::Other => true,
        };
        if !sent {
            return;
        }
    }
    let code = match exit_code(status.as_ref()) {
        Ok(code) => Some(code),
        Err(text) => {
            let _ = tx
                .send(Piece::Stderr(format!("{text}\n").into_bytes()))
                .await;
            None
        }
    };
    let exit = Exit {
        code,
        ..Exit::default()
    };
    let _ = tx.send(Piece::Exit(exit)).await;
}

/// Forward a log body as stdout, then exit 0 (or the error on stderr and exit 1).
async fn forward_log(mut body: Incoming, tx: mpsc::Sender<Piece>) {
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(frame) => {
                if let Ok(data) = frame.into_data()
                    && !send_chunks(&tx, &data, Piece::Stdout).await
                {
                    return;
                }
            }
            Err(e) => {
                let text = format!("reading the pod log failed: {e}\n").into_bytes();
                let _ = tx.send(Piece::Stderr(text)).await;
                let _ = tx.send(Piece::Exit(Exit::code(1))).await;
                return;
            }
        }
    }
    let _ = tx.send(Piece::Exit(Exit::code(0))).await;
}

/// Wait for an API call before anything started, within the request's timeout and cancel.
async fn bounded<T>(
    run: &Run<'_>,
    started: Instant,
    call: impl Future<Output = T>,
) -> Result<T, Refusal> {
    let deadline = started + run.limits.timeout;
    tokio::select! {
        result = call => Ok(result),
        _ = run.cancel.cancelled() => Err(refusal(RejectCode::ExecutionFailed, "cancelled before it started")),
        _ = tokio::time::sleep_until(deadline) => {
            warn!(request = %run.request_id, "the Kubernetes API did not answer in time");
            Err(refusal(RejectCode::ExecutionFailed, "the Kubernetes API did not answer in time"))
        }
    }
}

impl Backend for PodBackend {
    fn run<'a>(&'a self, run: Run<'a>) -> BoxFuture<'a, Result<Outcome, Refusal>> {
        Box::pin(self.run_pod(run))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn status(value: serde_json::Value) -> Status {
        serde_json::from_value(value).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn exec_statuses_map_to_exit_codes() {
        assert_eq!(
            exit_code(Some(&status(json!({"status": "Success"})))),
            Ok(0)
        );
        let three = status(json!({"status": "Failure", "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": "3"}]}}));
        assert_eq!(exit_code(Some(&three)), Ok(3));
        let unstated = status(json!({"status": "Failure", "reason": "NonZeroExitCode"}));
        assert!(exit_code(Some(&unstated)).is_err());
        let no_shell = status(json!({"status": "Failure", "reason": "InternalError",
            "message": "exec: \"sh\": executable file not found in $PATH"}));
        assert!(
            exit_code(Some(&no_shell))
                .is_err_and(|e| e.to_string().contains("executable file not found"))
        );
        assert!(exit_code(None).is_err());
    }
}
