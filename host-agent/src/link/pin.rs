//! The enrollment verifier: trust the gateway only when its chain carries the CA whose
//! fingerprint the person typed (`--ca-fingerprint`), and the gateway certificate verifies
//! against that CA for the server name `vigil-gateway`.

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, OtherError, RootCertStore, SignatureScheme};
use std::sync::Arc;
use vigil_shared::tls::fingerprint;

/// The presented chain holds no certificate with the pinned fingerprint.
#[derive(Debug, thiserror::Error)]
#[error("no certificate in the presented chain has the pinned fingerprint {expected}")]
pub struct PinMismatch {
    pub expected: String,
}

/// A [`ServerCertVerifier`] that pins the CA by its SHA-256 fingerprint.
#[derive(Debug)]
pub struct PinnedCaVerifier {
    /// Normalised `sha256:<hex>`.
    expected: String,
    provider: Arc<CryptoProvider>,
}

impl PinnedCaVerifier {
    /// A verifier for a normalised fingerprint (see `vigil_shared::tls::normalize_fingerprint`).
    pub fn new(expected: String, provider: Arc<CryptoProvider>) -> Self {
        PinnedCaVerifier { expected, provider }
    }
}

impl ServerCertVerifier for PinnedCaVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let ca = std::iter::once(end_entity)
            .chain(intermediates)
            .find(|cert| fingerprint(cert) == self.expected)
            .ok_or_else(|| {
                rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(Arc::new(
                    PinMismatch {
                        expected: self.expected.clone(),
                    },
                ))))
            })?;
        let mut roots = RootCertStore::empty();
        roots
            .add(ca.clone().into_owned())
            .map_err(|_| rustls::Error::InvalidCertificate(CertificateError::BadEncoding))?;
        let webpki = WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            Arc::clone(&self.provider),
        )
        .build()
        .map_err(|e| rustls::Error::General(e.to_string()))?;
        webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The [`PinMismatch`] inside a rustls error, if that is what it is.
pub fn pin_mismatch(error: &rustls::Error) -> Option<&PinMismatch> {
    match error {
        rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(inner))) => {
            inner.downcast_ref::<PinMismatch>()
        }
        _ => None,
    }
}
