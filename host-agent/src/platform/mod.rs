//! What this machine offers, detected once when `run` starts: the discovery sources
//! (docs/inventory.md) and the exec backends for targets that are not the host, plus the
//! capabilities the hello announces.

#[cfg(feature = "docker")]
pub mod docker;
#[cfg(feature = "kubernetes")]
pub mod kubernetes;
pub mod proxmox;

use crate::config::Discovery;
use crate::exec::{Backend, Backends};
use crate::inventory::{self, Source};
use std::sync::Arc;
use tracing::info;

/// One platform found on this machine.
#[derive(Debug, Clone)]
pub struct Detected {
    /// Its discovery source.
    pub source: Arc<dyn Source>,
    /// Its exec backend.
    pub backend: Arc<dyn Backend>,
    /// What the hello announces for it (`lxc`, `vm`, `docker`, `pod`).
    pub capabilities: Vec<&'static str>,
}

/// Everything detected.
#[derive(Debug, Clone)]
pub struct Platform {
    pub sources: Vec<Arc<dyn Source>>,
    pub backends: Backends,
    pub capabilities: Vec<String>,
}

impl Platform {
    /// The host alone: what every agent has.
    pub fn host_only() -> Self {
        Platform {
            sources: vec![Arc::new(inventory::HostSource)],
            backends: Backends::default(),
            capabilities: vec!["host".to_owned()],
        }
    }

    fn add(&mut self, found: Option<Detected>) -> Option<Arc<dyn Backend>> {
        let found = found?;
        info!(
            source = found.source.name(),
            capabilities = ?found.capabilities,
            "platform detected"
        );
        self.sources.push(found.source);
        self.capabilities
            .extend(found.capabilities.iter().map(|c| (*c).to_owned()));
        Some(found.backend)
    }
}

/// Look for Proxmox VE, Docker and Kubernetes as the config allows.
pub async fn detect(config: &Discovery) -> Platform {
    let mut platform = Platform::host_only();
    let proxmox = proxmox::detect(config).await;
    platform.backends.proxmox = platform.add(proxmox);
    #[cfg(feature = "docker")]
    {
        let docker = docker::detect(config).await;
        platform.backends.docker = platform.add(docker);
    }
    #[cfg(not(feature = "docker"))]
    left_out("docker", config.docker);
    #[cfg(feature = "kubernetes")]
    {
        let kubernetes = kubernetes::detect(config).await;
        platform.backends.kubernetes = platform.add(kubernetes);
    }
    #[cfg(not(feature = "kubernetes"))]
    left_out("kubernetes", config.kubernetes);
    platform
}

/// A platform whose cargo feature this build leaves out: said once, louder when the
/// config asks for it.
#[cfg(any(not(feature = "docker"), not(feature = "kubernetes")))]
fn left_out(feature: &'static str, toggle: crate::config::Toggle) {
    if toggle == crate::config::Toggle::On {
        tracing::warn!(
            feature,
            "discovery is configured on, but this agent was built without it"
        );
    } else {
        tracing::debug!(feature, "this agent was built without it");
    }
}
