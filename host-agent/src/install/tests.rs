use super::*;
use crate::state::{Enrollment, Identity};
use vigil_shared::ids::AgentId;

fn options(state_dir: &str) -> UnitOptions {
    UnitOptions {
        exe: "/usr/local/bin/vigil-agent".into(),
        state_dir: state_dir.into(),
        read_only: false,
        allow_unsandboxed_reads: false,
        config: None,
        pct_present: false,
        packaged: false,
    }
}

fn enrolled(dir: &Path) {
    StateDir::new(dir)
        .write_enrollment(&Enrollment {
            identity: Identity {
                agent_id: AgentId::new_random().to_string(),
                url: "https://ctl:8641".into(),
                enrolled_at: "2025-01-01T00:00:00Z".into(),
                labels: Default::default(),
                endpoints: Vec::new(),
            },
            key_pem: "K".into(),
            cert_pem: "C".into(),
            ca_pem: "CA".into(),
            grant_key: [1; 32],
        })
        .unwrap();
}

#[test]
fn the_default_unit_is_hardened_and_uses_the_state_directory() {
    let unit = render_unit(&options(DEFAULT_STATE_DIR)).unwrap();
    for line in [
        "ExecStart=/usr/local/bin/vigil-agent run --state-dir /var/lib/vigil-agent\n",
        "Restart=always\n",
        "RestartSec=2s\n",
        "RestartPreventExitStatus=3\n",
        "StateDirectory=vigil-agent\n",
        "StateDirectoryMode=0700\n",
        "NoNewPrivileges=yes\n",
        "LimitNOFILE=65536\n",
        "WantedBy=multi-user.target\n",
    ] {
        assert!(unit.contains(line), "missing {line:?} in\n{unit}");
    }
    assert!(unit.contains("\nDescription=") && unit.contains("\nDocumentation="));
    assert!(!unit.contains("--read-only"));
}

#[test]
fn flags_paths_and_proxmox_change_the_unit() {
    let mut o = options("/srv/vigil state");
    o.read_only = true;
    o.pct_present = true;
    o.config = Some("/etc/vigil/100%.toml".into());
    let unit = render_unit(&o).unwrap();
    assert!(
        unit.contains(
            "ExecStart=/usr/local/bin/vigil-agent run --state-dir \"/srv/vigil state\" \
             --read-only --config /etc/vigil/100%%.toml\n"
        ),
        "{unit}"
    );
    assert!(
        !unit.contains("StateDirectory="),
        "only for the default directory"
    );
    assert!(!unit.contains("NoNewPrivileges=yes"));
    assert!(unit.contains("# NoNewPrivileges= is not set: `pct`"));
    assert!(systemd_arg(Path::new("/a\nb")).is_err());
    assert_eq!(systemd_arg(Path::new("/a\"b$")).unwrap(), "\"/a\\\"b$$\"");
}

#[test]
fn install_writes_the_unit_without_starting_and_refuses_unenrolled() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let units = tmp.path().join("units");
    let mut o = options(state.to_str().unwrap());
    let refused = install(&o, &units, false).unwrap_err();
    assert!(matches!(refused, Error::NotEnrolled { .. }), "{refused}");
    assert!(!units.join(UNIT_NAME).exists());

    enrolled(&state);
    o.read_only = true;
    let path = install(&o, &units, false).unwrap();
    assert_eq!(path, units.join(UNIT_NAME));
    let text = fs::read_to_string(&path).unwrap();
    assert_eq!(text, render_unit(&o).unwrap());
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o644
    );
}

#[test]
fn uninstall_removes_the_unit_and_purges_only_the_agents_files() {
    let tmp = tempfile::tempdir().unwrap();
    let state_path = tmp.path().join("state");
    enrolled(&state_path);
    fs::write(state_path.join("notes.txt"), "mine").unwrap();
    let units = tmp.path().join("units");
    install(&options(state_path.to_str().unwrap()), &units, false).unwrap();

    let state = StateDir::new(&state_path);
    let removed = uninstall(&units, false, Some(&state)).unwrap();
    assert_eq!(removed.unit, Some(units.join(UNIT_NAME)));
    assert_eq!(removed.state_files.len(), 5, "{removed:?}");
    assert!(!state.is_enrolled());
    assert!(
        state_path.join("notes.txt").exists(),
        "foreign files are kept"
    );

    let again = uninstall(&units, false, None).unwrap();
    assert_eq!(again, Removed::default());
}

#[test]
fn the_packaged_unit_differs_only_in_its_first_comment() {
    let written = render_unit(&options(crate::DEFAULT_STATE_DIR)).unwrap();
    let packaged = render_unit(&UnitOptions {
        packaged: true,
        ..options(crate::DEFAULT_STATE_DIR)
    })
    .unwrap();
    assert!(packaged.starts_with("# Shipped by the vigil-agent package"));
    let body = |unit: &str| unit.split_once('\n').unwrap().1.to_owned();
    assert_eq!(body(&written), body(&packaged));
}
