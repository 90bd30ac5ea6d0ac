//! Keys, certificate signing requests, and when and how a certificate is renewed.

use crate::error::{Error, Result};
use rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair, PKCS_ECDSA_P256_SHA256};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use vigil_shared::ids::AgentId;
use vigil_shared::tls::{agent_id_from_cert, not_before, serial_and_expiry};
use x509_parser::prelude::{FromDer, X509Certificate};

/// A fresh ECDSA P-256 key and a PEM CSR for it (the controller ignores the subject).
pub fn new_key_and_csr() -> Result<(KeyPair, String)> {
    let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
    let mut params = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, "vigil-agent");
    params.distinguished_name = dn;
    let csr = params.serialize_request(&key)?.pem()?;
    Ok((key, csr))
}

/// The validity of a certificate: not-before and not-after, Unix seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Validity {
    pub not_before: i64,
    pub not_after: i64,
}

impl Validity {
    /// The validity of the first certificate in `pem`.
    pub fn of_pem(pem: &str) -> Result<Validity> {
        let der = first_der(pem)?;
        let (_, not_after) = serial_and_expiry(&der)
            .ok_or_else(|| Error::Crypto("unreadable certificate".into()))?;
        let not_before =
            not_before(&der).ok_or_else(|| Error::Crypto("unreadable certificate".into()))?;
        Ok(Validity {
            not_before,
            not_after,
        })
    }

    /// Two thirds through the lifetime: when to ask for a new certificate.
    pub fn renew_at(&self) -> i64 {
        self.not_before + (self.not_after - self.not_before) * 2 / 3
    }
}

/// The DER of the first certificate in a PEM bundle.
pub fn first_der(pem: &str) -> Result<CertificateDer<'static>> {
    CertificateDer::pem_slice_iter(pem.as_bytes())
        .next()
        .ok_or_else(|| Error::Crypto("no certificate in PEM".into()))?
        .map_err(|e| Error::Crypto(e.to_string()))
}

/// Check that a certificate issued to us names `id` and certifies `key`.
pub fn check_issued(cert_pem: &str, id: AgentId, key: &KeyPair) -> Result<()> {
    let der = first_der(cert_pem)?;
    match agent_id_from_cert(&der) {
        Some(got) if got == id => {}
        Some(got) => {
            return Err(Error::Protocol(format!(
                "the certificate is for agent {got}, expected {id}"
            )));
        }
        None => {
            return Err(Error::Protocol(
                "the certificate carries no vigil://agent/ identity".into(),
            ));
        }
    }
    let (_, cert) =
        X509Certificate::from_der(&der).map_err(|e| Error::Crypto(format!("certificate: {e}")))?;
    if cert.public_key().subject_public_key.data.as_ref() != key.public_key_raw() {
        return Err(Error::Protocol(
            "the certificate is not for the key this agent generated".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::{Issuer, SanType};

    fn issue(key: &KeyPair, id: AgentId, days: i64) -> String {
        let ca_key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).unwrap();
        let mut ca = CertificateParams::default();
        ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let issuer = Issuer::new(ca, ca_key);
        let mut params = CertificateParams::default();
        params.subject_alt_names = vec![SanType::URI(id.uri().try_into().unwrap())];
        params.not_before = time::OffsetDateTime::from_unix_timestamp(1_700_000_000).unwrap();
        params.not_after = params.not_before + time::Duration::days(days);
        params.signed_by(key, &issuer).unwrap().pem()
    }

    #[test]
    fn csr_is_pem_and_key_is_p256() {
        let (key, csr) = new_key_and_csr().unwrap();
        assert!(csr.starts_with("-----BEGIN CERTIFICATE REQUEST-----"));
        assert_eq!(key.public_key_raw().len(), 65);
    }

    #[test]
    fn renewal_is_due_two_thirds_through_the_lifetime() {
        let (key, _) = new_key_and_csr().unwrap();
        let v = Validity::of_pem(&issue(&key, AgentId::new_random(), 30)).unwrap();
        assert_eq!(v.not_after - v.not_before, 30 * 86_400);
        assert_eq!(v.renew_at(), 1_700_000_000 + 20 * 86_400);
    }

    #[test]
    fn an_issued_certificate_must_match_identity_and_key() {
        let (key, _) = new_key_and_csr().unwrap();
        let id = AgentId::new_random();
        let pem = issue(&key, id, 30);
        check_issued(&pem, id, &key).unwrap();
        assert!(check_issued(&pem, AgentId::new_random(), &key).is_err());
        let (other, _) = new_key_and_csr().unwrap();
        assert!(check_issued(&pem, id, &other).is_err());
        assert!(check_issued("garbage", id, &key).is_err());
    }
}
