//! Grant checks under arbitrary bodies and times (the in-suite twin of the `grant` fuzz
//! target): verification never panics, extreme times included, and a signed grant verifies
//! only with its own signature, for its own agent, target and command.

#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use vigil_shared::grant::{GrantBody, MAX_GRANT_LIFETIME_S, NONCE_LEN, signing_key_from_bytes};
use vigil_shared::ids::{AgentId, ExecTarget};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn grants_verify_only_their_own_binding(
        issued_at in any::<i64>(),
        lifetime in prop_oneof![0i64..=MAX_GRANT_LIFETIME_S, any::<i64>()],
        now in any::<i64>(),
        command in proptest::collection::vec(any::<u8>(), 0..64),
        nonce_len in 0usize..24,
        vmid in any::<u32>(),
        flip in 0usize..64,
    ) {
        let key = signing_key_from_bytes(&[7; 32]);
        let public = key.verifying_key();
        let me = AgentId::new_random();
        let target = ExecTarget::Lxc(vmid);
        let body = GrantBody {
            approval_id: "a1".into(),
            agent_id: me,
            target: target.clone(),
            command: command.clone(),
            issued_at,
            expires_at: issued_at.saturating_add(lifetime),
            nonce: vec![1; nonce_len],
        };
        let signature = body.sign(&key);
        let verdict = body.verify(&signature, &public, me, &target, &command, now);
        if verdict.is_ok() {
            prop_assert_eq!(body.nonce.len(), NONCE_LEN);
            prop_assert!(body.expires_at - body.issued_at <= MAX_GRANT_LIFETIME_S);
        }
        let mut forged = signature;
        forged[flip] ^= 0x80;
        prop_assert!(body.verify(&forged, &public, me, &target, &command, now).is_err());
        let mut other = command.clone();
        other.push(b';');
        prop_assert!(body.verify(&signature, &public, me, &target, &other, now).is_err());
        prop_assert!(body.verify(&signature, &public, AgentId::new_random(), &target, &command, now).is_err());
        prop_assert!(body.verify(&signature, &public, me, &ExecTarget::Host, &command, now).is_err());
        prop_assert!(body.verify(&signature[..63], &public, me, &target, &command, now).is_err());
    }
}
