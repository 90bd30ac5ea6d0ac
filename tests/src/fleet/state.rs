//! The state directory: every enrolled identity in one JSON file, `fleet.json`, written
//! atomically (a temporary file, fsync, rename) and readable only by its owner, so a rerun
//! reuses the identities instead of enrolling again.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::ClientConfig;
use rustls::client::Resumption;
use serde::{Deserialize, Serialize};

use super::{Error, Result};

/// The file in the state directory.
pub const STATE_FILE: &str = "fleet.json";
/// The format version written and accepted.
const FORMAT: u32 = 1;

/// Everything the simulator keeps between runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FleetState {
    /// The file format.
    pub format: u32,
    /// The gateway the identities were enrolled with, `https://HOST:PORT`.
    pub gateway: String,
    /// The controller's CA, `sha256:<hex>`.
    pub ca_fingerprint: String,
    /// The CA chain (PEM) the controller returned.
    pub ca_pem: String,
    /// The identities, in enrollment order.
    pub identities: Vec<StoredIdentity>,
}

/// One enrolled agent.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredIdentity {
    /// The agent id the controller assigned.
    pub agent_id: String,
    /// The host name it says hello with.
    pub hostname: String,
    /// Its private key (PEM), made here.
    pub key_pem: String,
    /// Its certificate (PEM).
    pub cert_pem: String,
}

/// An identity ready to dial: its TLS configuration is built once and reused on reconnect.
#[derive(Debug)]
pub struct LiveIdentity {
    /// The agent id.
    pub agent_id: String,
    /// The host name.
    pub hostname: String,
    /// TLS 1.3 with its certificate.
    pub tls: Arc<ClientConfig>,
}

impl FleetState {
    /// An empty state for a controller.
    pub fn new(gateway: String, ca_fingerprint: String) -> FleetState {
        FleetState {
            format: FORMAT,
            gateway,
            ca_fingerprint,
            ca_pem: String::new(),
            identities: Vec::new(),
        }
    }

    /// The state in `dir`, or `None` when there is none yet.
    pub fn load(dir: &Path) -> Result<Option<FleetState>> {
        let path = dir.join(STATE_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(state_error(&path, e)),
        };
        let state: FleetState = serde_json::from_str(&text).map_err(|e| Error::State {
            path: path.clone(),
            message: format!("not a vigil-fleet state file: {e}"),
        })?;
        if state.format != FORMAT {
            return Err(Error::State {
                path,
                message: format!("format {} is not {FORMAT}", state.format),
            });
        }
        Ok(Some(state))
    }

    /// Writes the state to `dir` atomically.
    pub fn save(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).map_err(|e| state_error(dir, e))?;
        let path = dir.join(STATE_FILE);
        let tmp = dir.join(format!(".{STATE_FILE}.tmp"));
        let text = serde_json::to_vec(self).map_err(|e| Error::State {
            path: path.clone(),
            message: e.to_string(),
        })?;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&tmp).map_err(|e| state_error(&tmp, e))?;
        file.write_all(&text)
            .and_then(|()| file.sync_all())
            .map_err(|e| state_error(&tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| state_error(&path, e))
    }

    /// The first `n` identities with their TLS configurations.
    pub fn identities(&self, n: usize) -> Result<Vec<LiveIdentity>> {
        self.identities
            .iter()
            .take(n)
            .map(|id| {
                let mut tls =
                    vigil_agent::link::tls::link_config(&self.ca_pem, &id.cert_pem, &id.key_pem)?;
                // The gateway sends no tickets; a per-identity session cache would only
                // cost memory (thousands of them).
                tls.resumption = Resumption::disabled();
                Ok(LiveIdentity {
                    agent_id: id.agent_id.clone(),
                    hostname: id.hostname.clone(),
                    tls: Arc::new(tls),
                })
            })
            .collect()
    }
}

fn state_error(path: &Path, error: std::io::Error) -> Error {
    Error::State {
        path: PathBuf::from(path),
        message: error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saves_atomically_and_loads_back() {
        let dir = tempfile::tempdir().unwrap();
        assert!(FleetState::load(dir.path()).unwrap().is_none());
        let mut state = FleetState::new("https://127.0.0.1:1".into(), "sha256:00".into());
        state.identities.push(StoredIdentity {
            agent_id: "a".into(),
            hostname: "fleet-00000".into(),
            key_pem: "k".into(),
            cert_pem: "c".into(),
        });
        state.save(dir.path()).unwrap();
        let back = FleetState::load(dir.path()).unwrap().unwrap();
        assert_eq!(back.identities.len(), 1);
        assert_eq!(back.identities[0].hostname, "fleet-00000");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [STATE_FILE], "no temporary file is left behind");
        let mode = std::fs::metadata(dir.path().join(STATE_FILE))
            .unwrap()
            .permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o600
        );
    }

    #[test]
    fn a_foreign_file_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(STATE_FILE), "{\"agents\": 3}").unwrap();
        let error = FleetState::load(dir.path()).unwrap_err().to_string();
        assert!(error.contains("not a vigil-fleet state file"), "{error}");
    }
}
