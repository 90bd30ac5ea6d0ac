//! The Ed25519 grant-signing key: a 32-byte seed stored as `vgk_` and 64 hex characters
//! in `grant.key` (0600). Agents receive the public half at enrollment and pin it. The
//! prefix gives the key a shape that redaction recognizes (`vigil_shared::redact`), unlike
//! bare hex; a file in the older bare-hex form is read and rewritten with the prefix.

use std::fmt;

use vigil_shared::grant::{GrantSigningKey, signing_key_from_bytes};

use crate::data_dir::{DataDir, GRANT_KEY};
use crate::{Error, Result};

/// The prefix of the key in `grant.key`.
pub const FILE_PREFIX: &str = "vgk_";

/// What `grant.key` holds for a seed in hex.
fn file_text(seed_hex: &str) -> String {
    format!("{FILE_PREFIX}{seed_hex}\n")
}

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
            let text = text.trim();
            let key = Self::parse(text)?;
            if !text.starts_with(FILE_PREFIX) {
                dir.write_private(GRANT_KEY, file_text(text).as_bytes())?;
                tracing::info!("rewrote the grant-signing key file with its vgk_ prefix");
            }
            return Ok(key);
        }
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| Error::Certificate(format!("grant key: {e}")))?;
        dir.write_private(GRANT_KEY, file_text(&hex::encode(seed)).as_bytes())?;
        tracing::info!("created the grant-signing key");
        Ok(GrantKey {
            signing: signing_key_from_bytes(&seed),
        })
    }

    /// The key as `grant.key` holds it: `vgk_` and the hex seed (or the older bare hex).
    pub fn parse(file_text: &str) -> Result<Self> {
        let text = file_text.trim();
        Self::from_hex(text.strip_prefix(FILE_PREFIX).unwrap_or(text))
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
    fn the_seed_is_prefixed_hex_0600_and_stable() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path());
        let first = GrantKey::load_or_create(&dir).unwrap();
        let again = GrantKey::load_or_create(&dir).unwrap();
        assert_eq!(first.public_bytes(), again.public_bytes());
        let text = std::fs::read_to_string(dir.path(GRANT_KEY)).unwrap();
        let hex = text.trim().strip_prefix(FILE_PREFIX).unwrap();
        assert_eq!(hex.len(), 64);
        // Redaction recognizes the file's shape.
        assert_eq!(
            vigil_shared::redact::redact(&text).text.trim(),
            "[REDACTED]"
        );
        let mode = std::fs::metadata(dir.path(GRANT_KEY))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn an_older_bare_hex_key_is_kept_and_rewritten_with_the_prefix() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path());
        let seed = "11".repeat(32);
        dir.write_private(GRANT_KEY, format!("{seed}\n").as_bytes())
            .unwrap();
        let key = GrantKey::load_or_create(&dir).unwrap();
        assert_eq!(
            key.public_bytes(),
            GrantKey::from_hex(&seed).unwrap().public_bytes()
        );
        let text = std::fs::read_to_string(dir.path(GRANT_KEY)).unwrap();
        assert_eq!(text, format!("vgk_{seed}\n"));
        assert!(GrantKey::parse("vgk_00").is_err());
    }
}
