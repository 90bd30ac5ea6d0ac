//! The Ed25519 grant-signing key: a 32-byte seed stored as 64 hex characters in
//! `grant.key` (0600). Agents receive the public half at enrollment and pin it.

use std::fmt;

use vigil_shared::grant::{GrantSigningKey, signing_key_from_bytes};

use crate::data_dir::{DataDir, GRANT_KEY};
use crate::{Error, Result};

/// The controller's grant-signing key.
pub struct GrantKey {
    signing: GrantSigningKey,
}

impl fmt::Debug for GrantKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GrantKey")
            .field("public", &hex::encode(self.public_bytes()))
            .finish_non_exhaustive()
    }
}

impl GrantKey {
    /// Loads `grant.key`, creating it on first use. The caller holds the data directory's lock.
    pub fn load_or_create(dir: &DataDir) -> Result<Self> {
        if let Some(text) = dir.read_optional(GRANT_KEY)? {
            return Self::from_hex(text.trim());
        }
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| Error::Certificate(format!("grant key: {e}")))?;
        dir.write_private(GRANT_KEY, format!("{}\n", hex::encode(seed)).as_bytes())?;
        tracing::info!("created the grant-signing key");
        Ok(GrantKey {
            signing: signing_key_from_bytes(&seed),
        })
    }

    /// The key from its 64-hex-character seed.
    pub fn from_hex(seed_hex: &str) -> Result<Self> {
        let seed: [u8; 32] = hex::decode(seed_hex)
            .ok()
            .and_then(|bytes| bytes.try_into().ok())
            .ok_or_else(|| Error::Certificate(format!("{GRANT_KEY} is not 64 hex characters")))?;
        Ok(GrantKey {
            signing: signing_key_from_bytes(&seed),
        })
    }

    /// The 32-byte public key agents verify grants with.
    pub fn public_bytes(&self) -> [u8; 32] {
        self.signing.verifying_key().to_bytes()
    }

    /// The signing key (for the approvals issue).
    pub fn signing_key(&self) -> &GrantSigningKey {
        &self.signing
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_seed_is_hex_0600_and_stable() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path());
        let first = GrantKey::load_or_create(&dir).unwrap();
        let again = GrantKey::load_or_create(&dir).unwrap();
        assert_eq!(first.public_bytes(), again.public_bytes());
        let text = std::fs::read_to_string(dir.path(GRANT_KEY)).unwrap();
        assert_eq!(text.trim().len(), 64);
        let mode = std::fs::metadata(dir.path(GRANT_KEY))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
