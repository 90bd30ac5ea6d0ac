//! Docker discovery (docs/inventory.md): the containers of the agent's own Docker engine
//! as `docker_container:<docker-host>:<short-id>` resources, listed and inspected with
//! bollard, with the engine's container events marking changes.
//!
//! `crate::platform::docker::detect` connects ([`endpoint`]: the config's `docker_host`,
//! else `DOCKER_HOST`, else `/var/run/docker.sock`), pings, and on an answer pairs the
//! [`DockerSource`] with the matching exec backend, sharing one client.

mod resource;
mod watch;

pub use resource::{container_resource, id_part, short_id};

use super::{BoxFuture, Scan, ScanError, Source, SourceCtx};
use crate::config::Discovery;
use bollard::Docker;
use bollard::errors::Error as DockerError;
use bollard::query_parameters::ListContainersOptions;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tracing::{debug, warn};

/// The engine's socket when neither the config nor `DOCKER_HOST` names one.
pub const DEFAULT_SOCKET: &str = "unix:///var/run/docker.sock";
/// How long one request may wait for the engine's answer.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long detection waits for the ping.
const PING_TIMEOUT: Duration = Duration::from_secs(5);

/// The endpoint to use: the config's, else `DOCKER_HOST`, else [`DEFAULT_SOCKET`].
pub fn endpoint(config: &Discovery) -> String {
    config
        .docker_host
        .clone()
        .or_else(|| std::env::var("DOCKER_HOST").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| DEFAULT_SOCKET.to_owned())
}

/// A client for `endpoint` (`unix:///path`, a bare `/path`, `tcp://` or `http://`); no
/// request is made yet.
pub fn connect(endpoint: &str) -> Result<Docker, ScanError> {
    let docker = if endpoint.starts_with('/') {
        Docker::connect_with_unix(
            endpoint,
            REQUEST_TIMEOUT.as_secs(),
            bollard::API_DEFAULT_VERSION,
        )
    } else {
        Docker::connect_with_host(endpoint)
    };
    docker
        .map(|d| d.with_timeout(REQUEST_TIMEOUT))
        .map_err(|e| {
            ScanError::Unreachable(format!("cannot use the Docker endpoint {endpoint}: {e}"))
        })
}

/// Ping the engine and agree on the API version (an older engine refuses a newer
/// client's requests).
pub async fn ping(docker: Docker) -> Result<Docker, ScanError> {
    let answer = tokio::time::timeout(PING_TIMEOUT, async {
        docker.ping().await?;
        docker.negotiate_version().await
    })
    .await;
    match answer {
        Ok(Ok(docker)) => Ok(docker),
        Ok(Err(e)) => Err(ScanError::Unreachable(e.to_string())),
        Err(_) => Err(ScanError::Unreachable(format!(
            "no answer within {}s",
            PING_TIMEOUT.as_secs()
        ))),
    }
}

/// The `docker` discovery source.
#[derive(Debug, Clone)]
pub struct DockerSource {
    docker: Docker,
}

impl DockerSource {
    /// A source listing the containers of `docker`'s engine.
    pub fn new(docker: Docker) -> Self {
        DockerSource { docker }
    }

    /// The engine's host name as an id part (`info.Name`, else the agent's host name).
    async fn docker_host(&self, ctx: &SourceCtx) -> Result<String, ScanError> {
        let info = self
            .docker
            .info()
            .await
            .map_err(|e| ScanError::Unreachable(format!("docker info failed: {e}")))?;
        let name = info.name.unwrap_or_default();
        if let Some(part) = id_part(&name) {
            if part != name {
                warn!(docker_host = %name, used = %part, "docker host name is not an id part; cleaned");
            }
            return Ok(part);
        }
        let fallback = id_part(&ctx.hostname).unwrap_or_else(|| "docker".to_owned());
        warn!(docker_host = %name, used = %fallback, "docker reports no usable host name");
        Ok(fallback)
    }

    async fn scan_now(&self, ctx: &SourceCtx) -> Result<Scan, ScanError> {
        let host = self.docker_host(ctx).await?;
        let options = ListContainersOptions {
            all: true,
            ..ListContainersOptions::default()
        };
        let listed = self
            .docker
            .list_containers(Some(options))
            .await
            .map_err(|e| ScanError::Unreachable(format!("listing containers failed: {e}")))?;
        let mut resources = Vec::with_capacity(listed.len());
        for summary in &listed {
            let Some(id) = summary.id.as_deref() else {
                continue;
            };
            let inspect = match self.docker.inspect_container(id, None).await {
                Ok(inspect) => Some(inspect),
                Err(DockerError::DockerResponseServerError {
                    status_code: 404, ..
                }) => {
                    debug!(container = %id, "container went away while scanning");
                    continue;
                }
                Err(error) => {
                    warn!(container = %id, %error, "inspecting a container failed; reporting what the list says");
                    None
                }
            };
            resources.extend(container_resource(
                &ctx.agent_id,
                &host,
                summary,
                inspect.as_ref(),
            ));
        }
        resources.sort_by(|a, b| a.id.cmp(&b.id));
        resources.dedup_by(|a, b| a.id == b.id);
        Ok(Scan {
            resources,
            capped: Vec::new(),
        })
    }
}

impl Source for DockerSource {
    fn name(&self) -> &'static str {
        "docker"
    }

    fn scan<'a>(&'a self, ctx: &'a SourceCtx) -> BoxFuture<'a, Result<Scan, ScanError>> {
        Box::pin(self.scan_now(ctx))
    }

    fn watch(&self, changed: Arc<Notify>) -> Option<JoinHandle<()>> {
        Some(tokio::spawn(watch::follow_events(
            self.docker.clone(),
            changed,
        )))
    }
}
