//! The `docker:C` backend (docs/inventory.md): bollard `create_exec` of `sh -c CMD` with
//! stdout and stderr attached (no TTY, no stdin, the fixed environment), `start_exec`,
//! and the multiplexed output streamed as events under the request's limits. On
//! timeout, cancellation or the output cap the exec'd process and its descendants are
//! SIGKILLed through their host pid ([`kill`]).

mod kill;
mod stream;

use super::{Backend, FIXED_ENV, Outcome, Run};
use crate::guard::{Refusal, RejectCode};
use bollard::Docker;
use bollard::errors::Error as DockerError;
use bollard::exec::{CreateExecOptions, StartExecOptions, StartExecResults};
use futures_util::future::BoxFuture;
use std::future::Future;
use std::time::Duration;
use vigil_shared::ids::ExecTarget;

/// Longest wait for each of the engine's answers while setting a command up (whatever
/// the command's own timeout: a busy engine is not the command's fault).
const SETUP_TIMEOUT: Duration = Duration::from_secs(15);

/// Runs commands in containers of one Docker engine.
#[derive(Debug, Clone)]
pub struct DockerBackend {
    docker: Docker,
}

impl DockerBackend {
    /// A backend using `docker` (a client that has answered a ping).
    pub fn new(docker: Docker) -> Self {
        DockerBackend { docker }
    }
}

impl Backend for DockerBackend {
    fn run<'a>(&'a self, run: Run<'a>) -> BoxFuture<'a, Result<Outcome, Refusal>> {
        Box::pin(async move {
            let ExecTarget::Docker(container) = run.target else {
                return Err(refuse(
                    RejectCode::NotFound,
                    format!("target {} is not a Docker container", run.target),
                ));
            };
            if !is_container_ref(container) {
                return Err(refuse(
                    RejectCode::NotFound,
                    format!("{container:?} is not a Docker container name or id"),
                ));
            }
            let setup = Setup {
                docker: &self.docker,
                container,
                wait: SETUP_TIMEOUT,
            };
            let (container_id, container_pid) = setup.running_container().await?;
            let (exec_id, output) = setup.start(run.command).await?;
            let exec = stream::Exec {
                docker: self.docker.clone(),
                id: exec_id,
                container_id,
                container_pid,
            };
            Ok(stream::forward(run, exec, output).await)
        })
    }
}

/// Whether `name` can be a container name or id (`[a-zA-Z0-9][a-zA-Z0-9_.-]*`, as Docker
/// allows): anything else could address another engine endpoint once put in a URL path.
pub fn is_container_ref(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        && name.len() <= 255
}

fn refuse(code: RejectCode, reason: String) -> Refusal {
    Refusal { code, reason }
}

/// Talking to the engine before anything runs: every answer that means "no such
/// running container" is `NOT_FOUND`, anything else `EXECUTION_FAILED`.
struct Setup<'a> {
    docker: &'a Docker,
    container: &'a str,
    wait: Duration,
}

impl Setup<'_> {
    async fn ask<T>(
        &self,
        what: &str,
        call: impl Future<Output = Result<T, DockerError>>,
    ) -> Result<T, Refusal> {
        let container = self.container;
        match tokio::time::timeout(self.wait, call).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(DockerError::DockerResponseServerError {
                status_code: 404, ..
            })) => Err(refuse(
                RejectCode::NotFound,
                format!("no container {container} on this Docker engine"),
            )),
            Ok(Err(DockerError::DockerResponseServerError {
                status_code: 409,
                message,
            })) => Err(refuse(
                RejectCode::NotFound,
                format!("container {container} is not running: {message}"),
            )),
            Ok(Err(e)) => Err(refuse(
                RejectCode::ExecutionFailed,
                format!("{what} for container {container} failed: {e}"),
            )),
            Err(_) => Err(refuse(
                RejectCode::ExecutionFailed,
                format!(
                    "the Docker engine did not answer ({what}) within {}s",
                    self.wait.as_secs()
                ),
            )),
        }
    }

    /// The container's full id and main host pid, when it exists and runs.
    async fn running_container(&self) -> Result<(String, Option<i32>), Refusal> {
        let inspect = self
            .ask(
                "inspect",
                self.docker.inspect_container(self.container, None),
            )
            .await?;
        let state = inspect.state.unwrap_or_default();
        let status = state
            .status
            .map(|s| s.to_string())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "not running".to_owned());
        if state.running != Some(true)
            || state.paused == Some(true)
            || state.restarting == Some(true)
        {
            return Err(refuse(
                RejectCode::NotFound,
                format!("container {} is {status}, not running", self.container),
            ));
        }
        let pid = state
            .pid
            .and_then(|p| i32::try_from(p).ok())
            .filter(|p| *p > 0);
        Ok((inspect.id.unwrap_or_default(), pid))
    }

    /// Create and start the exec; its id and attached output.
    async fn start(&self, command: &str) -> Result<(String, stream::Output), Refusal> {
        let options = CreateExecOptions {
            attach_stdin: Some(false),
            attach_stdout: Some(true),
            attach_stderr: Some(true),
            tty: Some(false),
            env: Some(FIXED_ENV.iter().map(|(k, v)| format!("{k}={v}")).collect()),
            cmd: Some(vec!["sh".to_owned(), "-c".to_owned(), command.to_owned()]),
            ..CreateExecOptions::default()
        };
        let created = self
            .ask(
                "create exec",
                self.docker.create_exec(self.container, options),
            )
            .await?;
        let start = StartExecOptions {
            detach: false,
            tty: false,
            output_capacity: Some(super::CHUNK_BYTES),
        };
        match self
            .ask(
                "start exec",
                self.docker.start_exec(&created.id, Some(start)),
            )
            .await?
        {
            StartExecResults::Attached { output, .. } => Ok((created.id, output)),
            StartExecResults::Detached => Err(refuse(
                RejectCode::ExecutionFailed,
                "the Docker engine started the command detached".to_owned(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_container_ref;

    #[test]
    fn only_names_and_ids_are_container_references() {
        for ok in ["web", "74d4eede3444", "media_jellyfin.1", "a-b"] {
            assert!(is_container_ref(ok), "{ok}");
        }
        for bad in [
            "",
            "-x",
            ".x",
            "a/../../info",
            "a?b",
            "a b",
            "a:b",
            "é",
            &"a".repeat(256),
        ] {
            assert!(!is_container_ref(bad), "{bad}");
        }
    }
}
