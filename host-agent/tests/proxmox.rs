//! The Proxmox source and exec backend against the fixture tools in
//! `tests/fixtures/proxmox` (`pvesh`, `pct` and `qm` answering like node `delly` of
//! Proxmox VE 8). Each test links the tools into a directory of its own with an empty
//! `pve.log`, so the fixture logs every invocation's exact argv there.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use vigil_agent::config::{Discovery, Toggle};
use vigil_agent::exec::proxmox::ProxmoxTools;
use vigil_agent::exec::{Limits, Outcome, Run};
use vigil_agent::guard::{Refusal, RejectCode};
use vigil_agent::inventory::{Scan, ScanError, SourceCtx};
use vigil_agent::platform::Detected;
use vigil_agent::platform::proxmox::{detect_in, detected};
use vigil_proto::agent::v1::{ExecEvent, exec_event, finished};
use vigil_shared::ids::ExecTarget;
use vigil_shared::resource::{Mount, Resource, Via};

const JELLYFIN: &str = "689b21f1c3ca";
const HOMEPAGE: &str = "96d2065e0899";

fn fixture_bin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/proxmox/bin")
        .canonicalize()
        .expect("tests/fixtures/proxmox/bin")
}

/// The fixture tools linked into a fresh directory, logging to its `pve.log`.
struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        for tool in ["pvesh", "pct", "qm"] {
            std::os::unix::fs::symlink(fixture_bin().join(tool), dir.path().join(tool)).unwrap();
        }
        std::fs::write(dir.path().join("pve.log"), "").unwrap();
        Fixture { dir }
    }

    /// A `PATH` with the tools first and a relative entry that must be ignored.
    fn path_var(&self) -> OsString {
        let mut path = OsString::from("relative/dir:");
        path.push(self.dir.path());
        path.push(":/usr/bin:/bin");
        path
    }

    fn detected(&self) -> Detected {
        detect_in(&self.path_var(), &Discovery::default()).expect("the fixture tools are found")
    }

    /// Every invocation so far, as argv (the tool's name first).
    fn invocations(&self) -> Vec<Vec<String>> {
        std::fs::read_to_string(self.dir.path().join("pve.log"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }
}

fn ctx(hostname: &str) -> SourceCtx {
    SourceCtx {
        agent_id: "agent-delly".into(),
        hostname: hostname.into(),
    }
}

async fn scan(detected: &Detected, hostname: &str) -> Result<Scan, ScanError> {
    tokio::time::timeout(
        Duration::from_secs(60),
        detected.source.scan(&ctx(hostname)),
    )
    .await
    .expect("the scan hung")
}

fn find<'a>(scan: &'a Scan, id: &str) -> &'a Resource {
    scan.resources
        .iter()
        .find(|r| r.id.to_string() == id)
        .unwrap_or_else(|| panic!("{id} missing"))
}

/// What one command sent.
struct Ran {
    result: Result<Outcome, Refusal>,
    events: Vec<ExecEvent>,
}

impl Ran {
    fn text(&self, stderr: bool) -> String {
        let bytes: Vec<u8> = self
            .events
            .iter()
            .filter_map(|e| match &e.kind {
                Some(exec_event::Kind::StdoutChunk(b)) if !stderr => Some(b.clone()),
                Some(exec_event::Kind::StderrChunk(b)) if stderr => Some(b.clone()),
                _ => None,
            })
            .flatten()
            .collect();
        String::from_utf8(bytes).unwrap()
    }

    fn finished(&self) -> (Option<finished::Status>, bool) {
        let last = self.events.last().expect("events");
        match &last.kind {
            Some(exec_event::Kind::Finished(f)) => (f.status, f.truncated),
            other => panic!("last event is not Finished: {other:?}"),
        }
    }

    fn outcome(&self) -> &Outcome {
        self.result.as_ref().expect("the command ran")
    }
}

async fn exec(detected: &Detected, target: ExecTarget, command: &str, limits: Limits) -> Ran {
    let (tx, mut rx) = mpsc::channel(1024);
    let run = Run {
        request_id: "req-1",
        target: &target,
        command,
        limits,
        cancel: CancellationToken::new(),
        events: &tx,
    };
    let result = tokio::time::timeout(Duration::from_secs(60), detected.backend.run(run))
        .await
        .expect("the command hung");
    drop(tx);
    let mut events = Vec::new();
    while let Some(e) = rx.recv().await {
        assert_eq!(e.request_id, "req-1");
        events.push(e);
    }
    if result.is_ok() {
        assert!(
            matches!(
                events.first().and_then(|e| e.kind.as_ref()),
                Some(exec_event::Kind::Started(_))
            ),
            "the first event is Started"
        );
    }
    Ran { result, events }
}

fn limits(timeout_s: u64) -> Limits {
    Limits {
        timeout: Duration::from_secs(timeout_s),
        output_cap: 1024 * 1024,
    }
}

fn argv(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn detection_needs_the_tools_on_the_path_and_honours_the_toggle() {
    let fixture = Fixture::new();
    let found = fixture.detected();
    assert_eq!(found.source.name(), "proxmox");
    assert_eq!(found.capabilities, ["lxc", "vm"]);
    let off = Discovery {
        proxmox: Toggle::Off,
        ..Discovery::default()
    };
    assert!(detect_in(&fixture.path_var(), &off).is_none());
    let on = Discovery {
        proxmox: Toggle::On,
        ..Discovery::default()
    };
    assert!(detect_in(&fixture.path_var(), &on).is_some());
    let empty = tempfile::tempdir().unwrap();
    assert!(detect_in(empty.path().as_os_str(), &on).is_none());
    assert!(detect_in(empty.path().as_os_str(), &Discovery::default()).is_none());
    // Tools in a relative PATH entry are never used.
    assert!(detect_in(&OsString::from("."), &Discovery::default()).is_none());
    // Only pvesh is not enough.
    std::fs::remove_file(fixture.dir.path().join("qm")).unwrap();
    let path = OsString::from(fixture.dir.path());
    assert!(detect_in(&path, &Discovery::default()).is_none());
}

#[tokio::test]
async fn a_scan_reports_the_node_its_guests_and_docker_inside_lxcs() {
    let fixture = Fixture::new();
    let detected = fixture.detected();
    let scan = scan(&detected, "delly.home.arpa").await.expect("scan");
    let ids: Vec<String> = scan.resources.iter().map(|r| r.id.to_string()).collect();
    assert_eq!(
        ids,
        [
            "node:delly",
            "lxc:delly:141",
            "lxc:delly:142",
            "vm:delly:203",
            "vm:delly:204",
            &format!("docker_container:media:{JELLYFIN}"),
            &format!("docker_container:media:{HOMEPAGE}"),
        ]
    );
    assert!(scan.capped.is_empty());

    let node = find(&scan, "node:delly");
    assert_eq!(
        (node.status.as_str(), node.parent.as_ref()),
        ("online", None)
    );
    assert_eq!(node.paths.len(), 1);
    assert_eq!(
        (&node.paths[0].target, node.paths[0].via),
        (&ExecTarget::Host, Via::Direct)
    );
    assert_eq!(node.paths[0].agent, "agent-delly");
    assert_eq!(node.facts.details["cpus"], "8");

    let media = find(&scan, "lxc:delly:141");
    assert_eq!(media.name, "media");
    assert_eq!(media.status, "running");
    assert_eq!(media.parent.as_ref().unwrap().to_string(), "node:delly");
    assert!(
        media.aliases.contains(&"141".to_owned()) && media.aliases.contains(&"CT141".to_owned())
    );
    assert_eq!(media.facts.macs, ["bc:24:11:5e:7d:2a"]);
    assert_eq!(media.facts.ips, ["192.168.1.41"]);
    assert_eq!(media.facts.config_paths, ["/etc/pve/lxc/141.conf"]);
    assert_eq!(
        media.facts.mounts,
        [
            Mount {
                host_path: "local-lvm:vm-141-disk-0".into(),
                path: "/".into(),
                read_only: false
            },
            Mount {
                host_path: "/tank/media".into(),
                path: "/media".into(),
                read_only: true
            },
            Mount {
                host_path: "local-lvm:vm-141-disk-1".into(),
                path: "/srv/config".into(),
                read_only: false
            },
        ]
    );
    assert_eq!(
        (&media.paths[0].target, media.paths[0].via),
        (&ExecTarget::Lxc(141), Via::PctExec)
    );
    assert!(media.facts.details.contains_key("boot_time"));

    let pihole = find(&scan, "lxc:delly:142");
    assert_eq!(
        (pihole.name.as_str(), pihole.status.as_str()),
        ("pihole", "stopped")
    );
    assert_eq!(pihole.facts.macs, ["bc:24:11:0a:42:9c"]);
    assert!(pihole.facts.ips.is_empty(), "dhcp is not an address");
    assert!(!pihole.facts.details.contains_key("boot_time"));

    let haos = find(&scan, "vm:delly:203");
    assert_eq!(haos.name, "haos");
    assert!(haos.aliases.contains(&"VM203".to_owned()));
    assert_eq!(haos.facts.macs, ["02:a1:b2:c3:d4:e5"]);
    assert_eq!(haos.facts.config_paths, ["/etc/pve/qemu-server/203.conf"]);
    assert_eq!(haos.paths.len(), 1);
    assert_eq!(
        (&haos.paths[0].target, haos.paths[0].via),
        (&ExecTarget::Vm(203), Via::QmGuestExec)
    );

    let builder = find(&scan, "vm:delly:204");
    assert!(
        builder.paths.is_empty(),
        "no guest agent, no path: {:?}",
        builder.paths
    );
    assert_eq!(
        builder.facts.macs,
        ["bc:24:11:77:88:99", "bc:24:11:77:88:9a"]
    );
    assert_eq!(builder.facts.ips, ["192.168.1.64"]);

    let jellyfin = find(&scan, &format!("docker_container:media:{JELLYFIN}"));
    assert_eq!(jellyfin.name, "media-jellyfin-1");
    assert_eq!(
        jellyfin.parent.as_ref().unwrap().to_string(),
        "lxc:delly:141"
    );
    assert_eq!(jellyfin.status, "running");
    assert_eq!(
        jellyfin.facts.image.as_deref(),
        Some("jellyfin/jellyfin:10.9.6")
    );
    assert_eq!(
        jellyfin.facts.labels["com.docker.compose.service"],
        "jellyfin"
    );
    assert!(jellyfin.aliases.contains(&"jellyfin".to_owned()));
    assert_eq!(jellyfin.facts.details["health"], "healthy");
    assert_eq!(
        (&jellyfin.paths[0].target, jellyfin.paths[0].via),
        (
            &ExecTarget::LxcDocker {
                vmid: 141,
                container: JELLYFIN.into()
            },
            Via::PctExec
        )
    );
    let homepage = find(&scan, &format!("docker_container:media:{HOMEPAGE}"));
    assert_eq!(homepage.facts.labels["homepage.widgets"], "search,clock");

    let calls = fixture.invocations();
    for expected in [
        argv(&["pvesh", "get", "/nodes", "--output-format", "json"]),
        argv(&[
            "pvesh",
            "get",
            "/nodes/delly/lxc",
            "--output-format",
            "json",
        ]),
        argv(&[
            "pvesh",
            "get",
            "/nodes/delly/qemu",
            "--output-format",
            "json",
        ]),
        argv(&["pct", "config", "141"]),
        argv(&["pct", "config", "142"]),
        argv(&["qm", "config", "203"]),
        argv(&["qm", "config", "204"]),
        argv(&[
            "pct",
            "exec",
            "141",
            "--",
            "docker",
            "ps",
            "--all",
            "--no-trunc",
            "--format",
            "{{json .}}",
        ]),
    ] {
        assert!(calls.contains(&expected), "{expected:?} not in {calls:?}");
    }
    assert_eq!(
        calls.len(),
        8,
        "only a running LXC with nesting is asked for Docker: {calls:?}"
    );

    // Nothing changed, so the next scan is equal: rescans send nothing.
    let again = self::scan(&detected, "delly.home.arpa")
        .await
        .expect("rescan");
    assert_eq!(again, scan);
}

#[tokio::test]
async fn pvesh_failures_are_the_scans_error() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("pvesh");
    std::fs::write(&garbage, "#!/bin/sh\necho 'this is not json'\n").unwrap();
    std::fs::set_permissions(
        &garbage,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let tools = |pvesh: &Path| {
        detected(ProxmoxTools::new(
            pvesh.to_owned(),
            fixture_bin().join("pct"),
            fixture_bin().join("qm"),
        ))
    };
    // What pvesh said cannot be read; pvesh failed; pvesh is not there.
    let error = scan(&tools(&garbage), "delly").await.unwrap_err();
    assert!(
        matches!(&error, ScanError::Unusable(text) if text.contains("not JSON")),
        "{error:?}"
    );
    let error = scan(&tools(Path::new("/bin/false")), "delly")
        .await
        .unwrap_err();
    assert!(
        matches!(&error, ScanError::Unreachable(text)
            if text.contains("pvesh get /nodes") && text.contains("exited with 1")),
        "{error:?}"
    );
    let error = scan(&tools(&dir.path().join("missing")), "delly")
        .await
        .unwrap_err();
    assert!(
        matches!(&error, ScanError::Unreachable(text) if text.contains("could not start")),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_command_with_quotes_reaches_the_lxc_as_one_argument() {
    let fixture = Fixture::new();
    let detected = fixture.detected();
    let command = r#"cat '/etc/it'"'"'s here' 2>/dev/null || echo "a \"b\"""#;
    let ran = exec(&detected, ExecTarget::Lxc(141), command, limits(30)).await;
    assert_eq!(ran.text(false), "a \"b\"\n");
    assert_eq!(ran.finished(), (Some(finished::Status::ExitCode(0)), false));
    assert_eq!(ran.outcome().exit_code, Some(0));
    let calls = fixture.invocations();
    assert_eq!(
        calls,
        [
            argv(&["pct", "status", "141"]),
            argv(&["pct", "exec", "141", "--", "sh", "-c", command]),
        ]
    );
}

#[tokio::test]
async fn lxc_output_and_exit_codes_stream_through() {
    let fixture = Fixture::new();
    let ran = exec(
        &fixture.detected(),
        ExecTarget::Lxc(141),
        "echo out; echo err >&2; exit 7",
        limits(30),
    )
    .await;
    assert_eq!(
        (ran.text(false), ran.text(true)),
        ("out\n".into(), "err\n".into())
    );
    assert_eq!(ran.finished().0, Some(finished::Status::ExitCode(7)));
}

#[tokio::test]
async fn docker_inside_an_lxc_runs_through_pct_exec() {
    let fixture = Fixture::new();
    let target = ExecTarget::LxcDocker {
        vmid: 141,
        container: JELLYFIN.into(),
    };
    let command = r#"printf '%s\n' "it's" 'in "docker"'; exit 4"#;
    let ran = exec(&fixture.detected(), target, command, limits(30)).await;
    assert_eq!(ran.text(false), "it's\nin \"docker\"\n");
    assert_eq!(ran.finished().0, Some(finished::Status::ExitCode(4)));
    let calls = fixture.invocations();
    assert_eq!(
        calls.last().unwrap(),
        &argv(&[
            "pct", "exec", "141", "--", "docker", "exec", JELLYFIN, "sh", "-c", command
        ])
    );
}

#[tokio::test]
async fn a_vm_command_runs_through_qm_guest_exec_and_its_json_is_parsed() {
    let fixture = Fixture::new();
    let command = r#"printf 'out "1"\n'; printf 'err\t2\n' >&2; exit 5"#;
    let ran = exec(
        &fixture.detected(),
        ExecTarget::Vm(203),
        command,
        limits(30),
    )
    .await;
    assert_eq!(ran.text(false), "out \"1\"\n");
    assert_eq!(ran.text(true), "err\t2\n");
    assert_eq!(ran.finished(), (Some(finished::Status::ExitCode(5)), false));
    assert_eq!(ran.outcome().exit_code, Some(5));
    assert_eq!(ran.outcome().output_bytes, 14);
    assert_eq!(
        fixture.invocations().last().unwrap(),
        &argv(&[
            "qm",
            "guest",
            "exec",
            "203",
            "--timeout",
            "30",
            "--",
            "sh",
            "-c",
            command
        ])
    );

    // The output cap applies to what the guest printed.
    let capped = Limits {
        timeout: Duration::from_secs(30),
        output_cap: 4,
    };
    let ran = exec(
        &fixture.detected(),
        ExecTarget::Vm(203),
        "echo 0123456789",
        capped,
    )
    .await;
    assert_eq!(ran.text(false), "0123");
    assert_eq!(ran.finished(), (Some(finished::Status::ExitCode(0)), true));
}

#[tokio::test]
async fn a_vm_command_still_running_at_its_timeout_ends_as_killed() {
    let fixture = Fixture::new();
    let ran = exec(
        &fixture.detected(),
        ExecTarget::Vm(203),
        "sleep 30",
        limits(1),
    )
    .await;
    assert_eq!(ran.finished().0, Some(finished::Status::Signal(9)));
    assert!(ran.outcome().timed_out);
    assert!(
        ran.text(true).contains("still running in VM 203"),
        "{}",
        ran.text(true)
    );
}

#[tokio::test]
async fn a_timeout_in_an_lxc_kills_the_command() {
    let fixture = Fixture::new();
    let mut b = [0u8; 3];
    getrandom::fill(&mut b).unwrap();
    let marker = format!("100.{}", u32::from_be_bytes([0, b[0], b[1], b[2]]));
    let ran = exec(
        &fixture.detected(),
        ExecTarget::Lxc(141),
        &format!("sleep {marker}"),
        limits(1),
    )
    .await;
    assert_eq!(ran.finished().0, Some(finished::Status::Signal(9)));
    assert!(ran.outcome().timed_out);
    let alive = || {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
            .any(|c| String::from_utf8_lossy(&c).contains(&marker))
    };
    // SIGKILL is delivered asynchronously: give the process group a moment to go.
    for _ in 0..40 {
        if !alive() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!alive(), "the sleep was killed with its process group");
}

#[tokio::test]
async fn missing_and_stopped_guests_are_not_found_before_anything_runs() {
    let fixture = Fixture::new();
    let detected = fixture.detected();
    let cases = [
        (ExecTarget::Lxc(142), "LXC 142 is not running"),
        (
            ExecTarget::Lxc(999),
            "Configuration file 'nodes/delly/lxc/999.conf' does not exist",
        ),
        (ExecTarget::Vm(999), "VM 999: Configuration file"),
        (ExecTarget::Vm(204), "VM 204 has no QEMU guest agent"),
        (
            ExecTarget::LxcDocker {
                vmid: 141,
                container: "nope".into(),
            },
            "No such container: nope",
        ),
        (
            ExecTarget::LxcDocker {
                vmid: 141,
                container: "--privileged".into(),
            },
            "not a Docker container name",
        ),
        (
            ExecTarget::LxcDocker {
                vmid: 142,
                container: JELLYFIN.into(),
            },
            "LXC 142 is not running",
        ),
        (ExecTarget::Docker("x".into()), "cannot reach docker:x"),
    ];
    for (target, reason) in cases {
        let ran = exec(&detected, target.clone(), "echo should-not-run", limits(30)).await;
        let refusal = ran.result.as_ref().expect_err("refused");
        assert_eq!(refusal.code, RejectCode::NotFound, "{target}");
        assert!(
            refusal.reason.contains(reason),
            "{target}: {}",
            refusal.reason
        );
        assert!(
            ran.events.is_empty(),
            "{target}: nothing is sent before a refusal"
        );
    }
    let ran_commands: Vec<_> = fixture
        .invocations()
        .into_iter()
        .filter(|argv| argv.iter().any(|a| a.contains("should-not-run")))
        .collect();
    assert!(ran_commands.is_empty(), "{ran_commands:?}");
}

#[tokio::test]
async fn the_tools_run_with_the_fixed_environment() {
    let fixture = Fixture::new();
    let detected = fixture.detected();
    let ran = exec(&detected, ExecTarget::Lxc(141), "env | sort", limits(30)).await;
    let env = ran.text(false);
    assert!(env.contains("PATH=/usr/local/sbin:"), "{env}");
    assert!(
        !env.contains("CARGO"),
        "the agent's environment does not leak: {env}"
    );
}
