//! The `Enrollment` service: trades a join token and a CSR for an agent certificate, the CA
//! chain and the grant-verification key, in one database transaction.

use std::sync::Arc;

use time::OffsetDateTime;
use tonic::{Request, Response, Status};
use tracing::{Instrument, info, info_span, warn};
use vigil_proto::agent::v1::enrollment_server::Enrollment;
use vigil_proto::agent::v1::{EnrollRequest, EnrollResponse};
use vigil_shared::ids::AgentId;

use crate::agents::Agents;
use crate::clock::unix_now;
use crate::pki::{Pki, join_token};
use crate::store::NewAgent;
use crate::store::agents::AgentRow;
use crate::{Error, Result};

/// Longest host name accepted.
const MAX_HOSTNAME: usize = 253;
/// Longest version string accepted.
const MAX_VERSION: usize = 64;

/// The Enrollment gRPC service.
#[derive(Debug, Clone)]
pub struct EnrollmentService {
    agents: Agents,
    pki: Arc<Pki>,
    gateway_endpoints: Vec<String>,
}

impl EnrollmentService {
    /// The service over the agent registry, signing with `pki`.
    pub fn new(agents: Agents, pki: Arc<Pki>) -> Self {
        EnrollmentService {
            agents,
            pki,
            gateway_endpoints: Vec::new(),
        }
    }

    /// The same service, giving enrolled agents every replica's gateway (`HOST:PORT`).
    pub fn with_gateway_endpoints(mut self, endpoints: Vec<String>) -> Self {
        self.gateway_endpoints = endpoints;
        self
    }

    /// Enrolls one agent (see the module documentation).
    pub async fn enroll(&self, request: EnrollRequest) -> Result<EnrollResponse> {
        let token = request.token.trim();
        if !join_token::is_well_formed(token) {
            return Err(Error::TokenInvalid);
        }
        let hostname = checked_text("hostname", &request.hostname, MAX_HOSTNAME)?;
        let version = checked_text("version", &request.version, MAX_VERSION)?;
        let previous = match request.previous_agent_id.trim() {
            "" => None,
            text => Some(text.parse::<AgentId>().map_err(|_| {
                Error::InvalidInput(format!("previous_agent_id {text:?} is not an agent id"))
            })?),
        };
        let id = AgentId::new_random();
        let cert = self
            .pki
            .ca
            .sign_agent_csr(&request.csr_pem, id, OffsetDateTime::now_utc())?;
        let agent = NewAgent {
            id,
            hostname: hostname.clone(),
            version,
            cert_serial: cert.serial.clone(),
            cert_expires_at: cert.expires_at,
        };
        let now = unix_now();
        let enrolled = self
            .agents
            .store()
            .enroll_agent(&join_token::hash(token), &agent, previous, now)
            .await?;
        self.agents.enrolled(AgentRow {
            id,
            hostname: agent.hostname.clone(),
            labels: enrolled.labels.clone(),
            cert_serial: agent.cert_serial.clone(),
            cert_expires_at: agent.cert_expires_at,
            version: agent.version.clone(),
            read_only: false,
            last_seen: None,
            facts: None,
            created_at: now,
            revoked_at: None,
            hidden_paths: enrolled.hidden_paths.clone(),
        });
        if let Some(previous) = enrolled.revoked_previous {
            self.agents.cut(previous, "replaced by a new enrollment");
        }
        info!(agent = %id, %hostname, serial = %cert.serial, "enrolled an agent");
        let token_id = join_token::id_of(&join_token::hash(token)).to_owned();
        let entry =
            crate::audit::Entry::new(&format!("join_token:{token_id}"), "agent.enroll", "ok")
                .agent(id);
        crate::audit::record(self.agents.store(), entry).await;
        Ok(EnrollResponse {
            agent_id: id.to_string(),
            certificate_pem: cert.pem,
            ca_chain_pem: self.pki.ca.pem().to_owned(),
            grant_public_key: self.pki.grant.public_bytes().to_vec(),
            labels: enrolled.labels.into_iter().collect(),
            gateway_endpoints: self.gateway_endpoints.clone(),
        })
    }
}

fn checked_text(field: &str, value: &str, max: usize) -> Result<String> {
    let value = value.trim();
    if value.len() > max || value.chars().any(char::is_control) {
        return Err(Error::InvalidInput(format!(
            "{field} must be at most {max} characters without control characters"
        )));
    }
    Ok(value.to_owned())
}

#[tonic::async_trait]
impl Enrollment for EnrollmentService {
    async fn enroll(
        &self,
        request: Request<EnrollRequest>,
    ) -> Result<Response<EnrollResponse>, Status> {
        let remote = request.remote_addr();
        let request = request.into_inner();
        let span = info_span!("enroll", hostname = %request.hostname, remote = ?remote);
        EnrollmentService::enroll(self, request)
            .instrument(span.clone())
            .await
            .map(Response::new)
            .map_err(|error| {
                warn!(parent: &span, %error, "refused an enrollment");
                Status::from(error)
            })
    }
}
