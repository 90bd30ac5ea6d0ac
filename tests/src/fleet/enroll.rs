//! Enrollment of the identities the state directory lacks: join tokens from the HTTP API
//! (at most `MAX_USES` uses each), then `concurrency` enrollments at a time over the
//! agent's own pinned-CA TLS, each with a fresh key made here. The state file is written
//! every [`SAVE_EVERY`] identities and at the end, so an interrupted run keeps its work.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use rustls::ClientConfig;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};
use vigil_agent::link::ControllerUrl;
use vigil_agent::link::enroll::ENROLL_TIMEOUT;
use vigil_agent::link::renew::{check_issued, new_key_and_csr};
use vigil_agent::link::tls;
use vigil_proto::agent::v1::EnrollRequest;
use vigil_proto::agent::v1::enrollment_client::EnrollmentClient;
use vigil_shared::ids::AgentId;
use vigil_shared::tls::normalize_fingerprint;

use super::api::ApiClient;
use super::state::{FleetState, StoredIdentity};
use super::{Error, FleetOptions, Result};

/// Uses per join token (the controller's `join_token::MAX_USES`).
const MAX_USES: usize = 10_000;
/// Identities per token, leaving uses for retries.
const PER_TOKEN: usize = 9_000;
/// Tries per identity before the run fails.
const ATTEMPTS: u32 = 5;
/// The state file is rewritten after this many new identities.
const SAVE_EVERY: usize = 1_000;

/// The version enrolled identities report.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "-fleet");

/// The state with at least `options.agents` identities, enrolling the missing ones;
/// `None` when `shutdown` came first (what was enrolled by then is saved).
pub async fn ensure(
    options: &FleetOptions,
    shutdown: &CancellationToken,
) -> Result<Option<FleetState>> {
    let loaded = FleetState::load(&options.state_dir)?;
    let have = loaded.as_ref().map_or(0, |s| s.identities.len());
    if have >= options.agents
        && let Some(state) = loaded
    {
        info!(
            have,
            wanted = options.agents,
            "the state directory holds enough identities; enrollment skipped"
        );
        return Ok(Some(state));
    }
    let token = options.token.as_deref().ok_or_else(|| {
        Error::Usage(format!(
            "{} identities are missing: --token (or VIGIL_TOKEN) with an admin API token is needed to enroll them",
            options.agents - have
        ))
    })?;
    let api = ApiClient::new(&options.url, token, options.http_ca.as_deref())?;
    let missing = options.agents - have;
    let first = api
        .create_join_token(uses_for(missing.min(PER_TOKEN)), &options.labels)
        .await?;
    let gateway = options
        .gateways
        .first()
        .cloned()
        .or(first.gateway.clone())
        .ok_or_else(|| Error::Usage("the API named no gateway; pass --gateway".into()))?;
    let pin = options
        .ca_fingerprint
        .clone()
        .or(first.ca_fingerprint.clone())
        .ok_or_else(|| Error::Usage("the API named no CA pin; pass --ca-fingerprint".into()))?;
    let pin = normalize_fingerprint(&pin)
        .ok_or_else(|| Error::Usage(format!("invalid CA fingerprint {pin:?}")))?;
    let mut state = loaded.unwrap_or_else(|| FleetState::new(gateway.clone(), pin.clone()));
    if state.ca_fingerprint != pin {
        return Err(Error::Usage(format!(
            "{} holds identities of another controller (CA {}, this one is {pin}); use a fresh --state-dir",
            options.state_dir.display(),
            state.ca_fingerprint
        )));
    }
    let url: ControllerUrl = gateway.parse()?;
    let config = Arc::new(tls::enroll_config(&pin)?);
    info!(missing, have, concurrency = options.concurrency, %url, "enrolling");
    let started = Instant::now();
    let mut first_token = Some(first.token);
    let mut done = 0usize;
    let mut last_log = Instant::now();
    for chunk_start in (0..missing).step_by(PER_TOKEN) {
        let chunk = (missing - chunk_start).min(PER_TOKEN);
        let token = match first_token.take() {
            Some(token) => token,
            None => {
                api.create_join_token(uses_for(chunk), &options.labels)
                    .await?
                    .token
            }
        };
        let base = state.identities.len();
        let mut results = futures_util::stream::iter(0..chunk)
            .map(|i| {
                let hostname = format!("{}-{:05}", options.hostname_prefix, base + i);
                enroll_one(&url, Arc::clone(&config), token.clone(), hostname)
            })
            .buffer_unordered(options.concurrency.max(1));
        loop {
            let result = tokio::select! {
                result = results.next() => result,
                () = shutdown.cancelled() => {
                    state.save(&options.state_dir)?;
                    info!(enrolled = done, "stopped during enrollment; the identities so far are saved");
                    return Ok(None);
                }
            };
            let Some(result) = result else { break };
            let (identity, ca_pem) = result?;
            if state.ca_pem.is_empty() {
                check_ca(&ca_pem, &pin)?;
                state.ca_pem = ca_pem;
            }
            state.identities.push(identity);
            done += 1;
            if done.is_multiple_of(SAVE_EVERY) {
                state.save(&options.state_dir)?;
            }
            if last_log.elapsed() >= Duration::from_secs(1) {
                info!("enrolled {done}/{missing}");
                last_log = Instant::now();
            }
        }
    }
    state.save(&options.state_dir)?;
    info!(
        enrolled = done,
        seconds = started.elapsed().as_secs_f64(),
        "enrolled {done}/{missing}"
    );
    Ok(Some(state))
}

/// Fails unless the CA chain the controller returned holds the pinned CA.
fn check_ca(ca_pem: &str, pin: &str) -> Result<()> {
    let certs = tls::parse_certs(ca_pem, "the CA chain")?;
    if certs
        .iter()
        .any(|c| vigil_shared::tls::fingerprint(c) == pin)
    {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "the controller's CA chain does not hold the pinned CA {pin}"
        )))
    }
}

/// The uses of a token for `n` identities, with room for retries.
fn uses_for(n: usize) -> u32 {
    u32::try_from((n + n / 10 + 10).min(MAX_USES)).unwrap_or(1)
}

/// Enrolls one identity, retrying transport failures (the gateway drops connections past
/// its handshake limit) with a short backoff.
async fn enroll_one(
    url: &ControllerUrl,
    config: Arc<ClientConfig>,
    token: String,
    hostname: String,
) -> Result<(StoredIdentity, String)> {
    let mut backoff = vigil_agent::link::Backoff::new();
    let mut attempt = 1;
    loop {
        match try_enroll(url, Arc::clone(&config), &token, &hostname).await {
            Ok(done) => return Ok(done),
            Err(error @ vigil_agent::Error::EnrollRefused(_)) => return Err(error.into()),
            Err(error) if attempt >= ATTEMPTS => return Err(error.into()),
            Err(error) => {
                let delay = backoff.next_delay();
                warn!(%error, %hostname, attempt, retry_in_ms = delay.as_millis() as u64, "enrollment failed; retrying");
                tokio::time::sleep(delay).await;
                attempt += 1;
            }
        }
    }
}

async fn try_enroll(
    url: &ControllerUrl,
    config: Arc<ClientConfig>,
    token: &str,
    hostname: &str,
) -> vigil_agent::Result<(StoredIdentity, String)> {
    let (key, csr_pem) = new_key_and_csr()?;
    let stream = tls::dial(url, config).await?;
    let channel = tls::channel(url, stream).await?;
    let request = EnrollRequest {
        token: token.to_owned(),
        csr_pem,
        hostname: hostname.to_owned(),
        version: VERSION.to_owned(),
        previous_agent_id: String::new(),
    };
    let response = tokio::time::timeout(
        ENROLL_TIMEOUT,
        EnrollmentClient::new(channel).enroll(request),
    )
    .await
    .map_err(|_| {
        vigil_agent::Error::Protocol("the controller did not answer the enrollment".into())
    })?
    .map_err(|status| match status.code() {
        tonic::Code::Unauthenticated
        | tonic::Code::PermissionDenied
        | tonic::Code::InvalidArgument => {
            vigil_agent::Error::EnrollRefused(status.message().to_owned())
        }
        code => vigil_agent::Error::Grpc {
            context: "enrollment failed",
            code,
            message: status.message().to_owned(),
        },
    })?
    .into_inner();
    let agent_id: AgentId = response.agent_id.parse().map_err(|_| {
        vigil_agent::Error::Protocol(format!("invalid agent id {:?}", response.agent_id))
    })?;
    check_issued(&response.certificate_pem, agent_id, &key)?;
    let identity = StoredIdentity {
        agent_id: agent_id.to_string(),
        hostname: hostname.to_owned(),
        key_pem: key.serialize_pem(),
        cert_pem: response.certificate_pem,
    };
    Ok((identity, response.ca_chain_pem))
}
