//! The state directory (`--state-dir`, default `/var/lib/vigil-agent`): the agent's key and
//! certificate, the pinned CA and grant key, its identity, and the live `status.json`.
//!
//! Every file is written atomically (a temporary file in the same directory, fsync,
//! rename, fsync of the directory); the directory is 0700 and `agent.key` 0600. A renewed
//! key and certificate are first staged as `agent.next.key` / `agent.next.pem` and then
//! renamed into place, so a crash between the two renames is finished on the next load
//! instead of leaving a key that does not match its certificate.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};
use vigil_shared::ids::AgentId;

/// The agent's private key (PEM, PKCS#8), mode 0600.
pub const KEY_FILE: &str = "agent.key";
/// The agent's certificate (PEM).
pub const CERT_FILE: &str = "agent.pem";
/// The controller's CA chain (PEM): the only trust roots of `run`.
pub const CA_FILE: &str = "ca.pem";
/// The grant-verification key: 64 hex characters.
pub const GRANT_KEY_FILE: &str = "grant.pub";
/// `{agent_id, url, enrolled_at, labels}`.
pub const IDENTITY_FILE: &str = "identity.json";
/// `{connected, since, last_error, pid, read_only}`, written by `run`.
pub const STATUS_FILE: &str = "status.json";
const NEXT_KEY_FILE: &str = "agent.next.key";
const NEXT_CERT_FILE: &str = "agent.next.pem";
/// Every file the agent itself writes, for `uninstall --purge`.
pub const OWN_FILES: [&str; 8] = [
    KEY_FILE,
    CERT_FILE,
    CA_FILE,
    GRANT_KEY_FILE,
    IDENTITY_FILE,
    STATUS_FILE,
    NEXT_KEY_FILE,
    NEXT_CERT_FILE,
];

/// `identity.json`: who this agent is and where its controller lives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    pub agent_id: String,
    pub url: String,
    /// RFC 3339.
    pub enrolled_at: String,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Every gateway of the controller's replicas (`https://HOST:PORT`), in the order to
    /// try them; empty when the controller gave none (then `url` is the only one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoints: Vec<String>,
}

impl Identity {
    /// The gateways to try, in order: the endpoints, else the URL enrolled with.
    pub fn gateways(&self) -> Vec<String> {
        if self.endpoints.is_empty() {
            vec![self.url.clone()]
        } else {
            self.endpoints.clone()
        }
    }
}

/// Everything `join` stores.
#[derive(Debug, Clone)]
pub struct Enrollment {
    pub identity: Identity,
    pub key_pem: String,
    pub cert_pem: String,
    pub ca_pem: String,
    pub grant_key: [u8; 32],
}

/// `status.json`: what `vigil-agent run` is doing, for `vigil-agent status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkStatus {
    pub connected: bool,
    /// RFC 3339 time of the last connect or disconnect.
    pub since: String,
    pub last_error: Option<String>,
    pub pid: u32,
    #[serde(default)]
    pub read_only: bool,
}

/// The loaded credentials of an enrolled agent.
#[derive(Debug, Clone)]
pub struct Credentials {
    pub identity: Identity,
    pub agent_id: AgentId,
    pub key_pem: String,
    pub cert_pem: String,
    pub ca_pem: String,
    pub grant_key: [u8; 32],
}

/// A state directory on disk.
#[derive(Debug, Clone)]
pub struct StateDir {
    path: PathBuf,
}

impl StateDir {
    /// The directory at `path` (nothing is touched yet).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        StateDir { path: path.into() }
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of one file in the directory.
    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// True when `identity.json` exists.
    pub fn is_enrolled(&self) -> bool {
        self.file(IDENTITY_FILE).exists()
    }

    /// The identity, or `None` when not enrolled.
    pub fn identity(&self) -> Result<Option<Identity>> {
        let path = self.file(IDENTITY_FILE);
        match fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| corrupt(&path, e)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(format!("read {}", path.display()), e)),
        }
    }

    /// Create the directory (0700) and replace every enrollment file; identity last.
    pub fn write_enrollment(&self, e: &Enrollment) -> Result<()> {
        self.ensure_dir()?;
        self.write(KEY_FILE, e.key_pem.as_bytes(), 0o600)?;
        self.write(CERT_FILE, e.cert_pem.as_bytes(), 0o644)?;
        self.write(CA_FILE, e.ca_pem.as_bytes(), 0o644)?;
        let grant = format!("{}\n", hex::encode(e.grant_key));
        self.write(GRANT_KEY_FILE, grant.as_bytes(), 0o644)?;
        let _ = fs::remove_file(self.file(STATUS_FILE));
        let _ = fs::remove_file(self.file(NEXT_KEY_FILE));
        let _ = fs::remove_file(self.file(NEXT_CERT_FILE));
        let identity = serde_json::to_vec_pretty(&e.identity)
            .map_err(|err| Error::Protocol(format!("identity: {err}")))?;
        self.write(IDENTITY_FILE, &identity, 0o644)
    }

    /// Store a renewed key and certificate (used from the next connection on).
    pub fn write_renewal(&self, key_pem: &str, cert_pem: &str) -> Result<()> {
        self.write(NEXT_KEY_FILE, key_pem.as_bytes(), 0o600)?;
        self.write(NEXT_CERT_FILE, cert_pem.as_bytes(), 0o644)?;
        self.finish_renewal()
    }

    /// Finish a renewal that was interrupted between its renames, or drop a half-staged one.
    fn finish_renewal(&self) -> Result<()> {
        let (next_key, next_cert) = (self.file(NEXT_KEY_FILE), self.file(NEXT_CERT_FILE));
        if !next_cert.exists() {
            // Never got as far as staging the certificate: the old pair is intact.
            let _ = fs::remove_file(&next_key);
            return Ok(());
        }
        if next_key.exists() {
            self.rename(&next_key, &self.file(KEY_FILE))?;
        }
        self.rename(&next_cert, &self.file(CERT_FILE))
    }

    /// Load everything `run` needs.
    pub fn load(&self) -> Result<Credentials> {
        let identity = self.identity()?.ok_or_else(|| Error::NotEnrolled {
            dir: self.path.clone(),
        })?;
        self.finish_renewal()?;
        let idpath = self.file(IDENTITY_FILE);
        let agent_id: AgentId = identity
            .agent_id
            .parse()
            .map_err(|e| corrupt(&idpath, format!("agent_id: {e}")))?;
        let grant_path = self.file(GRANT_KEY_FILE);
        let grant_hex = self.read(GRANT_KEY_FILE)?;
        let grant_key: [u8; 32] = hex::decode(grant_hex.trim())
            .ok()
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| corrupt(&grant_path, "expected 64 hex characters"))?;
        Ok(Credentials {
            agent_id,
            key_pem: self.read(KEY_FILE)?,
            cert_pem: self.read(CERT_FILE)?,
            ca_pem: self.read(CA_FILE)?,
            grant_key,
            identity,
        })
    }

    /// Write `status.json`.
    pub fn write_status(&self, status: &LinkStatus) -> Result<()> {
        let json = serde_json::to_vec_pretty(status)
            .map_err(|e| Error::Protocol(format!("status: {e}")))?;
        self.write(STATUS_FILE, &json, 0o644)
    }

    /// Read `status.json`, if `run` ever wrote one.
    pub fn read_status(&self) -> Result<Option<LinkStatus>> {
        let path = self.file(STATUS_FILE);
        match fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| corrupt(&path, e)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(format!("read {}", path.display()), e)),
        }
    }

    fn read(&self, name: &str) -> Result<String> {
        let path = self.file(name);
        fs::read_to_string(&path).map_err(|e| Error::io(format!("read {}", path.display()), e))
    }

    fn ensure_dir(&self) -> Result<()> {
        let ctx = || format!("create state directory {}", self.path.display());
        fs::create_dir_all(&self.path).map_err(|e| Error::io(ctx(), e))?;
        fs::set_permissions(&self.path, fs::Permissions::from_mode(0o700))
            .map_err(|e| Error::io(ctx(), e))
    }

    /// Atomically replace `name` with `bytes`, created with `mode`.
    pub fn write(&self, name: &str, bytes: &[u8], mode: u32) -> Result<()> {
        let target = self.file(name);
        let tmp = self.file(&format!(".{name}.tmp-{}", random_suffix()));
        let ctx = || format!("write {}", target.display());
        let result = (|| {
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(mode)
                .open(&tmp)?;
            // The umask may have narrowed the mode; set it exactly.
            file.set_permissions(fs::Permissions::from_mode(mode))?;
            file.write_all(bytes)?;
            file.sync_all()
        })();
        if let Err(e) = result {
            let _ = fs::remove_file(&tmp);
            return Err(Error::io(ctx(), e));
        }
        self.rename(&tmp, &target)
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        fs::rename(from, to).map_err(|e| {
            let _ = fs::remove_file(from);
            Error::io(format!("rename {} to {}", from.display(), to.display()), e)
        })?;
        // Make the rename durable.
        if let Ok(dir) = fs::File::open(&self.path) {
            let _ = dir.sync_all();
        }
        Ok(())
    }
}

fn corrupt(path: &Path, message: impl std::fmt::Display) -> Error {
    Error::State {
        path: path.to_owned(),
        message: message.to_string(),
    }
}

fn random_suffix() -> String {
    let mut bytes = [0u8; 6];
    // A fixed suffix is still correct (create_new fails instead of clobbering).
    let _ = getrandom::fill(&mut bytes);
    hex::encode(bytes)
}

/// Seconds since the Unix epoch.
pub fn now_unix() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// RFC 3339 (UTC) for Unix seconds.
pub fn format_time(unix: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(unix)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| unix.to_string())
}

#[cfg(test)]
#[path = "state_tests.rs"]
mod tests;
