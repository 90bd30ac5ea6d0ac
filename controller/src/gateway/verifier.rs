//! The client-certificate verifier of agent connections: WebPKI verification against the
//! CA (signature, validity, clientAuth usage), then the agent identity and the revocation
//! set. A refusal fails the TLS handshake.

use std::sync::Arc;

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{CertificateError, DigitallySignedStruct, DistinguishedName, SignatureScheme};
use vigil_shared::tls::{agent_id_from_cert, serial_and_expiry};

use crate::agents::RevocationSet;
use crate::{Error, Result};

/// Verifies agent client certificates: the CA first, then identity and revocation.
#[derive(Debug)]
pub struct AgentCertVerifier {
    inner: Arc<dyn ClientCertVerifier>,
    revoked: Arc<RevocationSet>,
}

impl AgentCertVerifier {
    /// A verifier that trusts only `ca` and refuses what `revoked` holds.
    pub fn new(
        ca: &CertificateDer<'static>,
        revoked: Arc<RevocationSet>,
        provider: Arc<CryptoProvider>,
    ) -> Result<Self> {
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(ca.clone())
            .map_err(|e| Error::Certificate(format!("CA as a trust anchor: {e}")))?;
        let inner = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .map_err(|e| Error::Certificate(format!("client verifier: {e}")))?;
        Ok(AgentCertVerifier { inner, revoked })
    }
}

impl ClientCertVerifier for AgentCertVerifier {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        true
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        let verified = self
            .inner
            .verify_client_cert(end_entity, intermediates, now)?;
        let Some(agent) = agent_id_from_cert(end_entity) else {
            tracing::debug!("client certificate has no agent identity");
            return Err(rustls::Error::InvalidCertificate(
                CertificateError::ApplicationVerificationFailure,
            ));
        };
        let serial = serial_and_expiry(end_entity).map(|(serial, _)| serial);
        let serial_revoked = serial
            .as_deref()
            .is_some_and(|s| self.revoked.is_serial_revoked(s));
        if self.revoked.is_agent_revoked(agent) || serial_revoked {
            tracing::info!(%agent, serial = serial.as_deref().unwrap_or(""), "refused a revoked agent certificate");
            return Err(rustls::Error::InvalidCertificate(CertificateError::Revoked));
        }
        Ok(verified)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}
