//! Certificate helpers both sides need: CA fingerprints for pinning and the agent identity
//! inside a certificate.

use crate::ids::AgentId;
use sha2::{Digest, Sha256};
use x509_parser::extensions::GeneralName;
use x509_parser::prelude::{FromDer, X509Certificate};

/// `sha256:<hex>` of a DER certificate, as `vigil-controller ca show` prints it.
pub fn fingerprint(der: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(der)))
}

/// Normalise a user-supplied fingerprint (`sha256:AB:CD…`, any case) for comparison.
pub fn normalize_fingerprint(input: &str) -> Option<String> {
    let hexpart = input
        .trim()
        .strip_prefix("sha256:")
        .unwrap_or(input.trim())
        .replace(':', "")
        .to_ascii_lowercase();
    (hexpart.len() == 64 && hexpart.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| format!("sha256:{hexpart}"))
}

/// The agent id from a certificate's `vigil://agent/<uuid>` URI SAN, if it has exactly one.
pub fn agent_id_from_cert(der: &[u8]) -> Option<AgentId> {
    let (_, cert) = X509Certificate::from_der(der).ok()?;
    let san = cert.subject_alternative_name().ok()??;
    let mut ids = san.value.general_names.iter().filter_map(|n| match n {
        GeneralName::URI(uri) => AgentId::from_uri(uri),
        _ => None,
    });
    let id = ids.next()?;
    ids.next().is_none().then_some(id)
}

/// The certificate's serial number as lowercase hex, and its not-after time (Unix seconds).
pub fn serial_and_expiry(der: &[u8]) -> Option<(String, i64)> {
    let (_, cert) = X509Certificate::from_der(der).ok()?;
    Some((
        hex::encode(cert.raw_serial()),
        cert.validity().not_after.timestamp(),
    ))
}

/// The certificate's not-before time (Unix seconds).
pub fn not_before(der: &[u8]) -> Option<i64> {
    let (_, cert) = X509Certificate::from_der(der).ok()?;
    Some(cert.validity().not_before.timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_normalise() {
        let fp = fingerprint(b"hello");
        assert!(fp.starts_with("sha256:") && fp.len() == 71);
        let upper = fp.to_ascii_uppercase().replace("SHA256:", "sha256:");
        assert_eq!(normalize_fingerprint(&upper).as_deref(), Some(fp.as_str()));
        assert_eq!(normalize_fingerprint("sha256:abc"), None);
        assert_eq!(
            normalize_fingerprint(&fp[7..]).as_deref(),
            Some(fp.as_str())
        );
    }

    #[test]
    fn garbage_is_not_a_certificate() {
        assert_eq!(agent_id_from_cert(b"not der"), None);
        assert_eq!(serial_and_expiry(&[0x30, 0x03, 0x02, 0x01]), None);
    }
}
