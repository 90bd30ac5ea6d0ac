use super::request::{grant_to_proto, target_to_proto};
use super::*;
use vigil_proto::agent::v1::Target;
use vigil_shared::grant::{GrantBody, GrantSigningKey, NONCE_LEN, signing_key_from_bytes};

const NOW: i64 = 1_700_000_000;

struct Fixture {
    me: AgentId,
    key: GrantSigningKey,
}

impl Fixture {
    fn new() -> Self {
        Fixture {
            me: AgentId::new_random(),
            key: signing_key_from_bytes(&[9; 32]),
        }
    }

    fn guard(&self, read_only: bool) -> Guard {
        Guard::new(self.me, self.key.verifying_key(), read_only)
    }

    fn body(&self, command: &str, nonce: u8) -> GrantBody {
        GrantBody {
            approval_id: "ap-1".into(),
            agent_id: self.me,
            target: ExecTarget::Host,
            command: command.as_bytes().to_vec(),
            issued_at: NOW,
            expires_at: NOW + 120,
            nonce: vec![nonce; NONCE_LEN],
        }
    }

    fn write(&self, command: &str, body: &GrantBody) -> ExecRequest {
        let mut req = request(ExecMode::Write, command);
        req.grant = Some(grant_to_proto(body, &body.sign(&self.key)));
        req
    }
}

fn request(mode: ExecMode, command: &str) -> ExecRequest {
    ExecRequest {
        request_id: "r-1".into(),
        target: Some(target_to_proto(&ExecTarget::Host)),
        command: command.into(),
        mode: mode as i32,
        ..ExecRequest::default()
    }
}

fn refused(result: Result<Admitted, Refusal>) -> Refusal {
    match result {
        Ok(admitted) => panic!("expected a refusal, got {admitted:?}"),
        Err(refusal) => refusal,
    }
}

#[test]
fn malformed_requests_are_invalid_input() {
    let guard = Fixture::new().guard(false);
    let unspecified = request(ExecMode::Unspecified, "uptime");
    assert_eq!(
        refused(guard.admit(&unspecified, NOW)).code,
        RejectCode::InvalidInput
    );
    let unknown_mode = ExecRequest {
        mode: 42,
        ..request(ExecMode::Read, "uptime")
    };
    assert_eq!(
        refused(guard.admit(&unknown_mode, NOW)).code,
        RejectCode::InvalidInput
    );
    for empty in ["", "   \n"] {
        let req = request(ExecMode::Read, empty);
        assert_eq!(
            refused(guard.admit(&req, NOW)).code,
            RejectCode::InvalidInput
        );
    }
    let mut no_target = request(ExecMode::Read, "uptime");
    no_target.target = None;
    assert_eq!(
        refused(guard.admit(&no_target, NOW)).code,
        RejectCode::InvalidInput
    );
    no_target.target = Some(Target { kind: None });
    assert_eq!(
        refused(guard.admit(&no_target, NOW)).code,
        RejectCode::InvalidInput
    );
    let no_id = ExecRequest {
        request_id: String::new(),
        ..request(ExecMode::Read, "uptime")
    };
    assert_eq!(
        refused(guard.admit(&no_id, NOW)).code,
        RejectCode::InvalidInput
    );
}

#[test]
fn the_payload_is_classified_in_every_target() {
    let guard = Fixture::new().guard(false);
    for target in [
        "lxc:141",
        "vm:203",
        "docker:web",
        "lxc:141/docker:web",
        "pod:ns/p/c",
    ] {
        let mut req = request(ExecMode::Read, "cat /etc/hostname");
        req.target = Some(target_to_proto(&target.parse().unwrap()));
        let admitted = guard.admit(&req, NOW).expect(target);
        assert_eq!(admitted.target.to_string(), target);
        drop(admitted);
        req.command = "rm -rf /srv".into();
        let refusal = refused(guard.admit(&req, NOW));
        assert_eq!(refusal.code, RejectCode::PolicyBlocked, "{target}");
    }
}

#[test]
fn reads_are_classified_again() {
    let guard = Fixture::new().guard(false);
    let admitted = guard
        .admit(&request(ExecMode::Read, "uptime"), NOW)
        .unwrap();
    assert_eq!(
        (admitted.mode, admitted.target),
        (Mode::Read, ExecTarget::Host)
    );

    let write = refused(guard.admit(&request(ExecMode::Read, "rm -rf /tmp/x"), NOW));
    assert_eq!(write.code, RejectCode::PolicyBlocked);
    assert!(
        write.reason.contains("not provably read-only"),
        "{}",
        write.reason
    );

    let follow = refused(guard.admit(&request(ExecMode::Read, "tail -f /var/log/syslog"), NOW));
    assert_eq!(follow.code, RejectCode::UnboundedCommand);
    assert!(
        follow.reason.contains("tail"),
        "rewrite expected: {}",
        follow.reason
    );
}

#[test]
fn a_read_with_a_grant_attached_is_still_classified() {
    let f = Fixture::new();
    let guard = f.guard(false);
    let mut req = f.write(
        "systemctl restart nginx",
        &f.body("systemctl restart nginx", 1),
    );
    req.mode = ExecMode::Read as i32;
    assert_eq!(
        refused(guard.admit(&req, NOW)).code,
        RejectCode::PolicyBlocked
    );
}

#[test]
fn writes_need_a_valid_grant() {
    let f = Fixture::new();
    let guard = f.guard(false);
    let cmd = "systemctl restart nginx";
    let bare = request(ExecMode::Write, cmd);
    assert_eq!(
        refused(guard.admit(&bare, NOW)).code,
        RejectCode::ApprovalRequired
    );

    let ok = guard.admit(&f.write(cmd, &f.body(cmd, 1)), NOW).unwrap();
    assert_eq!(ok.mode, Mode::Write);

    // Signed for another command, agent, target, or by another key.
    let other_cmd = f.write("systemctl restart nginx;", &f.body(cmd, 2));
    let mut other_agent = f.body(cmd, 3);
    other_agent.agent_id = AgentId::new_random();
    let mut other_target = f.body(cmd, 4);
    other_target.target = ExecTarget::Lxc(100);
    let mut forged = f.write(cmd, &f.body(cmd, 5));
    if let Some(g) = forged.grant.as_mut() {
        g.signature = f
            .body(cmd, 5)
            .sign(&signing_key_from_bytes(&[1; 32]))
            .to_vec();
    }
    let mut garbage = f.write(cmd, &f.body(cmd, 6));
    if let Some(g) = garbage.grant.as_mut() {
        g.agent_id = "not-a-uuid".into();
    }
    for req in [
        other_cmd,
        f.write(cmd, &other_agent),
        f.write(cmd, &other_target),
        forged,
        garbage,
    ] {
        let refusal = refused(guard.admit(&req, NOW));
        assert_eq!(
            refusal.code,
            RejectCode::PolicyBlocked,
            "{}",
            refusal.reason
        );
        assert!(
            refusal.reason.starts_with("grant refused"),
            "{}",
            refusal.reason
        );
    }
}

#[test]
fn a_replayed_grant_is_refused() {
    let f = Fixture::new();
    let guard = f.guard(false);
    let cmd = "touch /tmp/vigil-replay";
    let req = f.write(cmd, &f.body(cmd, 7));
    drop(guard.admit(&req, NOW).unwrap());
    let replay = refused(guard.admit(&req, NOW + 5));
    assert_eq!(replay.code, RejectCode::PolicyBlocked);
    assert!(replay.reason.contains("replay"), "{}", replay.reason);
    // Long after expiry the nonce is forgotten, but the grant no longer verifies anyway.
    let late = refused(guard.admit(&req, NOW + 10_000));
    assert!(late.reason.contains("expired"), "{}", late.reason);
}

#[test]
fn clock_skew_is_tolerated_within_the_allowance_only() {
    let f = Fixture::new();
    let guard = f.guard(false);
    let cmd = "touch /tmp/vigil-skew";
    let inside = [NOW - ALLOWED_SKEW_S, NOW + 120 + ALLOWED_SKEW_S];
    for (i, now) in inside.into_iter().enumerate() {
        let req = f.write(cmd, &f.body(cmd, 20 + i as u8));
        assert!(guard.admit(&req, now).is_ok(), "at {now}");
    }
    let early = f.write(cmd, &f.body(cmd, 30));
    let refusal = refused(guard.admit(&early, NOW - ALLOWED_SKEW_S - 1));
    assert!(
        refusal.reason.contains("not valid yet"),
        "{}",
        refusal.reason
    );
    let late = f.write(cmd, &f.body(cmd, 31));
    let refusal = refused(guard.admit(&late, NOW + 121 + ALLOWED_SKEW_S));
    assert!(refusal.reason.contains("expired"), "{}", refusal.reason);
}

#[test]
fn read_only_refuses_every_write_but_still_reads() {
    let f = Fixture::new();
    let guard = f.guard(true);
    let cmd = "systemctl restart nginx";
    for nonce in 40..45 {
        let refusal = refused(guard.admit(&f.write(cmd, &f.body(cmd, nonce)), NOW));
        assert_eq!(refusal.code, RejectCode::ActionNotAllowed);
        assert!(
            guard.read_only(),
            "nothing a request carries changes the mode"
        );
    }
    let bare = refused(guard.admit(&request(ExecMode::Write, cmd), NOW));
    assert_eq!(
        bare.code,
        RejectCode::ActionNotAllowed,
        "read-only comes before the grant"
    );
    assert!(guard.admit(&request(ExecMode::Read, "uptime"), NOW).is_ok());
}

#[test]
fn the_ninth_command_is_busy_and_a_busy_write_keeps_its_grant() {
    let f = Fixture::new();
    let guard = f.guard(false);
    let running: Vec<_> = (0..MAX_CONCURRENT)
        .map(|_| {
            guard
                .admit(&request(ExecMode::Read, "uptime"), NOW)
                .unwrap()
        })
        .collect();
    let busy = refused(guard.admit(&request(ExecMode::Read, "uptime"), NOW));
    assert_eq!(busy.code, RejectCode::AgentBusy);
    let cmd = "touch /tmp/vigil-busy";
    let write = f.write(cmd, &f.body(cmd, 50));
    assert_eq!(
        refused(guard.admit(&write, NOW)).code,
        RejectCode::AgentBusy
    );
    drop(running);
    assert!(
        guard.admit(&write, NOW).is_ok(),
        "the grant was not used while busy"
    );
}

#[test]
fn reject_codes_have_their_wire_names() {
    assert_eq!(RejectCode::AgentBusy.to_string(), "AGENT_BUSY");
    assert_eq!(RejectCode::UnboundedCommand.as_str(), "UNBOUNDED_COMMAND");
}
