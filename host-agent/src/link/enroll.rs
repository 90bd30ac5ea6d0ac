//! `vigil-agent join`: trade a join token and a CSR for an identity, over TLS that pins the
//! controller's CA by fingerprint, and store the result in the state directory.

use super::renew::{check_issued, new_key_and_csr};
use super::tls::{self, ControllerUrl};
use crate::error::{Error, Result};
use crate::state::{Enrollment, Identity, StateDir, format_time, now_unix};
use crate::{VERSION, inventory};
use std::sync::Arc;
use std::time::Duration;
use tracing::{info, warn};
use vigil_proto::agent::v1::EnrollRequest;
use vigil_proto::agent::v1::enrollment_client::EnrollmentClient;
use vigil_shared::ids::AgentId;
use vigil_shared::tls::{fingerprint, normalize_fingerprint};

/// How long the Enroll call may take once connected.
pub const ENROLL_TIMEOUT: Duration = Duration::from_secs(30);

/// What `join` needs.
#[derive(Debug, Clone)]
pub struct JoinOptions {
    pub url: ControllerUrl,
    pub token: String,
    /// Normalised `sha256:<hex>`.
    pub ca_fingerprint: String,
    pub state: StateDir,
}

impl JoinOptions {
    /// Validate raw command-line values.
    pub fn new(url: &str, token: &str, ca_fingerprint: &str, state: StateDir) -> Result<Self> {
        let url = url.parse()?;
        let token = token.trim();
        if token.is_empty() || token.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(Error::Usage(
                "--token must be a non-empty join token".into(),
            ));
        }
        let ca_fingerprint = normalize_fingerprint(ca_fingerprint).ok_or_else(|| {
            Error::Usage(format!(
                "invalid --ca-fingerprint {ca_fingerprint:?}: expected sha256: and 64 hex \
                 characters, as `vigil-controller ca show` prints"
            ))
        })?;
        Ok(JoinOptions {
            url,
            token: token.to_owned(),
            ca_fingerprint,
            state,
        })
    }
}

/// Enroll with the controller and write the state directory; returns the new identity.
pub async fn enroll(options: &JoinOptions) -> Result<Identity> {
    let previous_agent_id = match options.state.identity() {
        Ok(previous) => previous.map(|i| i.agent_id).unwrap_or_default(),
        Err(error) => {
            warn!(%error, "ignoring the unreadable previous identity");
            String::new()
        }
    };
    let (key, csr_pem) = new_key_and_csr()?;
    let config = tls::enroll_config(&options.ca_fingerprint)?;
    let stream = tls::dial(&options.url, Arc::new(config)).await?;
    let channel = tls::channel(&options.url, stream).await?;
    let request = EnrollRequest {
        token: options.token.clone(),
        csr_pem,
        hostname: inventory::hostname(),
        version: VERSION.to_owned(),
        previous_agent_id: previous_agent_id.clone(),
    };
    let mut client = EnrollmentClient::new(channel);
    let call = client.enroll(request);
    let response = tokio::time::timeout(ENROLL_TIMEOUT, call)
        .await
        .map_err(|_| Error::Protocol("the controller did not answer the enrollment".into()))?
        .map_err(|status| enroll_status(&options.url, &status))?
        .into_inner();

    let agent_id: AgentId = response.agent_id.parse().map_err(|_| {
        Error::Protocol(format!(
            "invalid agent id {:?} in the answer",
            response.agent_id
        ))
    })?;
    check_issued(&response.certificate_pem, agent_id, &key)?;
    let ca_certs = tls::parse_certs(&response.ca_chain_pem, "the CA chain")?;
    if !ca_certs
        .iter()
        .any(|c| fingerprint(c) == options.ca_fingerprint)
    {
        return Err(Error::CaMismatch {
            url: options.url.to_string(),
            expected: options.ca_fingerprint.clone(),
        });
    }
    let grant_key: [u8; 32] = response
        .grant_public_key
        .as_slice()
        .try_into()
        .map_err(|_| Error::Protocol("the grant key in the answer is not 32 bytes".into()))?;
    if vigil_shared::grant::verifying_key_from_bytes(&grant_key).is_none() {
        return Err(Error::Protocol(
            "the grant key in the answer is not valid".into(),
        ));
    }
    let identity = Identity {
        agent_id: agent_id.to_string(),
        url: options.url.to_string(),
        enrolled_at: format_time(now_unix()),
        labels: response.labels.into_iter().collect(),
        endpoints: endpoint_urls(&response.gateway_endpoints),
    };
    options.state.write_enrollment(&Enrollment {
        identity: identity.clone(),
        key_pem: key.serialize_pem(),
        cert_pem: response.certificate_pem,
        ca_pem: response.ca_chain_pem,
        grant_key,
    })?;
    info!(agent = %agent_id, previous = %previous_agent_id, "enrolled");
    Ok(identity)
}

/// A readable error for a refused or failed Enroll call.
/// The controller's gateway endpoints (`HOST:PORT`) as URLs; one that does not parse is
/// left out with a warning.
fn endpoint_urls(endpoints: &[String]) -> Vec<String> {
    endpoints
        .iter()
        .filter_map(|endpoint| {
            match format!("https://{}", endpoint.trim()).parse::<ControllerUrl>() {
                Ok(url) => Some(url.to_string()),
                Err(error) => {
                    warn!(%endpoint, %error, "ignoring a gateway endpoint the controller gave");
                    None
                }
            }
        })
        .collect()
}

fn enroll_status(url: &ControllerUrl, status: &tonic::Status) -> Error {
    use tonic::Code;
    let message = status.message().to_owned();
    match status.code() {
        Code::Unauthenticated | Code::PermissionDenied => Error::EnrollRefused(message),
        Code::InvalidArgument => {
            Error::EnrollRefused(format!("the controller rejected the request: {message}"))
        }
        Code::Unimplemented => Error::EnrollRefused(format!(
            "{url} does not serve enrollment; is it a Vigil gateway port?"
        )),
        code => Error::Grpc {
            context: "enrollment failed",
            code,
            message: tls::error_chain(status),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_options_validate_their_input() {
        let state = StateDir::new("/tmp/x");
        let fp = format!("sha256:{}", "AB".repeat(32));
        let ok = JoinOptions::new("https://ctl.lan:9000", "vjt_abc", &fp, state.clone()).unwrap();
        assert_eq!(ok.ca_fingerprint, format!("sha256:{}", "ab".repeat(32)));
        assert_eq!(ok.url.to_string(), "https://ctl.lan:9000");
        let usage = |r: Result<JoinOptions>| matches!(r, Err(Error::Usage(_)));
        assert!(usage(JoinOptions::new(
            "http://ctl",
            "t",
            &fp,
            state.clone()
        )));
        assert!(usage(JoinOptions::new(
            "https://ctl",
            "",
            &fp,
            state.clone()
        )));
        assert!(usage(JoinOptions::new(
            "https://ctl",
            "a b",
            &fp,
            state.clone()
        )));
        assert!(usage(JoinOptions::new(
            "https://ctl",
            "t",
            "sha256:abc",
            state
        )));
    }

    #[test]
    fn refusals_keep_the_controllers_words() {
        let url: ControllerUrl = "https://ctl".parse().unwrap();
        let e = enroll_status(
            &url,
            &tonic::Status::unauthenticated("join token has expired"),
        );
        assert_eq!(e.to_string(), "enrollment refused: join token has expired");
        let e = enroll_status(&url, &tonic::Status::unimplemented(""));
        assert!(e.to_string().contains("https://ctl:8641"), "{e}");
    }
}
