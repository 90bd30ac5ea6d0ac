//! The controller's certificate authority (ECDSA P-256, 10 years): it signs the gateway's
//! server certificate and the agents' client certificates, and nothing else.

use std::fmt;

use rcgen::{
    BasicConstraints, CertificateParams, CertificateSigningRequestParams, DistinguishedName,
    DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose, PublicKeyData,
    SanType, SerialNumber,
};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use time::{Duration, OffsetDateTime};
use vigil_shared::ids::AgentId;

use crate::data_dir::{CA_KEY, CA_PEM, DataDir};
use crate::{Error, Result};

/// Lifetime of the CA certificate.
pub const CA_LIFETIME: Duration = Duration::days(3650);
/// Lifetime of an agent certificate.
pub const AGENT_CERT_LIFETIME: Duration = Duration::days(30);
/// How far back `not_before` is set, so that small clock differences do not matter.
const BACKDATE: Duration = Duration::minutes(5);
/// Largest CSR accepted, in bytes of PEM.
const MAX_CSR_PEM: usize = 16 * 1024;

/// A certificate the CA issued.
#[derive(Debug, Clone)]
pub struct IssuedCert {
    /// The certificate (PEM).
    pub pem: String,
    /// The certificate (DER).
    pub der: CertificateDer<'static>,
    /// Its serial number, lowercase hex as `vigil_shared::tls::serial_and_expiry` reads it.
    pub serial: String,
    /// Its not-after time (Unix seconds).
    pub expires_at: i64,
}

/// The CA: its certificate and the issuer (certificate fields plus private key).
pub struct CertificateAuthority {
    cert_pem: String,
    cert_der: CertificateDer<'static>,
    issuer: Issuer<'static, KeyPair>,
}

impl fmt::Debug for CertificateAuthority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CertificateAuthority")
            .field("fingerprint", &self.fingerprint())
            .finish_non_exhaustive()
    }
}

fn cert_error(what: &'static str) -> impl FnOnce(rcgen::Error) -> Error {
    move |e| Error::Certificate(format!("{what}: {e}"))
}

/// A random 16-byte certificate serial number (127 random bits). The first byte is kept
/// between 0x01 and 0x7f so the DER integer is positive and always 16 bytes long: a
/// leading zero byte would be dropped (a 1-in-256 shorter serial) and a high bit would
/// need a padding byte.
pub(crate) fn random_serial() -> Result<SerialNumber> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| Error::Certificate(format!("random serial: {e}")))?;
    bytes[0] = (bytes[0] & 0x7f).max(1);
    Ok(SerialNumber::from_slice(&bytes))
}

impl CertificateAuthority {
    /// Loads the CA from the data directory, creating it on first use. The caller holds the
    /// data directory's lock.
    pub fn load_or_create(dir: &DataDir, now: OffsetDateTime) -> Result<Self> {
        Self::load_or_create_files(dir, (CA_PEM, CA_KEY), "Vigil CA", now)
    }

    /// Loads the CA kept in `files` (certificate, key) of `dir`, creating one named `name`
    /// when neither is there. The caller holds the directory's lock.
    pub fn load_or_create_files(
        dir: &DataDir,
        (cert_file, key_file): (&str, &str),
        name: &str,
        now: OffsetDateTime,
    ) -> Result<Self> {
        match (dir.read_optional(cert_file)?, dir.read_optional(key_file)?) {
            (Some(cert), Some(key)) => Self::from_pem(&cert, &key),
            (None, None) => {
                let (ca, key_pem) = Self::create_named(name, now)?;
                dir.write_private(key_file, key_pem.as_bytes())?;
                dir.write_public(cert_file, ca.cert_pem.as_bytes())?;
                tracing::info!(fingerprint = %ca.fingerprint(), name, "created a CA");
                Ok(ca)
            }
            _ => Err(Error::Certificate(format!(
                "{} has only one of {cert_file} and {key_file}; restore the other or remove both",
                dir.root().display()
            ))),
        }
    }

    /// A new self-signed CA valid from `now` for ten years, and its private key (PEM).
    pub fn create(now: OffsetDateTime) -> Result<(Self, String)> {
        Self::create_named("Vigil CA", now)
    }

    /// A new self-signed CA with the common name `name`, and its private key (PEM).
    pub fn create_named(name: &str, now: OffsetDateTime) -> Result<(Self, String)> {
        let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)
            .map_err(cert_error("generating the CA key"))?;
        let mut params = CertificateParams::default();
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, name);
        dn.push(DnType::OrganizationName, "Vigil");
        params.distinguished_name = dn;
        params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        params.not_before = now - Duration::hours(1);
        params.not_after = now + CA_LIFETIME;
        params.serial_number = Some(random_serial()?);
        let cert = params
            .self_signed(&key)
            .map_err(cert_error("signing the CA"))?;
        let key_pem = key.serialize_pem();
        let ca = CertificateAuthority {
            cert_pem: cert.pem(),
            cert_der: cert.der().clone(),
            issuer: Issuer::new(params, key),
        };
        Ok((ca, key_pem))
    }

    /// Issues a certificate for the replica `id` (server and client use, for the link
    /// between replicas) to `key`, for `sans` and the URI SAN `vigil://replica/<id>`.
    pub fn issue_replica_cert(
        &self,
        id: &str,
        mut sans: Vec<SanType>,
        key: &KeyPair,
        lifetime: Duration,
        now: OffsetDateTime,
    ) -> Result<IssuedCert> {
        let uri = format!("vigil://replica/{id}")
            .try_into()
            .map_err(|e| Error::Certificate(format!("replica URI: {e}")))?;
        sans.push(SanType::URI(uri));
        let ekus = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        let name = (format!("vigil-replica {id}"), "Vigil replicas");
        let params = leaf_params(name, sans, ekus, lifetime, now)?;
        let cert = params
            .signed_by(key, &self.issuer)
            .map_err(cert_error("signing a replica certificate"))?;
        issued(cert.pem(), cert.der().clone())
    }

    /// The CA from its certificate and private key (PEM).
    pub fn from_pem(cert_pem: &str, key_pem: &str) -> Result<Self> {
        let key = KeyPair::from_pem(key_pem).map_err(cert_error("reading the CA key"))?;
        let cert_der = CertificateDer::from_pem_slice(cert_pem.as_bytes())
            .map_err(|e| Error::Certificate(format!("reading the CA certificate: {e}")))?;
        if cert_der_public_key(&cert_der).as_deref() != Some(key.der_bytes()) {
            return Err(Error::Certificate(
                "the CA key does not belong to the CA certificate".into(),
            ));
        }
        let issuer = Issuer::from_ca_cert_der(&cert_der, key)
            .map_err(cert_error("reading the CA certificate"))?;
        Ok(CertificateAuthority {
            cert_pem: cert_pem.to_owned(),
            cert_der,
            issuer,
        })
    }

    /// The CA certificate (PEM).
    pub fn pem(&self) -> &str {
        &self.cert_pem
    }

    /// The CA certificate (DER).
    pub fn der(&self) -> &CertificateDer<'static> {
        &self.cert_der
    }

    /// `sha256:<hex>` of the DER certificate, as `ca show` prints it and agents pin it.
    pub fn fingerprint(&self) -> String {
        vigil_shared::tls::fingerprint(&self.cert_der)
    }

    /// Issues a 30-day client certificate for `agent` to the key of `csr_pem`. The CSR's
    /// subject and extensions are ignored: the identity is the URI SAN
    /// `vigil://agent/<uuid>`, the only usage clientAuth.
    pub fn sign_agent_csr(
        &self,
        csr_pem: &str,
        agent: AgentId,
        now: OffsetDateTime,
    ) -> Result<IssuedCert> {
        if csr_pem.len() > MAX_CSR_PEM {
            return Err(Error::BadCsr(format!("larger than {MAX_CSR_PEM} bytes")));
        }
        let csr = CertificateSigningRequestParams::from_pem(csr_pem)
            .map_err(|e| Error::BadCsr(e.to_string()))?;
        let uri = agent
            .uri()
            .try_into()
            .map_err(|e| Error::Certificate(format!("agent URI: {e}")))?;
        let params = leaf_params(
            (agent.to_string(), "Vigil agents"),
            vec![SanType::URI(uri)],
            vec![ExtendedKeyUsagePurpose::ClientAuth],
            AGENT_CERT_LIFETIME,
            now,
        )?;
        let cert = params
            .signed_by(&csr.public_key, &self.issuer)
            .map_err(|e| Error::BadCsr(e.to_string()))?;
        issued(cert.pem(), cert.der().clone())
    }

    /// Issues a server certificate for `sans` (DNS names and IP addresses) to `key`.
    pub fn issue_server_cert(
        &self,
        sans: Vec<SanType>,
        key: &KeyPair,
        lifetime: Duration,
        now: OffsetDateTime,
    ) -> Result<IssuedCert> {
        let params = leaf_params(
            ("vigil-gateway".to_owned(), "Vigil"),
            sans,
            vec![ExtendedKeyUsagePurpose::ServerAuth],
            lifetime,
            now,
        )?;
        let cert = params
            .signed_by(key, &self.issuer)
            .map_err(cert_error("signing the gateway certificate"))?;
        issued(cert.pem(), cert.der().clone())
    }
}

/// The fields every certificate the CA issues shares: the subject (common name,
/// organization), `sans`, the usages `ekus` plus digital signature, valid from a little
/// before `now` for `lifetime`, a random serial, the CA's key identifier.
fn leaf_params(
    (common_name, organization): (String, &str),
    sans: Vec<SanType>,
    ekus: Vec<ExtendedKeyUsagePurpose>,
    lifetime: Duration,
    now: OffsetDateTime,
) -> Result<CertificateParams> {
    let mut params = CertificateParams::default();
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    name.push(DnType::OrganizationName, organization);
    params.distinguished_name = name;
    params.subject_alt_names = sans;
    params.extended_key_usages = ekus;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.not_before = now - BACKDATE;
    params.not_after = now + lifetime;
    params.serial_number = Some(random_serial()?);
    params.use_authority_key_identifier_extension = true;
    Ok(params)
}

fn issued(pem: String, der: CertificateDer<'static>) -> Result<IssuedCert> {
    let (serial, expires_at) = vigil_shared::tls::serial_and_expiry(&der)
        .ok_or_else(|| Error::Certificate("cannot read back an issued certificate".into()))?;
    Ok(IssuedCert {
        pem,
        der,
        serial,
        expires_at,
    })
}

/// The raw public key bits of a certificate.
fn cert_der_public_key(der: &[u8]) -> Option<Vec<u8>> {
    use x509_parser::prelude::{FromDer, X509Certificate};
    let (_, cert) = X509Certificate::from_der(der).ok()?;
    Some(cert.public_key().subject_public_key.data.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn csr_pem() -> String {
        let key = KeyPair::generate().unwrap();
        CertificateParams::default()
            .serialize_request(&key)
            .unwrap()
            .pem()
            .unwrap()
    }

    #[test]
    fn agent_certificates_carry_the_identity_and_only_client_auth() {
        let now = OffsetDateTime::now_utc();
        let (ca, _) = CertificateAuthority::create(now).unwrap();
        let agent = AgentId::new_random();
        let cert = ca.sign_agent_csr(&csr_pem(), agent, now).unwrap();
        assert_eq!(
            vigil_shared::tls::agent_id_from_cert(&cert.der),
            Some(agent)
        );
        let lifetime = cert.expires_at - now.unix_timestamp();
        assert!(
            (29 * 86_400..=30 * 86_400).contains(&lifetime),
            "{lifetime}"
        );

        use x509_parser::prelude::{FromDer, X509Certificate};
        let (_, parsed) = X509Certificate::from_der(&cert.der).unwrap();
        let eku = parsed.extended_key_usage().unwrap().unwrap().value;
        assert!(eku.client_auth && !eku.server_auth && !eku.any);
        assert_eq!(parsed.raw_serial().len(), 16);
        for _ in 0..2000 {
            let serial = random_serial().unwrap();
            let first = serial.as_ref()[0];
            assert!((1..0x80).contains(&first), "{serial:?}");
        }
        let other = ca.sign_agent_csr(&csr_pem(), agent, now).unwrap();
        assert_ne!(cert.serial, other.serial, "serials are random");
    }

    #[test]
    fn bad_csrs_are_refused() {
        let (ca, _) = CertificateAuthority::create(OffsetDateTime::now_utc()).unwrap();
        let err = ca
            .sign_agent_csr(
                "not a csr",
                AgentId::new_random(),
                OffsetDateTime::now_utc(),
            )
            .unwrap_err();
        assert!(matches!(err, Error::BadCsr(_)), "{err:?}");
    }

    #[test]
    fn a_ca_reloads_from_pem_and_refuses_a_foreign_key() {
        let now = OffsetDateTime::now_utc();
        let (ca, key) = CertificateAuthority::create(now).unwrap();
        let again = CertificateAuthority::from_pem(ca.pem(), &key).unwrap();
        assert_eq!(again.fingerprint(), ca.fingerprint());
        let (_, other_key) = CertificateAuthority::create(now).unwrap();
        assert!(CertificateAuthority::from_pem(ca.pem(), &other_key).is_err());
    }
}
