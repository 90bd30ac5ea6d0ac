//! The gateway's server certificate: its SANs, and re-issuing it on start when the SANs
//! changed, it expires within 30 days or it no longer verifies against the CA.

use std::collections::BTreeSet;
use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;

use rcgen::{KeyPair, SanType};
use rustls::client::danger::ServerCertVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, DnsName, PrivateKeyDer, ServerName, UnixTime};
use time::{Duration, OffsetDateTime};
use x509_parser::extensions::GeneralName;
use x509_parser::prelude::{FromDer, X509Certificate};

use super::ca::CertificateAuthority;
use crate::data_dir::{DataDir, GATEWAY_KEY, GATEWAY_PEM};
use crate::{Error, Result};

/// The name agents verify the gateway certificate against, whatever their URL says.
pub const GATEWAY_SERVER_NAME: &str = "vigil-gateway";
/// Lifetime of the gateway certificate.
pub const GATEWAY_CERT_LIFETIME: Duration = Duration::days(365);
/// A gateway certificate expiring sooner than this is re-issued on start.
pub const GATEWAY_RENEW_BEFORE: Duration = Duration::days(30);

/// The gateway's certificate chain (gateway, then CA) and private key.
pub struct GatewayIdentity {
    /// `[gateway, ca]`: the CA is sent so enrolling agents can pin its fingerprint.
    pub chain: Vec<CertificateDer<'static>>,
    /// The gateway's private key.
    pub key: PrivateKeyDer<'static>,
}

impl fmt::Debug for GatewayIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GatewayIdentity")
            .field("chain_len", &self.chain.len())
            .finish_non_exhaustive()
    }
}

/// One subject alternative name of the gateway certificate.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GatewaySan {
    /// A DNS name (lowercase).
    Dns(String),
    /// An IP address.
    Ip(IpAddr),
}

impl GatewaySan {
    /// Parses a `--gateway-san` value: an IP address or a DNS name.
    pub fn parse(value: &str) -> Result<Self> {
        let value = value.trim();
        if let Ok(ip) = value.parse::<IpAddr>() {
            return Ok(GatewaySan::Ip(ip));
        }
        DnsName::try_from(value)
            .map(|_| GatewaySan::Dns(value.to_ascii_lowercase()))
            .map_err(|_| {
                Error::Config(format!(
                    "gateway SAN {value:?} is neither an IP address nor a valid DNS name"
                ))
            })
    }

    fn to_rcgen(&self) -> Result<SanType> {
        Ok(match self {
            GatewaySan::Ip(ip) => SanType::IpAddress(*ip),
            GatewaySan::Dns(name) => SanType::DnsName(
                name.clone()
                    .try_into()
                    .map_err(|e| Error::Certificate(format!("SAN {name}: {e}")))?,
            ),
        })
    }
}

impl fmt::Display for GatewaySan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GatewaySan::Dns(name) => write!(f, "DNS:{name}"),
            GatewaySan::Ip(ip) => write!(f, "IP:{ip}"),
        }
    }
}

/// The SANs of the contract: `vigil-gateway`, `localhost`, `hostname`, 127.0.0.1, ::1, and
/// every extra SAN.
pub fn gateway_sans(hostname: Option<&str>, extra: &[GatewaySan]) -> BTreeSet<GatewaySan> {
    let mut sans: BTreeSet<GatewaySan> = [
        GatewaySan::Dns(GATEWAY_SERVER_NAME.into()),
        GatewaySan::Dns("localhost".into()),
        GatewaySan::Ip(IpAddr::from([127, 0, 0, 1])),
        GatewaySan::Ip(IpAddr::from([0u16, 0, 0, 0, 0, 0, 0, 1])),
    ]
    .into_iter()
    .collect();
    if let Some(host) = hostname.and_then(|h| GatewaySan::parse(h).ok()) {
        sans.insert(host);
    }
    sans.extend(extra.iter().cloned());
    sans
}

/// This machine's host name, if it has a usable one.
pub fn local_hostname() -> Option<String> {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|path| std::fs::read_to_string(path).ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
}

/// Loads the gateway identity, issuing a new certificate and key when needed. The caller
/// holds the data directory's lock.
pub fn load_or_issue(
    dir: &DataDir,
    ca: &CertificateAuthority,
    sans: &BTreeSet<GatewaySan>,
    now: OffsetDateTime,
) -> Result<GatewayIdentity> {
    if let (Some(cert_pem), Some(key_pem)) = (
        dir.read_optional(GATEWAY_PEM)?,
        dir.read_optional(GATEWAY_KEY)?,
    ) {
        let cert = CertificateDer::from_pem_slice(cert_pem.as_bytes()).ok();
        let reason = match &cert {
            Some(der) => reissue_reason(der, ca, sans, now),
            None => Some("it cannot be read"),
        };
        match (
            reason,
            cert,
            PrivateKeyDer::from_pem_slice(key_pem.as_bytes()),
        ) {
            (None, Some(cert), Ok(key)) => {
                return Ok(GatewayIdentity {
                    chain: vec![cert, ca.der().clone()],
                    key,
                });
            }
            (reason, ..) => tracing::info!(
                reason = reason.unwrap_or("its key cannot be read"),
                "re-issuing the gateway certificate"
            ),
        }
    }
    issue(dir, ca, sans, now)
}

fn issue(
    dir: &DataDir,
    ca: &CertificateAuthority,
    sans: &BTreeSet<GatewaySan>,
    now: OffsetDateTime,
) -> Result<GatewayIdentity> {
    let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)
        .map_err(|e| Error::Certificate(format!("generating the gateway key: {e}")))?;
    let rcgen_sans = sans
        .iter()
        .map(GatewaySan::to_rcgen)
        .collect::<Result<_>>()?;
    let cert = ca.issue_server_cert(rcgen_sans, &key, GATEWAY_CERT_LIFETIME, now)?;
    dir.write_private(GATEWAY_KEY, key.serialize_pem().as_bytes())?;
    dir.write_public(GATEWAY_PEM, cert.pem.as_bytes())?;
    let names: Vec<String> = sans.iter().map(ToString::to_string).collect();
    tracing::info!(sans = %names.join(","), "issued the gateway certificate");
    let key = PrivateKeyDer::try_from(key.serialize_der())
        .map_err(|e| Error::Certificate(format!("gateway key: {e}")))?;
    Ok(GatewayIdentity {
        chain: vec![cert.der, ca.der().clone()],
        key,
    })
}

/// Why an existing gateway certificate must be replaced, or `None` to keep it.
fn reissue_reason(
    cert: &CertificateDer<'_>,
    ca: &CertificateAuthority,
    wanted: &BTreeSet<GatewaySan>,
    now: OffsetDateTime,
) -> Option<&'static str> {
    let Ok((_, parsed)) = X509Certificate::from_der(cert) else {
        return Some("it cannot be parsed");
    };
    if parsed.validity().not_after.timestamp() < (now + GATEWAY_RENEW_BEFORE).unix_timestamp() {
        return Some("it expires within 30 days");
    }
    if !verifies_against(cert, ca, now) {
        return Some("it does not verify against the CA");
    }
    let present: BTreeSet<GatewaySan> = parsed
        .subject_alternative_name()
        .ok()
        .flatten()
        .map(|san| {
            san.value
                .general_names
                .iter()
                .filter_map(|name| match name {
                    GeneralName::DNSName(dns) => Some(GatewaySan::Dns(dns.to_ascii_lowercase())),
                    GeneralName::IPAddress(bytes) => ip_from_bytes(bytes).map(GatewaySan::Ip),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    (&present != wanted).then_some("its SANs changed")
}

fn ip_from_bytes(bytes: &[u8]) -> Option<IpAddr> {
    match bytes.len() {
        4 => <[u8; 4]>::try_from(bytes).ok().map(IpAddr::from),
        16 => <[u8; 16]>::try_from(bytes).ok().map(IpAddr::from),
        _ => None,
    }
}

/// True when `cert` is a valid server certificate for `vigil-gateway` under `ca`.
fn verifies_against(
    cert: &CertificateDer<'_>,
    ca: &CertificateAuthority,
    now: OffsetDateTime,
) -> bool {
    let mut roots = rustls::RootCertStore::empty();
    if roots.add(ca.der().clone()).is_err() {
        return false;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let Ok(verifier) =
        rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
    else {
        return false;
    };
    let Ok(name) = ServerName::try_from(GATEWAY_SERVER_NAME) else {
        return false;
    };
    let secs = u64::try_from(now.unix_timestamp()).unwrap_or(0);
    verifier
        .verify_server_cert(
            cert,
            &[],
            &name,
            &[],
            UnixTime::since_unix_epoch(std::time::Duration::from_secs(secs)),
        )
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sans_follow_the_contract_and_reissue_when_they_change() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path());
        let now = OffsetDateTime::now_utc();
        let (ca, _) = CertificateAuthority::create(now).unwrap();
        let sans = gateway_sans(
            Some("node-1"),
            &[GatewaySan::parse("vigil.example").unwrap()],
        );
        assert!(sans.contains(&GatewaySan::Dns("vigil-gateway".into())));
        assert!(sans.contains(&GatewaySan::Dns("node-1".into())));
        assert!(sans.contains(&GatewaySan::Ip("::1".parse().unwrap())));

        let first = load_or_issue(&dir, &ca, &sans, now).unwrap();
        assert_eq!(first.chain.len(), 2);
        let again = load_or_issue(&dir, &ca, &sans, now).unwrap();
        assert_eq!(
            again.chain[0], first.chain[0],
            "unchanged SANs keep the certificate"
        );

        let mut more = sans.clone();
        more.insert(GatewaySan::parse("10.0.0.5").unwrap());
        let changed = load_or_issue(&dir, &ca, &more, now).unwrap();
        assert_ne!(changed.chain[0], first.chain[0]);

        let later = now + Duration::days(340);
        let renewed = load_or_issue(&dir, &ca, &more, later).unwrap();
        assert_ne!(
            renewed.chain[0], changed.chain[0],
            "expiring soon is re-issued"
        );

        let (other_ca, _) = CertificateAuthority::create(now).unwrap();
        let resigned = load_or_issue(&dir, &other_ca, &more, now).unwrap();
        assert_ne!(resigned.chain[0], renewed.chain[0], "a new CA re-issues");
    }

    #[test]
    fn invalid_sans_are_refused() {
        assert!(GatewaySan::parse("not a name!").is_err());
        assert_eq!(
            GatewaySan::parse("10.1.2.3").unwrap(),
            GatewaySan::Ip("10.1.2.3".parse().unwrap())
        );
    }
}
