//! The Proxmox VE platform: the node's discovery source and the guest exec backend, when
//! `pvesh`, `pct` and `qm` are on the agent's `PATH` and the config allows it.

use super::Detected;
use crate::config::{Discovery, Toggle};
use crate::exec::proxmox::{MissingTool, ProxmoxBackend, ProxmoxTools};
use crate::inventory::proxmox::ProxmoxSource;
use std::ffi::OsStr;
use std::sync::Arc;
use tracing::{debug, info, warn};

/// The Proxmox platform, when `pvesh`, `pct` and `qm` are on the agent's `PATH` and the
/// config allows it.
pub async fn detect(config: &Discovery) -> Option<Detected> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    detect_in(&path, config)
}

/// [`detect`] with the `PATH` value given.
pub fn detect_in(path_var: &OsStr, config: &Discovery) -> Option<Detected> {
    if config.proxmox == Toggle::Off {
        return None;
    }
    match ProxmoxTools::find_in(path_var) {
        Ok(tools) => Some(detected(tools)),
        Err(MissingTool(tool)) => {
            if config.proxmox == Toggle::On {
                warn!(
                    tool,
                    "discovery.proxmox is on but this tool is not on the PATH"
                );
            } else {
                debug!(tool, "not a Proxmox VE node: a tool is not on the PATH");
            }
            None
        }
    }
}

/// The source, the exec backend and the capabilities for these tools.
pub fn detected(tools: ProxmoxTools) -> Detected {
    info!(pvesh = %tools.pvesh.display(), pct = %tools.pct.display(), qm = %tools.qm.display(), "Proxmox VE tools found");
    let tools = Arc::new(tools);
    Detected {
        source: Arc::new(ProxmoxSource::new(Arc::clone(&tools))),
        backend: Arc::new(ProxmoxBackend::new(tools)),
        capabilities: vec!["lxc", "vm"],
    }
}
