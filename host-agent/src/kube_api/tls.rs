//! The rustls configuration for an API server: its CA (else the system's roots), the
//! client certificate, and `insecure-skip-tls-verify` honoured (as kubectl does) with a
//! warning at start-up.

use super::config::Config;
use super::{Error, Result};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::sync::Arc;
use tracing::{debug, warn};

fn tls_error(text: impl Into<String>) -> Error {
    Error::Config(text.into())
}

fn certs(pem: &[u8], what: &str) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| tls_error(format!("{what}: {e}")))?;
    if certs.is_empty() {
        return Err(tls_error(format!("{what}: no PEM certificate found")));
    }
    Ok(certs)
}

fn roots(config: &Config) -> Result<RootCertStore> {
    let mut roots = RootCertStore::empty();
    match &config.ca_pem {
        Some(pem) => {
            for cert in certs(pem, "the cluster's certificate authority")? {
                roots
                    .add(cert)
                    .map_err(|e| tls_error(format!("the cluster's certificate authority: {e}")))?;
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            for e in &found.errors {
                debug!(error = %e, "a system root certificate did not load");
            }
            let (added, _) = roots.add_parsable_certificates(found.certs);
            if added == 0 {
                return Err(tls_error(
                    "no certificate authority in the kubeconfig and no system root certificates",
                ));
            }
        }
    }
    Ok(roots)
}

/// The TLS client configuration `config` asks for.
pub fn client_config(config: &Config) -> Result<Arc<ClientConfig>> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_error(e.to_string()))?;
    let builder = if config.insecure {
        warn!(url = %config.url, "insecure-skip-tls-verify: the API server's certificate is not checked");
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyServer(provider)))
    } else {
        builder.with_root_certificates(roots(config)?)
    };
    let tls = match &config.identity {
        Some(identity) => {
            let chain = certs(&identity.cert_pem, "the client certificate")?;
            let key = PrivateKeyDer::from_pem_slice(&identity.key_pem)
                .map_err(|e| tls_error(format!("the client key: {e}")))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| tls_error(format!("the client certificate: {e}")))?
        }
        None => builder.with_no_client_auth(),
    };
    Ok(Arc::new(tls))
}

/// The name the server's certificate is checked against.
pub fn server_name(config: &Config) -> Result<ServerName<'static>> {
    let host = config
        .tls_server_name
        .clone()
        .or_else(|| config.url.host().map(str::to_owned))
        .unwrap_or_default();
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    ServerName::try_from(host.clone())
        .map_err(|e| tls_error(format!("{host:?} cannot be a TLS server name: {e}")))
}

/// `insecure-skip-tls-verify`: any certificate, but handshake signatures still checked.
#[derive(Debug)]
struct AnyServer(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyServer {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
