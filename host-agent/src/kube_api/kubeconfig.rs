//! The kubeconfig file, as far as the agent reads it: contexts, clusters (server, CA,
//! `insecure-skip-tls-verify`, `tls-server-name`) and users (token, token file, client
//! certificate, basic auth). `exec` credential plugins and `auth-provider`s are parsed only
//! to be refused ([`super::config`]). YAML or JSON; files named by `KUBECONFIG` are merged
//! like kubectl does (the first file to set a value wins).

use super::{Error, Result};
use serde::Deserialize;
use serde::de::IgnoredAny;
use std::path::{Path, PathBuf};

/// Largest kubeconfig file read.
pub const MAX_FILE_BYTES: u64 = 4 << 20;
/// The variable naming kubeconfig files (`:`-separated).
pub const KUBECONFIG_ENV: &str = "KUBECONFIG";

/// A kubeconfig: named clusters, users and contexts, and the current context.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case", default)]
pub struct Kubeconfig {
    pub current_context: Option<String>,
    #[serde(deserialize_with = "null_default")]
    pub clusters: Vec<NamedCluster>,
    #[serde(deserialize_with = "null_default")]
    pub contexts: Vec<NamedContext>,
    #[serde(rename = "users", deserialize_with = "null_default")]
    pub auth_infos: Vec<NamedAuthInfo>,
}

/// A `clusters` entry.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct NamedCluster {
    pub name: String,
    pub cluster: Option<Cluster>,
}

/// Where the API server is and how to trust it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case", default)]
pub struct Cluster {
    pub server: Option<String>,
    pub certificate_authority: Option<String>,
    pub certificate_authority_data: Option<String>,
    pub insecure_skip_tls_verify: Option<bool>,
    pub tls_server_name: Option<String>,
    pub proxy_url: Option<String>,
}

/// A `contexts` entry.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct NamedContext {
    pub name: String,
    pub context: Option<Context>,
}

/// A cluster and a user.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Context {
    pub cluster: String,
    pub user: Option<String>,
    pub namespace: Option<String>,
}

/// A `users` entry.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct NamedAuthInfo {
    pub name: String,
    pub user: Option<AuthInfo>,
}

/// How to authenticate. `exec` and `auth-provider` are kept only as "present".
#[derive(Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case", default)]
pub struct AuthInfo {
    pub token: Option<String>,
    #[serde(rename = "tokenFile")]
    pub token_file: Option<String>,
    pub client_certificate: Option<String>,
    pub client_certificate_data: Option<String>,
    pub client_key: Option<String>,
    pub client_key_data: Option<String>,
    pub username: Option<String>,
    pub password: Option<String>,
    pub exec: Option<IgnoredAny>,
    pub auth_provider: Option<IgnoredAny>,
}

impl std::fmt::Debug for AuthInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthInfo")
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("token_file", &self.token_file)
            .field("client_certificate", &self.client_certificate)
            .field("client_key", &self.client_key)
            .field("username", &self.username)
            .field("exec", &self.exec.is_some())
            .field("auth_provider", &self.auth_provider.is_some())
            .finish_non_exhaustive()
    }
}

/// `null` (or an empty YAML value) as the type's default.
fn null_default<'de, D, T>(d: D) -> std::result::Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

impl Kubeconfig {
    /// Parse a kubeconfig's text: JSON when it starts with `{`, else YAML.
    pub fn parse(text: &str) -> Result<Kubeconfig> {
        let trimmed = text.trim_start_matches('\u{feff}').trim_start();
        if trimmed.is_empty() {
            return Ok(Kubeconfig::default());
        }
        if trimmed.starts_with('{') {
            return serde_json::from_str(trimmed)
                .map_err(|e| Error::Config(format!("the kubeconfig is not valid JSON: {e}")));
        }
        serde_saphyr::from_str(trimmed)
            .map_err(|e| Error::Config(format!("the kubeconfig is not valid YAML: {e}")))
    }

    /// Read and parse one file; relative file references become relative to its directory.
    pub fn read_from(path: impl AsRef<Path>) -> Result<Kubeconfig> {
        let path = path.as_ref();
        let text = read_bounded(path)?;
        let mut config = Kubeconfig::parse(&text)
            .map_err(|e| Error::Config(format!("{}: {e}", path.display())))?;
        if let Some(dir) = path.parent() {
            config.make_absolute(dir);
        }
        Ok(config)
    }

    /// The files `KUBECONFIG` names (merged), else `~/.kube/config`.
    pub fn read() -> Result<Kubeconfig> {
        let paths: Vec<PathBuf> = std::env::var_os(KUBECONFIG_ENV)
            .map(|v| std::env::split_paths(&v).collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .filter(|p| !p.as_os_str().is_empty())
            .collect();
        if paths.is_empty() {
            let home = std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .ok_or_else(|| Error::Config("no KUBECONFIG and no HOME".to_owned()))?;
            return Kubeconfig::read_from(Path::new(&home).join(".kube").join("config"));
        }
        let mut merged = Kubeconfig::default();
        for path in paths {
            merged.merge(Kubeconfig::read_from(path)?);
        }
        Ok(merged)
    }

    /// Add `next` under kubectl's rule: the first to set a value or a name keeps it.
    pub fn merge(&mut self, next: Kubeconfig) {
        if self.current_context.is_none() {
            self.current_context = next.current_context;
        }
        append_new(&mut self.clusters, next.clusters, |c| &c.name);
        append_new(&mut self.contexts, next.contexts, |c| &c.name);
        append_new(&mut self.auth_infos, next.auth_infos, |c| &c.name);
    }

    fn make_absolute(&mut self, dir: &Path) {
        let fix = |p: &mut Option<String>| {
            if let Some(path) = p
                && Path::new(path.as_str()).is_relative()
            {
                *path = dir.join(path.as_str()).to_string_lossy().into_owned();
            }
        };
        for cluster in self.clusters.iter_mut().filter_map(|c| c.cluster.as_mut()) {
            fix(&mut cluster.certificate_authority);
        }
        for user in self.auth_infos.iter_mut().filter_map(|u| u.user.as_mut()) {
            fix(&mut user.client_certificate);
            fix(&mut user.client_key);
            fix(&mut user.token_file);
        }
    }
}

fn append_new<T>(mine: &mut Vec<T>, theirs: Vec<T>, name: impl Fn(&T) -> &String) {
    for item in theirs {
        if !mine.iter().any(|m| name(m) == name(&item)) {
            mine.push(item);
        }
    }
}

/// A file's text, refusing files over [`MAX_FILE_BYTES`].
pub fn read_bounded(path: &Path) -> Result<String> {
    let cannot = |e: std::io::Error| Error::Config(format!("cannot read {}: {e}", path.display()));
    let len = std::fs::metadata(path).map_err(cannot)?.len();
    if len > MAX_FILE_BYTES {
        return Err(Error::Config(format!(
            "{} is {len} bytes, more than the {MAX_FILE_BYTES} read",
            path.display()
        )));
    }
    std::fs::read_to_string(path).map_err(cannot)
}
