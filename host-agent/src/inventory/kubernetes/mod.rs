//! Kubernetes discovery (docs/inventory.md): the cluster, its nodes, namespaces,
//! deployments and pods, with the newest warning events, listed through the API with
//! per-kind caps; pods and deployments are watched to mark changes.
//!
//! `crate::platform::kubernetes::detect` loads a client config ([`load`]: the configured
//! kubeconfig, else `KUBECONFIG` or `~/.kube/config`, else the in-cluster service account;
//! [`crate::kube_api`]) without calling the API, so a cluster that does not answer shows
//! up as scan errors rather than slowing start-up.
//! [`convert`] maps objects to resources, [`events`] shapes warning events, [`scan`] lists
//! and [`watch`] follows.

pub mod convert;
pub mod events;
pub mod scan;
mod watch;

use super::{BoxFuture, Scan, ScanError, Source, SourceCtx};
use crate::config::Discovery;
use crate::kube_api::{Client, Config, Kubeconfig};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tracing::debug;

/// The cluster name when neither the config nor a kubeconfig gives one.
pub const IN_CLUSTER: &str = "in-cluster";
/// Longest a whole scan may take.
const SCAN_TIMEOUT: Duration = Duration::from_secs(60);

/// The Kubernetes discovery source.
#[derive(Clone)]
pub struct KubeSource {
    client: Client,
    cluster: String,
    max_per_kind: usize,
}

impl std::fmt::Debug for KubeSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeSource")
            .field("cluster", &self.cluster)
            .field("max_per_kind", &self.max_per_kind)
            .finish_non_exhaustive()
    }
}

impl KubeSource {
    /// A source listing through `client`, naming ids after `cluster` (sanitized), keeping
    /// at most `max_per_kind` objects of each kind.
    pub fn new(client: Client, cluster: String, max_per_kind: usize) -> Self {
        KubeSource {
            client,
            cluster: sanitize(&cluster),
            max_per_kind: max_per_kind.max(1),
        }
    }

    /// The cluster part of the ids this source reports.
    pub fn cluster(&self) -> &str {
        &self.cluster
    }
}

impl Source for KubeSource {
    fn name(&self) -> &'static str {
        "kubernetes"
    }

    fn scan<'a>(&'a self, ctx: &'a SourceCtx) -> BoxFuture<'a, Result<Scan, ScanError>> {
        Box::pin(async move {
            let listed = scan::scan(
                &self.client,
                &self.cluster,
                &ctx.agent_id,
                self.max_per_kind,
            );
            let (resources, capped) =
                tokio::time::timeout(SCAN_TIMEOUT, listed)
                    .await
                    .map_err(|_| {
                        ScanError::Unreachable(format!(
                            "the Kubernetes API did not answer within {SCAN_TIMEOUT:?}"
                        ))
                    })??;
            Ok(Scan { resources, capped })
        })
    }

    fn watch(&self, changed: Arc<Notify>) -> Option<JoinHandle<()>> {
        Some(tokio::spawn(watch::follow(self.client.clone(), changed)))
    }
}

/// A cluster name usable as an id part: `:` and white space become `-`; empty is
/// [`IN_CLUSTER`].
pub fn sanitize(name: &str) -> String {
    let clean: String = name
        .trim()
        .chars()
        .map(|c| {
            if c == ':' || c == '/' || c.is_whitespace() || c.is_control() {
                '-'
            } else {
                c
            }
        })
        .collect();
    if clean.is_empty() {
        IN_CLUSTER.to_owned()
    } else {
        clean
    }
}

/// The cluster part of ids: the configured name, else the kubeconfig's current context's
/// cluster, else [`IN_CLUSTER`]; sanitized.
pub fn cluster_name(configured: Option<&str>, kubeconfig: Option<&Kubeconfig>) -> String {
    let from_context = || {
        let kc = kubeconfig?;
        let current = kc.current_context.as_deref()?;
        let context = kc.contexts.iter().find(|c| c.name == current)?;
        context.context.as_ref().map(|c| c.cluster.clone())
    };
    let name = configured
        .map(str::to_owned)
        .or_else(from_context)
        .unwrap_or_else(|| IN_CLUSTER.to_owned());
    sanitize(&name)
}

/// Load the client config the discovery settings point at, with the kubeconfig it came
/// from (none for in-cluster). The error says whether it is worth a warning even when
/// discovery is only `auto` (a kubeconfig that needs a credential plugin).
pub(crate) fn load(config: &Discovery) -> Result<(Config, Option<Kubeconfig>), (String, bool)> {
    let kubeconfig = match &config.kubeconfig {
        Some(path) => Some(Kubeconfig::read_from(path).map_err(|e| {
            (
                format!("cannot read kubeconfig {}: {e}", path.display()),
                false,
            )
        })?),
        None => match Kubeconfig::read() {
            Ok(kc) => Some(kc),
            Err(e) => {
                debug!(error = %e, "no kubeconfig; trying the in-cluster config");
                None
            }
        },
    };
    match kubeconfig {
        Some(kc) => {
            let loaded = Config::from_kubeconfig(&kc).map_err(|e| {
                let refused = matches!(e, crate::kube_api::Error::Refused(_));
                (format!("cannot use the kubeconfig: {e}"), refused)
            })?;
            Ok((loaded, Some(kc)))
        }
        None => Config::incluster().map(|c| (c, None)).map_err(|e| {
            (
                format!("no kubeconfig and no in-cluster config: {e}"),
                false,
            )
        }),
    }
}

#[cfg(test)]
mod tests;
