//! Write grants: the controller's Ed25519 signature that lets one agent run one approved
//! command, once, on one target, for at most two minutes.
//!
//! The signature covers a canonical byte string (not the protobuf encoding, which is not
//! canonical): a domain tag, then each field length-prefixed. The agent checks the
//! signature with the key pinned at enrollment, then the binding (agent, target, exact
//! command bytes), then the time window; the nonce cache that refuses replays lives in
//! the agent because it is state.

use crate::ids::{AgentId, ExecTarget};
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};

/// Longest allowed lifetime of a grant, in seconds.
pub const MAX_GRANT_LIFETIME_S: i64 = 120;
/// Clock skew tolerated between controller and agent, in seconds.
pub const ALLOWED_SKEW_S: i64 = 30;
/// Length of a grant nonce in bytes.
pub const NONCE_LEN: usize = 16;

const DOMAIN: &[u8] = b"vigil-grant-v1\0";

/// The signed content of a grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantBody {
    pub approval_id: String,
    pub agent_id: AgentId,
    pub target: ExecTarget,
    pub command: Vec<u8>,
    pub issued_at: i64,
    pub expires_at: i64,
    pub nonce: Vec<u8>,
}

/// Why a grant was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrantError {
    #[error("grant signature is not valid for the pinned grant key")]
    BadSignature,
    #[error("grant is for agent {0}, not this agent")]
    WrongAgent(String),
    #[error("grant is for target {granted}, not {requested}")]
    WrongTarget { granted: String, requested: String },
    #[error("grant is for a different command")]
    WrongCommand,
    #[error("grant has expired")]
    Expired,
    #[error("grant is not valid yet")]
    NotYetValid,
    #[error("grant lifetime exceeds {MAX_GRANT_LIFETIME_S} seconds")]
    TooLong,
    #[error("grant nonce must be {NONCE_LEN} bytes")]
    BadNonce,
    #[error("grant signature must be 64 bytes")]
    MalformedSignature,
}

impl GrantBody {
    /// The exact bytes the signature covers.
    pub fn signing_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(128 + self.command.len());
        out.extend_from_slice(DOMAIN);
        let mut field = |bytes: &[u8]| {
            out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
            out.extend_from_slice(bytes);
        };
        field(self.approval_id.as_bytes());
        field(self.agent_id.to_string().as_bytes());
        field(self.target.to_string().as_bytes());
        field(&self.command);
        field(&self.issued_at.to_be_bytes());
        field(&self.expires_at.to_be_bytes());
        field(&self.nonce);
        out
    }

    /// Sign with the controller's grant key.
    pub fn sign(&self, key: &SigningKey) -> [u8; 64] {
        key.sign(&self.signing_bytes()).to_bytes()
    }

    /// Check everything about a grant for a request to run `command` on `target` at `now`.
    pub fn verify(
        &self,
        signature: &[u8],
        key: &VerifyingKey,
        me: AgentId,
        target: &ExecTarget,
        command: &[u8],
        now: i64,
    ) -> Result<(), GrantError> {
        let sig: [u8; 64] = signature
            .try_into()
            .map_err(|_| GrantError::MalformedSignature)?;
        key.verify(&self.signing_bytes(), &Signature::from_bytes(&sig))
            .map_err(|_| GrantError::BadSignature)?;
        if self.agent_id != me {
            return Err(GrantError::WrongAgent(self.agent_id.to_string()));
        }
        if &self.target != target {
            return Err(GrantError::WrongTarget {
                granted: self.target.to_string(),
                requested: target.to_string(),
            });
        }
        if self.command != command {
            return Err(GrantError::WrongCommand);
        }
        if self.nonce.len() != NONCE_LEN {
            return Err(GrantError::BadNonce);
        }
        if self.expires_at.saturating_sub(self.issued_at) > MAX_GRANT_LIFETIME_S
            || self.expires_at < self.issued_at
        {
            return Err(GrantError::TooLong);
        }
        if now > self.expires_at.saturating_add(ALLOWED_SKEW_S) {
            return Err(GrantError::Expired);
        }
        if now.saturating_add(ALLOWED_SKEW_S) < self.issued_at {
            return Err(GrantError::NotYetValid);
        }
        Ok(())
    }
}

/// A signing key from 32 secret bytes.
pub fn signing_key_from_bytes(bytes: &[u8; 32]) -> SigningKey {
    SigningKey::from_bytes(bytes)
}

/// A verifying key from its 32 raw bytes.
pub fn verifying_key_from_bytes(bytes: &[u8]) -> Option<VerifyingKey> {
    let arr: [u8; 32] = bytes.try_into().ok()?;
    VerifyingKey::from_bytes(&arr).ok()
}

pub use ed25519_dalek::{SigningKey as GrantSigningKey, VerifyingKey as GrantVerifyingKey};

#[cfg(test)]
mod tests {
    use super::*;

    fn body(agent: AgentId) -> GrantBody {
        GrantBody {
            approval_id: "ap-1".into(),
            agent_id: agent,
            target: ExecTarget::Host,
            command: b"systemctl restart nginx".to_vec(),
            issued_at: 1_000,
            expires_at: 1_120,
            nonce: vec![7; NONCE_LEN],
        }
    }

    #[test]
    fn valid_grant_verifies_and_every_binding_is_checked() {
        let key = signing_key_from_bytes(&[42; 32]);
        let vk = key.verifying_key();
        let me = AgentId::new_random();
        let g = body(me);
        let sig = g.sign(&key);
        let cmd = g.command.clone();
        assert_eq!(
            g.verify(&sig, &vk, me, &ExecTarget::Host, &cmd, 1_010),
            Ok(())
        );
        assert_eq!(
            g.verify(
                &sig,
                &vk,
                AgentId::new_random(),
                &ExecTarget::Host,
                &cmd,
                1_010
            ),
            Err(GrantError::WrongAgent(me.to_string()))
        );
        assert!(matches!(
            g.verify(&sig, &vk, me, &ExecTarget::Lxc(1), &cmd, 1_010),
            Err(GrantError::WrongTarget { .. })
        ));
        assert_eq!(
            g.verify(
                &sig,
                &vk,
                me,
                &ExecTarget::Host,
                b"systemctl restart nginx ",
                1_010
            ),
            Err(GrantError::WrongCommand)
        );
        assert_eq!(
            g.verify(&sig, &vk, me, &ExecTarget::Host, &cmd, 1_151),
            Err(GrantError::Expired)
        );
        assert_eq!(
            g.verify(&sig, &vk, me, &ExecTarget::Host, &cmd, 1_149),
            Ok(()),
            "30 s skew allowed"
        );
        assert_eq!(
            g.verify(&sig, &vk, me, &ExecTarget::Host, &cmd, 960),
            Err(GrantError::NotYetValid)
        );
    }

    #[test]
    fn tampering_breaks_the_signature() {
        let key = signing_key_from_bytes(&[1; 32]);
        let me = AgentId::new_random();
        let g = body(me);
        let sig = g.sign(&key);
        let mut forged = g.clone();
        forged.command = b"rm -rf /".to_vec();
        assert_eq!(
            forged.verify(
                &sig,
                &key.verifying_key(),
                me,
                &ExecTarget::Host,
                b"rm -rf /",
                1_010
            ),
            Err(GrantError::BadSignature)
        );
        let other = signing_key_from_bytes(&[2; 32]);
        assert_eq!(
            g.verify(
                &sig,
                &other.verifying_key(),
                me,
                &ExecTarget::Host,
                &g.command,
                1_010
            ),
            Err(GrantError::BadSignature)
        );
        assert_eq!(
            g.verify(
                &sig[..10],
                &key.verifying_key(),
                me,
                &ExecTarget::Host,
                &g.command,
                1_010
            ),
            Err(GrantError::MalformedSignature)
        );
    }

    #[test]
    fn lifetimes_over_two_minutes_are_refused_even_when_signed() {
        let key = signing_key_from_bytes(&[3; 32]);
        let me = AgentId::new_random();
        let mut g = body(me);
        g.expires_at = g.issued_at + 121;
        let sig = g.sign(&key);
        assert_eq!(
            g.verify(
                &sig,
                &key.verifying_key(),
                me,
                &ExecTarget::Host,
                &g.command,
                1_010
            ),
            Err(GrantError::TooLong)
        );
    }

    #[test]
    fn field_boundaries_are_unambiguous() {
        let me = AgentId::new_random();
        let mut a = body(me);
        let mut b = body(me);
        a.approval_id = "ab".into();
        a.command = b"c".to_vec();
        b.approval_id = "a".into();
        b.command = b"bc".to_vec();
        assert_ne!(a.signing_bytes(), b.signing_bytes());
    }
}
