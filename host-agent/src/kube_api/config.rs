//! A client configuration: where the API server is, how to trust it and how to
//! authenticate, from a kubeconfig's current context or from the in-cluster service
//! account. Files are read here, once (the token file excepted: it is read per request,
//! since service-account tokens rotate). Credential plugins never run: a user with `exec`
//! or `auth-provider` is refused by name.

use super::kubeconfig::{Kubeconfig, read_bounded};
use super::{Error, Result};
use base64::Engine;
use hyper::Uri;
use std::path::{Path, PathBuf};

/// Where a pod's service account is mounted.
pub const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// How requests authenticate, besides a client certificate.
#[derive(Clone, Default)]
pub enum Auth {
    #[default]
    None,
    /// `Authorization: Bearer <token>`.
    Bearer(String),
    /// A bearer token read from this file for every request.
    TokenFile(PathBuf),
    /// `Authorization: Basic <base64(user:password)>`, already encoded.
    Basic(String),
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Auth::None => f.write_str("None"),
            Auth::Bearer(_) => f.write_str("Bearer(<redacted>)"),
            Auth::TokenFile(path) => write!(f, "TokenFile({})", path.display()),
            Auth::Basic(_) => f.write_str("Basic(<redacted>)"),
        }
    }
}

/// A client certificate and its key, PEM.
#[derive(Clone)]
pub struct Identity {
    pub cert_pem: Vec<u8>,
    pub key_pem: Vec<u8>,
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identity").finish_non_exhaustive()
    }
}

/// Everything a [`super::Client`] needs.
#[derive(Clone)]
pub struct Config {
    /// The API server's base URL (`https://10.0.0.1:6443`, maybe with a path prefix).
    pub url: Uri,
    /// PEM certificates to trust instead of the system's roots.
    pub ca_pem: Option<Vec<u8>>,
    /// `insecure-skip-tls-verify`: accept any server certificate.
    pub insecure: bool,
    /// The name to verify the server certificate against, when not the URL's host.
    pub tls_server_name: Option<String>,
    pub identity: Option<Identity>,
    pub auth: Auth,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("url", &self.url)
            .field("custom_ca", &self.ca_pem.is_some())
            .field("insecure", &self.insecure)
            .field("tls_server_name", &self.tls_server_name)
            .field("client_certificate", &self.identity.is_some())
            .field("auth", &self.auth)
            .finish()
    }
}

fn config_error(text: impl Into<String>) -> Error {
    Error::Config(text.into())
}

fn base64_data(what: &str, data: &str) -> Result<Vec<u8>> {
    let clean: String = data.chars().filter(|c| !c.is_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(clean)
        .map_err(|e| config_error(format!("{what} is not valid base64: {e}")))
}

/// Inline base64 data if given, else the file's contents, else nothing.
fn data_or_file(what: &str, data: Option<&str>, file: Option<&str>) -> Result<Option<Vec<u8>>> {
    match (data, file) {
        (Some(data), _) => base64_data(what, data).map(Some),
        (None, Some(path)) => read_bounded(Path::new(path)).map(|t| Some(t.into_bytes())),
        (None, None) => Ok(None),
    }
}

fn parse_url(server: &str) -> Result<Uri> {
    let url: Uri = server
        .trim()
        .parse()
        .map_err(|e| config_error(format!("server {server:?} is not a URL: {e}")))?;
    match (url.scheme_str(), url.host()) {
        (Some("https" | "http"), Some(_)) => Ok(url),
        _ => Err(config_error(format!(
            "server {server:?} is not an http(s) URL with a host"
        ))),
    }
}

impl Config {
    /// A configuration for `url` with no authentication and the system's roots.
    pub fn new(url: Uri) -> Self {
        Config {
            url,
            ca_pem: None,
            insecure: false,
            tls_server_name: None,
            identity: None,
            auth: Auth::None,
        }
    }

    /// The current context of `kc`.
    pub fn from_kubeconfig(kc: &Kubeconfig) -> Result<Self> {
        let current = kc
            .current_context
            .as_deref()
            .filter(|c| !c.is_empty())
            .ok_or_else(|| config_error("the kubeconfig has no current-context"))?;
        let context = kc
            .contexts
            .iter()
            .find(|c| c.name == current)
            .and_then(|c| c.context.as_ref())
            .ok_or_else(|| config_error(format!("the kubeconfig has no context {current:?}")))?;
        let cluster = kc
            .clusters
            .iter()
            .find(|c| c.name == context.cluster)
            .and_then(|c| c.cluster.as_ref())
            .ok_or_else(|| {
                config_error(format!(
                    "the kubeconfig has no cluster {:?}",
                    context.cluster
                ))
            })?;
        let server = cluster
            .server
            .as_deref()
            .ok_or_else(|| config_error(format!("cluster {:?} has no server", context.cluster)))?;
        if cluster.proxy_url.is_some() {
            return Err(config_error(format!(
                "cluster {:?} sets proxy-url, which the agent does not support",
                context.cluster
            )));
        }
        let mut config = Config::new(parse_url(server)?);
        config.ca_pem = data_or_file(
            "certificate-authority-data",
            cluster.certificate_authority_data.as_deref(),
            cluster.certificate_authority.as_deref(),
        )?;
        config.insecure = cluster.insecure_skip_tls_verify == Some(true);
        config.tls_server_name = cluster.tls_server_name.clone();
        if let Some(user) = &context.user {
            config.add_user(kc, user)?;
        }
        Ok(config)
    }

    /// The credentials of the kubeconfig user `name`.
    fn add_user(&mut self, kc: &Kubeconfig, name: &str) -> Result<()> {
        let Some(user) = kc.auth_infos.iter().find(|u| u.name == name) else {
            return Err(config_error(format!("the kubeconfig has no user {name:?}")));
        };
        let Some(info) = &user.user else {
            return Ok(());
        };
        let refuse = |what: &str| {
            Error::Refused(format!(
                "kubeconfig user {name:?} uses {what}, which the agent never runs; \
                 give it a token, a tokenFile or a client certificate instead"
            ))
        };
        if info.exec.is_some() {
            return Err(refuse("an exec credential plugin"));
        }
        if info.auth_provider.is_some() {
            return Err(refuse("an auth-provider"));
        }
        let cert = data_or_file(
            "client-certificate-data",
            info.client_certificate_data.as_deref(),
            info.client_certificate.as_deref(),
        )?;
        let key = data_or_file(
            "client-key-data",
            info.client_key_data.as_deref(),
            info.client_key.as_deref(),
        )?;
        self.identity = match (cert, key) {
            (Some(cert_pem), Some(key_pem)) => Some(Identity { cert_pem, key_pem }),
            (None, None) => None,
            _ => {
                return Err(config_error(format!(
                    "kubeconfig user {name:?} has a client certificate without a key, or a key without a certificate"
                )));
            }
        };
        self.auth = match (&info.token, &info.token_file, &info.username) {
            (Some(token), _, _) if !token.is_empty() => Auth::Bearer(token.trim().to_owned()),
            (_, Some(file), _) => Auth::TokenFile(PathBuf::from(file)),
            (_, _, Some(user)) => {
                let pair = format!("{user}:{}", info.password.as_deref().unwrap_or(""));
                Auth::Basic(base64::engine::general_purpose::STANDARD.encode(pair))
            }
            _ => Auth::None,
        };
        Ok(())
    }

    /// The in-cluster configuration: `KUBERNETES_SERVICE_HOST`/`_PORT` and the mounted
    /// service account.
    pub fn incluster() -> Result<Self> {
        let host = std::env::var("KUBERNETES_SERVICE_HOST").ok();
        let port = std::env::var("KUBERNETES_SERVICE_PORT").ok();
        Config::incluster_from(
            host.as_deref(),
            port.as_deref(),
            Path::new(SERVICE_ACCOUNT_DIR),
        )
    }

    /// [`Config::incluster`] from given values, for tests.
    pub fn incluster_from(host: Option<&str>, port: Option<&str>, dir: &Path) -> Result<Self> {
        let (Some(host), Some(port)) = (host.filter(|h| !h.is_empty()), port) else {
            return Err(config_error(
                "not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not both set",
            ));
        };
        let host = if host.contains(':') && !host.starts_with('[') {
            format!("[{host}]")
        } else {
            host.to_owned()
        };
        let mut config = Config::new(parse_url(&format!("https://{host}:{port}"))?);
        let token = dir.join("token");
        read_bounded(&token)?;
        config.auth = Auth::TokenFile(token);
        config.ca_pem = Some(read_bounded(&dir.join("ca.crt"))?.into_bytes());
        Ok(config)
    }
}
