//! The D-Bus door with a real bus: a private `dbus-daemon` started by the test, a stand-in
//! for systemd on it (`tests/fixtures/fake_systemd.py`, dbus-python), and the agent's
//! door (`xdg-dbus-proxy` with the agent's rules) bound over the bus in the reads'
//! namespace. A read may call `GetUnit`; its `StopUnit` never reaches the service, while
//! the same call from outside the sandbox does. Needs root, dbus-daemon, xdg-dbus-proxy
//! and python3-dbus/python3-gi: skipped without them, but not under CI.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use vigil_agent::exec::sandbox::HiddenPaths;
use vigil_agent::exec::sandbox::doors::{Door, dbus};
use vigil_agent::exec::sandbox::mountns::Plan;
use vigil_agent::exec::sandbox::thread;
use vigil_shared::policy::Reach;

/// Debian's Python, which python3-dbus and python3-gi install into (not a pyenv one that
/// may come first on `PATH`).
const PYTHON: &str = "/usr/bin/python3";

struct Killed(Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn ready() -> bool {
    let mut missing = Vec::new();
    if !support::is_root() {
        missing.push("root");
    }
    for tool in ["dbus-daemon", "dbus-send"] {
        let found = Command::new("which")
            .arg(tool)
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            missing.push(tool);
        }
    }
    if dbus::find_proxy().is_none() {
        missing.push("xdg-dbus-proxy");
    }
    let modules = Command::new(PYTHON)
        .args(["-c", "import dbus, gi"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !modules {
        missing.push("python3-dbus and python3-gi for /usr/bin/python3");
    }
    support::missing_or_skip("the D-Bus door test", missing)
}

fn send(bus: &Path, method: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new("dbus-send");
    cmd.arg(format!("--bus=unix:path={}", bus.display()))
        .args([
            "--print-reply",
            "--dest=org.freedesktop.systemd1",
            "/org/freedesktop/systemd1",
        ])
        .arg(format!("org.freedesktop.systemd1.Manager.{method}"))
        .args(args);
    cmd
}

async fn read(script: &str, scratch: &Path) -> String {
    support::read(script, Reach::Sockets, scratch, false)
        .await
        .text()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_queries_systemd_through_the_door_but_cannot_stop_a_unit() {
    if !ready() {
        return;
    }
    let _turn = support::sandbox_turn().await;
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let bus = dir.path().join("system_bus_socket");
    let config = dir.path().join("bus.conf");
    std::fs::write(
        &config,
        format!(
            r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
  </policy>
</busconfig>
"#,
            bus.display()
        ),
    )
    .unwrap();
    let mut daemon = Command::new("dbus-daemon")
        .arg(format!("--config-file={}", config.display()))
        .args(["--nofork", "--print-address"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(daemon.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _daemon = Killed(daemon);
    let marker = dir.path().join("stopped");
    let mut service = Command::new(PYTHON)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/fake_systemd.py"
        ))
        .arg(format!("unix:path={}", bus.display()))
        .arg(&marker)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(service.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready");
    let _service = Killed(service);

    let door = dir.path().join("doors/dbus-system.sock");
    let _proxy = dbus::serve(&dbus::find_proxy().unwrap(), &door, &bus)
        .await
        .unwrap();
    thread::set_plan(Plan {
        hidden: HiddenPaths::none(),
        doors: vec![Door {
            socket: door,
            covers: bus.clone(),
        }],
        mask_sockets: true,
        root: None,
    });

    let get = send(&bus, "GetUnit", &["string:ssh.service"]);
    let stop = send(&bus, "StopUnit", &["string:ssh.service", "string:replace"]);
    let quoted = |c: &Command| {
        std::iter::once(c.get_program())
            .chain(c.get_args())
            .map(|a| format!("'{}'", a.to_string_lossy()))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let out = read(
        &format!("{}; echo; {}", quoted(&get), quoted(&stop)),
        &scratch,
    )
    .await;
    assert!(
        out.contains("ssh_2eservice"),
        "GetUnit through the door: {out}"
    );
    assert!(
        !marker.exists(),
        "StopUnit reached the service from a read: {out}"
    );

    // The same call from outside the sandbox reaches it (so the check above can fail).
    let direct = Command::new("sh")
        .arg("-c")
        .arg(quoted(&stop))
        .output()
        .unwrap();
    assert!(direct.status.success(), "{direct:?}");
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "ssh.service\n");
}
