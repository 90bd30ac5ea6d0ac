//! The Kubernetes platform: the cluster's discovery source and the pod exec backend, when
//! a client config loads and the config allows it.

use super::Detected;
use crate::config::{Discovery, Toggle};
use crate::exec::pod::PodBackend;
use crate::inventory::kubernetes::{KubeSource, cluster_name, load};
use crate::kube_api::Client;
use std::sync::Arc;
use tracing::{debug, info, warn};

/// The Kubernetes platform, when a client config loads and the config allows it. The API
/// is not called here: a config that loads but a server that does not answer still counts,
/// and its scans report the error.
pub async fn detect(config: &Discovery) -> Option<Detected> {
    if config.kubernetes == Toggle::Off {
        return None;
    }
    let (client_config, kubeconfig) = match load(config) {
        Ok(loaded) => loaded,
        Err((e, refused))
            if refused || config.kubernetes == Toggle::On || config.kubeconfig.is_some() =>
        {
            warn!(error = %e, "kubernetes discovery is configured but no client config loads");
            return None;
        }
        Err((e, _)) => {
            debug!(error = %e, "no kubernetes client config; kubernetes discovery is off");
            return None;
        }
    };
    let cluster = cluster_name(config.cluster_name.as_deref(), kubeconfig.as_ref());
    let url = client_config.url.to_string();
    let client = match Client::new(client_config) {
        Ok(client) => client,
        Err(e) => {
            warn!(error = %e, "cannot build a kubernetes client");
            return None;
        }
    };
    info!(%cluster, %url, "kubernetes access configured");
    Some(Detected {
        source: Arc::new(KubeSource::new(
            client.clone(),
            cluster,
            config.kubernetes_max_per_kind,
        )),
        backend: Arc::new(PodBackend::new(client)),
        capabilities: vec!["pod"],
    })
}
