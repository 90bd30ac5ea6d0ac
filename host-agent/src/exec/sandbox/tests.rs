use super::*;

fn report(landlock: Enforced, seccomp: bool) -> Report {
    Report {
        landlock_abi: if landlock == Enforced::None { 0 } else { 6 },
        landlock,
        seccomp,
        no_new_privs: true,
        capabilities_dropped: true,
        hidden: true,
    }
}

#[test]
fn levels_follow_what_the_kernel_enforced() {
    assert_eq!(report(Enforced::Full, true).level(), "full");
    assert_eq!(report(Enforced::Full, false).level(), "partial");
    assert_eq!(report(Enforced::Partial, true).level(), "partial");
    assert_eq!(report(Enforced::None, true).level(), "none");
}

#[test]
fn without_hiding_the_level_is_partial() {
    let mut r = report(Enforced::Full, true);
    r.hidden = false;
    assert_eq!(r.level(), "partial");
}

#[test]
fn without_landlock_reads_are_refused_unless_allowed() {
    let none = Ok(report(Enforced::None, true));
    let refused = ReadSandbox::with_probe(none.clone(), false);
    let reason = refused.refusal().unwrap();
    assert!(matches!(reason, SandboxError::Unavailable(_)), "{reason:?}");
    assert!(
        reason.to_string().contains("--allow-unsandboxed-reads"),
        "{reason}"
    );
    assert_eq!(refused.facts().level, "none");
    assert!(!refused.facts().allow_unsandboxed_reads);

    let allowed = ReadSandbox::with_probe(none, true);
    assert_eq!(allowed.refusal(), None);
    assert!(allowed.facts().allow_unsandboxed_reads);

    let failed = ReadSandbox::with_probe(Err("no landlock syscall".into()), false);
    assert!(
        failed
            .refusal()
            .unwrap()
            .to_string()
            .contains("no landlock syscall")
    );
    assert_eq!(failed.facts().error, "no landlock syscall");

    let full = ReadSandbox::with_probe(Ok(report(Enforced::Full, true)), false);
    assert_eq!(full.refusal(), None);
    assert_eq!(full.facts().landlock_abi, 6);
    assert_eq!(full.facts().launcher, THREAD_LAUNCHER);
}

#[test]
fn a_read_is_confined_with_its_scratch_directory_unless_the_sandbox_is_off() {
    let allowed = ReadSandbox::with_probe(Ok(report(Enforced::None, false)), true);
    let how = allowed
        .confinement(Path::new("/tmp/s"), sockets::Reach::Local)
        .unwrap();
    assert_eq!(how.scratch.as_deref(), Some(Path::new("/tmp/s")));
    assert!(how.allow_unsandboxed);
    let strict = ReadSandbox::with_probe(Ok(report(Enforced::Full, true)), false);
    assert!(
        !strict
            .confinement(Path::new("/tmp/s"), sockets::Reach::Local)
            .unwrap()
            .allow_unsandboxed
    );
    let off = ReadSandbox::off();
    assert!(
        off.confinement(Path::new("/tmp/s"), sockets::Reach::Local)
            .is_none()
    );
    assert_eq!(off.facts().launcher, "");
}

#[test]
fn the_report_round_trips_as_json() {
    let r = report(Enforced::Partial, true);
    let text = serde_json::to_string(&r).unwrap();
    assert!(text.contains("\"landlock\":\"partial\""), "{text}");
    assert_eq!(serde_json::from_str::<Report>(&text).unwrap(), r);
}
