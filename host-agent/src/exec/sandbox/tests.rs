use super::*;

fn report(landlock: Enforced, seccomp: bool) -> Report {
    Report {
        landlock_abi: if landlock == Enforced::None { 0 } else { 6 },
        landlock,
        seccomp,
        no_new_privs: true,
        capabilities_dropped: true,
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
fn without_landlock_reads_are_refused_unless_allowed() {
    let launcher = Launcher::Small(PathBuf::from("/usr/local/bin/vigil-sandbox"));
    let none = Ok(report(Enforced::None, true));
    let refused = ReadSandbox::with_probe(launcher.clone(), none.clone(), false);
    let reason = refused.refusal().unwrap();
    assert!(reason.starts_with("SANDBOX_UNAVAILABLE"), "{reason}");
    assert!(reason.contains("--allow-unsandboxed-reads"), "{reason}");
    assert_eq!(refused.facts().level, "none");
    assert!(!refused.facts().allow_unsandboxed_reads);

    let allowed = ReadSandbox::with_probe(launcher.clone(), none, true);
    assert_eq!(allowed.refusal(), None);
    assert!(allowed.facts().allow_unsandboxed_reads);

    let failed = ReadSandbox::with_probe(launcher.clone(), Err("no launcher".into()), false);
    assert!(failed.refusal().unwrap().contains("no launcher"));
    assert_eq!(failed.facts().error, "no launcher");

    let full = ReadSandbox::with_probe(launcher, Ok(report(Enforced::Full, true)), false);
    assert_eq!(full.refusal(), None);
    assert_eq!(full.facts().landlock_abi, 6);
    assert_eq!(full.facts().launcher, "vigil-sandbox");
}

#[test]
fn a_read_goes_through_the_launcher_with_its_scratch_directory() {
    let allowed = ReadSandbox::with_probe(
        Launcher::Agent(PathBuf::from("/opt/vigil-agent")),
        Ok(report(Enforced::None, false)),
        true,
    );
    let cmd = allowed.command(Path::new("/bin/bash"), "uptime", Path::new("/tmp/s"));
    assert_eq!(cmd.get_program(), "/opt/vigil-agent");
    let args = args_of(&cmd);
    assert_eq!(
        args,
        [
            "sandbox-exec",
            "--scratch",
            "/tmp/s",
            "--allow-unsandboxed",
            "--",
            "/bin/bash",
            "-c",
            "uptime"
        ]
    );
}

#[test]
fn the_small_launcher_takes_the_same_flags_without_the_subcommand() {
    let small = ReadSandbox::with_probe(
        Launcher::Small(PathBuf::from("/opt/vigil-sandbox")),
        Ok(report(Enforced::Full, true)),
        false,
    );
    let cmd = small.command(Path::new("/bin/bash"), "uptime", Path::new("/tmp/s"));
    assert_eq!(cmd.get_program(), "/opt/vigil-sandbox");
    let args = args_of(&cmd);
    assert_eq!(
        args,
        ["--scratch", "/tmp/s", "--", "/bin/bash", "-c", "uptime"]
    );
}

#[test]
fn the_report_round_trips_as_json() {
    let r = report(Enforced::Partial, true);
    let text = serde_json::to_string(&r).unwrap();
    assert!(text.contains("\"landlock\":\"partial\""), "{text}");
    assert_eq!(serde_json::from_str::<Report>(&text).unwrap(), r);
}

/// The arguments of `cmd`, as text.
fn args_of(cmd: &std::process::Command) -> Vec<String> {
    cmd.get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}
