//! The Docker platform: the engine's discovery source and exec backend, sharing one
//! client, when the engine answers and the config allows it.

use super::Detected;
use crate::config::{Discovery, Toggle};
use crate::exec::docker::DockerBackend;
use crate::inventory::docker::{DockerSource, connect, endpoint, ping};
use std::sync::Arc;
use tracing::{debug, warn};

/// The Docker platform, when the engine answers and the config allows it.
pub async fn detect(config: &Discovery) -> Option<Detected> {
    if config.docker == Toggle::Off {
        return None;
    }
    let endpoint = endpoint(config);
    let docker = match connect(&endpoint) {
        Ok(docker) => ping(docker).await,
        Err(e) => Err(e),
    };
    let docker = match docker {
        Ok(docker) => docker,
        Err(error) if config.docker == Toggle::On => {
            warn!(%endpoint, %error, "docker is on in the config but the engine does not answer");
            return None;
        }
        Err(error) => {
            debug!(%endpoint, %error, "no Docker engine");
            return None;
        }
    };
    Some(Detected {
        source: Arc::new(DockerSource::new(docker.clone())),
        backend: Arc::new(DockerBackend::new(docker)),
        capabilities: vec!["docker"],
    })
}
