//! Signing the grant of one approved write: approval id, agent, target, the exact command
//! bytes, a lifetime of one minute and a fresh random nonce.

use vigil_proto::agent::v1::Grant;
use vigil_proto::convert::grant_to_proto;
use vigil_shared::grant::{GrantBody, NONCE_LEN};
use vigil_shared::ids::{AgentId, ExecTarget};

use crate::pki::GrantKey;
use crate::{Error, Result};

/// Lifetime of a grant in seconds: enough to reach the agent, well under the two-minute
/// maximum agents accept.
pub const GRANT_LIFETIME_S: i64 = 60;

/// The signed wire grant for `command` on `agent`'s `target`, for approval `approval_id`.
pub fn sign_grant(
    key: &GrantKey,
    approval_id: &str,
    agent: AgentId,
    target: &ExecTarget,
    command: &str,
    now: i64,
) -> Result<Grant> {
    let mut nonce = vec![0u8; NONCE_LEN];
    getrandom::fill(&mut nonce).map_err(|e| Error::Certificate(format!("grant nonce: {e}")))?;
    let body = GrantBody {
        approval_id: approval_id.to_owned(),
        agent_id: agent,
        target: target.clone(),
        command: command.as_bytes().to_vec(),
        issued_at: now,
        expires_at: now + GRANT_LIFETIME_S,
        nonce,
    };
    let signature = body.sign(key.signing_key());
    Ok(grant_to_proto(&body, &signature))
}

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_proto::convert::grant_from_proto;

    #[test]
    fn a_signed_grant_verifies_for_its_binding_only() {
        let key = GrantKey::from_hex(&"11".repeat(32)).unwrap();
        let agent = AgentId::new_random();
        let grant = sign_grant(
            &key,
            "a1",
            agent,
            &ExecTarget::Lxc(141),
            "systemctl restart x",
            1000,
        )
        .unwrap();
        let (body, signature) = grant_from_proto(&grant).unwrap();
        let public = key.signing_key().verifying_key();
        assert!(
            body.verify(
                signature,
                &public,
                agent,
                &ExecTarget::Lxc(141),
                b"systemctl restart x",
                1001
            )
            .is_ok()
        );
        assert!(
            body.verify(
                signature,
                &public,
                agent,
                &ExecTarget::Host,
                b"systemctl restart x",
                1001
            )
            .is_err()
        );
        assert!(
            body.verify(
                signature,
                &public,
                agent,
                &ExecTarget::Lxc(141),
                b"systemctl restart y",
                1001
            )
            .is_err()
        );
        let other = sign_grant(
            &key,
            "a1",
            agent,
            &ExecTarget::Lxc(141),
            "systemctl restart x",
            1000,
        )
        .unwrap();
        assert_ne!(grant.nonce, other.nonce, "every grant has its own nonce");
    }
}
