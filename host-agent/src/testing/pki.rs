//! A throw-away CA that signs a gateway certificate and agent certificates.

use rcgen::{
    BasicConstraints, Certificate, CertificateParams, CertificateSigningRequestParams,
    DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    PKCS_ECDSA_P256_SHA256, SanType,
};
use time::OffsetDateTime;
use vigil_shared::ids::AgentId;

/// A CA with its gateway certificate.
pub struct Pki {
    ca_params: CertificateParams,
    ca_key: KeyPair,
    pub ca: Certificate,
    pub gateway: Certificate,
    pub gateway_key: KeyPair,
}

impl std::fmt::Debug for Pki {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Pki")
    }
}

impl Pki {
    /// A new CA and a gateway certificate for `vigil-gateway` and `localhost`.
    pub fn new() -> Pki {
        let ca_key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).unwrap();
        let mut ca_params = CertificateParams::default();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, "Vigil test CA");
        ca_params.distinguished_name = dn;
        let ca = ca_params.self_signed(&ca_key).unwrap();
        let gateway_key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).unwrap();
        let mut gw =
            CertificateParams::new(vec!["vigil-gateway".into(), "localhost".into()]).unwrap();
        gw.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let gateway = {
            let issuer = Issuer::from_params(&ca_params, &ca_key);
            gw.signed_by(&gateway_key, &issuer).unwrap()
        };
        Pki {
            ca_params,
            ca_key,
            ca,
            gateway,
            gateway_key,
        }
    }

    /// `sha256:<hex>` of the CA.
    pub fn fingerprint(&self) -> String {
        vigil_shared::tls::fingerprint(self.ca.der())
    }

    /// Sign an agent CSR for `id`, valid from `not_before` for `lifetime_s`.
    pub fn sign_agent(
        &self,
        csr_pem: &str,
        id: AgentId,
        not_before: i64,
        lifetime_s: i64,
    ) -> String {
        let mut csr = CertificateSigningRequestParams::from_pem(csr_pem).unwrap();
        csr.params.subject_alt_names = vec![SanType::URI(id.uri().try_into().unwrap())];
        csr.params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        csr.params.not_before = OffsetDateTime::from_unix_timestamp(not_before).unwrap();
        csr.params.not_after =
            OffsetDateTime::from_unix_timestamp(not_before + lifetime_s).unwrap();
        let issuer = Issuer::from_params(&self.ca_params, &self.ca_key);
        csr.signed_by(&issuer).unwrap().pem()
    }
}
