//! Grant checks on arbitrary input: a body with arbitrary fields, signed by the grant key
//! or not, checked against an arbitrary request. Verification never panics (extreme times
//! included), a grant never verifies with a signature that is not the key's over its own
//! bytes, and a correctly signed grant verifies only for its own agent, target and command.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_shared::grant::{GrantBody, signing_key_from_bytes};
use vigil_shared::ids::{AgentId, ExecTarget};

fn take<'a>(data: &mut &'a [u8], n: usize) -> &'a [u8] {
    let n = n.min(data.len());
    let (head, tail) = data.split_at(n);
    *data = tail;
    head
}

fn number(data: &mut &[u8]) -> i64 {
    let mut bytes = [0u8; 8];
    let head = take(data, 8);
    bytes[..head.len()].copy_from_slice(head);
    i64::from_le_bytes(bytes)
}

fuzz_target!(|input: &[u8]| {
    let mut data = input;
    let key = signing_key_from_bytes(&[7u8; 32]);
    let public = key.verifying_key();
    let me: AgentId = "00000000-0000-4000-8000-000000000001".parse().unwrap();
    let other: AgentId = "00000000-0000-4000-8000-000000000002".parse().unwrap();
    let flags = take(&mut data, 1).first().copied().unwrap_or(0);
    let target = match flags % 3 {
        0 => ExecTarget::Host,
        1 => ExecTarget::Lxc(u32::from(flags)),
        _ => ExecTarget::Docker("web".into()),
    };
    let issued_at = number(&mut data);
    let expires_at = number(&mut data);
    let now = number(&mut data);
    let nonce = take(&mut data, usize::from(flags % 20)).to_vec();
    let command = data.to_vec();
    let body = GrantBody {
        approval_id: "a".into(),
        agent_id: if flags & 0x40 == 0 { me } else { other },
        target: target.clone(),
        command: command.clone(),
        issued_at,
        expires_at,
        nonce,
    };
    let signature = body.sign(&key);
    let verdict = body.verify(&signature, &public, me, &target, &command, now);
    if verdict.is_ok() {
        assert_eq!(body.agent_id, me);
    }
    // Any other signature, and any other command, is refused.
    let mut forged = signature;
    forged[0] ^= 1;
    assert!(body.verify(&forged, &public, me, &target, &command, now).is_err());
    let mut other = command.clone();
    other.push(b'x');
    assert!(body.verify(&signature, &public, me, &target, &other, now).is_err());
    assert!(body.verify(input, &public, me, &target, &command, now).is_err() || input == signature);
});
