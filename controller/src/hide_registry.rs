//! The controller's entry in this host's registry of hidden paths
//! ([`vigil_shared::hide`]): its data directory (CA, gateway and grant keys, admin token,
//! database) and the HTTP key file, so that an agent on the same host hides them from
//! every read. Written at start, removed when the controller stops; lists left by
//! controllers that died are removed by the next one that starts.

use crate::config::{Config, HttpTls};
use std::path::PathBuf;
use tracing::{debug, info};
use vigil_shared::hide::{LIST_SUFFIX, REGISTRY_DIR, list_pid};

/// The registered list; removed on drop.
#[derive(Debug)]
pub struct Registration {
    path: PathBuf,
}

/// The paths a controller keeps secrets in.
pub fn secret_paths(config: &Config) -> Vec<PathBuf> {
    let mut paths = vec![config.data_dir.clone()];
    if let Some(HttpTls::Files { key, .. }) = &config.http_tls {
        paths.push(key.clone());
    }
    paths
        .into_iter()
        .filter_map(|p| std::path::absolute(p).ok())
        .collect()
}

/// Register `config`'s secret paths. Best effort: a controller that may not write the
/// registry (not root) logs why; its local agent still hides the data directory.
pub fn register(config: &Config) -> Option<Registration> {
    let dir = PathBuf::from(REGISTRY_DIR);
    if let Err(error) = std::fs::create_dir_all(&dir) {
        debug!(%error, dir = %dir.display(), "cannot register the data directory as hidden from reads");
        return None;
    }
    remove_stale(&dir);
    let path = dir.join(format!("controller-{}{LIST_SUFFIX}", std::process::id()));
    let text: String = secret_paths(config)
        .iter()
        .map(|p| format!("{}\n", p.display()))
        .collect();
    match std::fs::write(&path, text) {
        Ok(()) => {
            info!(list = %path.display(), "registered the data directory as hidden from reads on this host");
            Some(Registration { path })
        }
        Err(error) => {
            debug!(%error, list = %path.display(), "cannot register the data directory as hidden from reads");
            None
        }
    }
}

fn remove_stale(dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(list_pid) else {
            continue;
        };
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
