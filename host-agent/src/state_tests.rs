use super::*;

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn enrollment(id: AgentId, key: &str) -> Enrollment {
    Enrollment {
        identity: Identity {
            agent_id: id.to_string(),
            url: "https://127.0.0.1:8641".into(),
            enrolled_at: format_time(1_700_000_000),
            labels: BTreeMap::from([("site".into(), "lab".into())]),
            endpoints: Vec::new(),
        },
        key_pem: key.into(),
        cert_pem: "CERT".into(),
        ca_pem: "CA".into(),
        grant_key: [7; 32],
    }
}

#[test]
fn enrollment_creates_a_private_directory_and_key() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = StateDir::new(tmp.path().join("state"));
    assert!(!dir.is_enrolled());
    assert!(dir.identity().unwrap().is_none());
    let id = AgentId::new_random();
    dir.write_enrollment(&enrollment(id, "KEY1")).unwrap();

    assert_eq!(mode(dir.path()), 0o700);
    assert_eq!(mode(&dir.file(KEY_FILE)), 0o600);
    let creds = dir.load().unwrap();
    assert_eq!(creds.agent_id, id);
    assert_eq!(creds.key_pem, "KEY1");
    assert_eq!(creds.grant_key, [7; 32]);
    assert_eq!(
        fs::read_to_string(dir.file(GRANT_KEY_FILE)).unwrap().trim(),
        "07".repeat(32)
    );
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.file(IDENTITY_FILE)).unwrap()).unwrap();
    assert_eq!(json["agent_id"], id.to_string());
    assert_eq!(json["labels"]["site"], "lab");
    assert_eq!(json["enrolled_at"], "2023-11-14T22:13:20Z");
}

#[test]
fn rejoining_replaces_every_file_and_leaves_no_temporaries() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = StateDir::new(tmp.path());
    fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o755)).unwrap();
    dir.write_enrollment(&enrollment(AgentId::new_random(), "OLD"))
        .unwrap();
    dir.write_status(&LinkStatus {
        connected: true,
        since: format_time(0),
        last_error: None,
        pid: 1,
        read_only: false,
    })
    .unwrap();
    let new_id = AgentId::new_random();
    dir.write_enrollment(&enrollment(new_id, "NEW")).unwrap();

    assert_eq!(
        mode(dir.path()),
        0o700,
        "an existing directory is tightened"
    );
    assert_eq!(dir.load().unwrap().agent_id, new_id);
    assert_eq!(fs::read_to_string(dir.file(KEY_FILE)).unwrap(), "NEW");
    assert!(
        dir.read_status().unwrap().is_none(),
        "old status is dropped"
    );
    let leftovers: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn atomic_write_sets_the_exact_mode_despite_existing_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = StateDir::new(tmp.path());
    fs::write(dir.file(KEY_FILE), "world-readable").unwrap();
    fs::set_permissions(dir.file(KEY_FILE), fs::Permissions::from_mode(0o666)).unwrap();
    dir.write(KEY_FILE, b"secret", 0o600).unwrap();
    assert_eq!(mode(&dir.file(KEY_FILE)), 0o600);
    assert_eq!(fs::read(dir.file(KEY_FILE)).unwrap(), b"secret");
}

#[test]
fn renewal_replaces_key_and_certificate() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = StateDir::new(tmp.path());
    dir.write_enrollment(&enrollment(AgentId::new_random(), "K1"))
        .unwrap();
    dir.write_renewal("K2", "C2").unwrap();
    let creds = dir.load().unwrap();
    assert_eq!(
        (creds.key_pem.as_str(), creds.cert_pem.as_str()),
        ("K2", "C2")
    );
    assert_eq!(mode(&dir.file(KEY_FILE)), 0o600);
    assert!(!dir.file(NEXT_KEY_FILE).exists() && !dir.file(NEXT_CERT_FILE).exists());
}

#[test]
fn an_interrupted_renewal_is_finished_or_dropped_on_load() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = StateDir::new(tmp.path());
    dir.write_enrollment(&enrollment(AgentId::new_random(), "K1"))
        .unwrap();

    // Crash after the key was renamed, before the certificate was.
    dir.write(KEY_FILE, b"K2", 0o600).unwrap();
    dir.write(NEXT_CERT_FILE, b"C2", 0o644).unwrap();
    let creds = dir.load().unwrap();
    assert_eq!(
        (creds.key_pem.as_str(), creds.cert_pem.as_str()),
        ("K2", "C2")
    );

    // Crash before the certificate was staged: the old pair stays.
    dir.write(NEXT_KEY_FILE, b"K3", 0o600).unwrap();
    let creds = dir.load().unwrap();
    assert_eq!(
        (creds.key_pem.as_str(), creds.cert_pem.as_str()),
        ("K2", "C2")
    );
    assert!(!dir.file(NEXT_KEY_FILE).exists());
}

#[test]
fn broken_files_are_structured_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = StateDir::new(tmp.path());
    assert!(matches!(dir.load(), Err(Error::NotEnrolled { .. })));
    dir.write_enrollment(&enrollment(AgentId::new_random(), "K"))
        .unwrap();
    fs::write(dir.file(GRANT_KEY_FILE), "abc").unwrap();
    assert!(matches!(dir.load(), Err(Error::State { .. })));
    fs::write(dir.file(IDENTITY_FILE), "{").unwrap();
    assert!(matches!(dir.identity(), Err(Error::State { .. })));
}
