//! The D-Bus system bus's door: Debian's `xdg-dbus-proxy` in filtering mode, started by
//! the agent on a socket of its own and bound over the system bus in the reads'
//! namespace. With `--filter` a client sees only the names given a policy and may call
//! only the methods [`CALLS`] names: properties, introspection, and the managers'
//! get-and-list methods of systemd and its read-only companions. `StartUnit`,
//! `StopUnit`, `KillUnit`, `SetProperties`, `Reboot`, `SetHostname`, … are refused by the
//! proxy and never reach the bus. A well-kept filtering proxy rather than a D-Bus parser
//! of our own.
//!
//! Without `xdg-dbus-proxy` on the host the system bus gets no door, and the namespace
//! masks it: reads that query systemd then fail, instead of reaching it unfiltered.

use crate::exec::sandbox::SandboxError;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::process::{Child, Command};

/// The system bus socket's paths.
pub const SYSTEM_BUS: &[&str] = &[
    "/run/dbus/system_bus_socket",
    "/var/run/dbus/system_bus_socket",
];

/// The proxy program, found on the agent's fixed `PATH`.
pub const PROXY: &str = "xdg-dbus-proxy";

/// Properties, introspection and ping, on every object of a service.
const COMMON: &[&str] = &[
    "org.freedesktop.DBus.Properties.Get@/*",
    "org.freedesktop.DBus.Properties.GetAll@/*",
    "org.freedesktop.DBus.Introspectable.Introspect@/*",
    "org.freedesktop.DBus.Peer.Ping@/*",
];

/// The services a read may query, with the methods beyond [`COMMON`] it may call.
pub const CALLS: &[(&str, &[&str])] = &[
    (
        "org.freedesktop.systemd1",
        &[
            "org.freedesktop.systemd1.Manager.GetUnit@/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager.LoadUnit@/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager.GetUnitByPID@/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager.GetUnitByInvocationID@/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager.GetUnitByControlGroup@/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager.GetUnitProcesses@/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager.GetUnitFileState@/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager.GetUnitFileLinks@/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager.GetDefaultTarget@/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager.GetJob@/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager.ListUnits@/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager.ListUnitsFiltered@/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager.ListUnitsByPatterns@/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager.ListUnitsByNames@/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager.ListUnitFiles@/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager.ListUnitFilesByPatterns@/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager.ListJobs@/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager.GetDynamicUsers@/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Service.GetProcesses@/org/freedesktop/systemd1/unit/*",
            "org.freedesktop.systemd1.Scope.GetProcesses@/org/freedesktop/systemd1/unit/*",
            "org.freedesktop.systemd1.Slice.GetProcesses@/org/freedesktop/systemd1/unit/*",
        ],
    ),
    (
        "org.freedesktop.login1",
        &[
            "org.freedesktop.login1.Manager.ListSessions@/org/freedesktop/login1",
            "org.freedesktop.login1.Manager.ListUsers@/org/freedesktop/login1",
            "org.freedesktop.login1.Manager.ListSeats@/org/freedesktop/login1",
            "org.freedesktop.login1.Manager.ListInhibitors@/org/freedesktop/login1",
            "org.freedesktop.login1.Manager.GetSession@/org/freedesktop/login1",
            "org.freedesktop.login1.Manager.GetUser@/org/freedesktop/login1",
            "org.freedesktop.login1.Manager.GetSeat@/org/freedesktop/login1",
            "org.freedesktop.login1.Manager.GetSessionByPID@/org/freedesktop/login1",
            "org.freedesktop.login1.Manager.GetUserByPID@/org/freedesktop/login1",
        ],
    ),
    (
        "org.freedesktop.network1",
        &[
            "org.freedesktop.network1.Manager.ListLinks@/org/freedesktop/network1",
            "org.freedesktop.network1.Manager.GetLinkByName@/org/freedesktop/network1",
            "org.freedesktop.network1.Manager.GetLinkByIndex@/org/freedesktop/network1",
            "org.freedesktop.network1.Manager.Describe@/org/freedesktop/network1",
            "org.freedesktop.network1.Link.Describe@/org/freedesktop/network1/link/*",
        ],
    ),
    (
        "org.freedesktop.machine1",
        &[
            "org.freedesktop.machine1.Manager.ListMachines@/org/freedesktop/machine1",
            "org.freedesktop.machine1.Manager.ListImages@/org/freedesktop/machine1",
            "org.freedesktop.machine1.Manager.GetMachine@/org/freedesktop/machine1",
        ],
    ),
    ("org.freedesktop.hostname1", &[]),
    ("org.freedesktop.timedate1", &[]),
    ("org.freedesktop.locale1", &[]),
    ("org.freedesktop.resolve1", &[]),
];

/// The proxy's arguments after the bus address and the door path.
pub fn rules() -> Vec<String> {
    let mut args = vec!["--filter".to_owned()];
    for (name, calls) in CALLS {
        for rule in COMMON.iter().chain(calls.iter()) {
            args.push(format!("--call={name}={rule}"));
        }
    }
    args
}

/// The proxy program on the fixed `PATH`, if this host has it.
pub fn find_proxy() -> Option<PathBuf> {
    crate::exec::host::FIXED_PATH
        .split(':')
        .map(|dir| Path::new(dir).join(PROXY))
        .find(|p| p.is_file())
}

/// Start the proxy for the bus at `bus` on the door socket `door`, and wait until it
/// listens. The child is killed when dropped.
pub async fn serve(proxy: &Path, door: &Path, bus: &Path) -> Result<Child, SandboxError> {
    if let Some(dir) = door.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let _ = std::fs::remove_file(door);
    let mut child = Command::new(proxy)
        .arg(format!("unix:path={}", bus.display()))
        .arg(door)
        .args(rules())
        .env_clear()
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("starting {}: {e}", proxy.display()))?;
    let start = Instant::now();
    while !door.exists() {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("{PROXY} exited at start: {status}").into());
        }
        if start.elapsed() > Duration::from_secs(5) {
            return Err(format!("{PROXY} did not listen within 5 s").into());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(child)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_rule_lets_a_method_that_acts_through() {
        let rules = rules();
        assert_eq!(rules[0], "--filter");
        for acting in [
            "StartUnit",
            "StopUnit",
            "RestartUnit",
            "KillUnit",
            "SetProperties",
            "Reboot",
            "PowerOff",
            "SetHostname",
            "SetTime",
            "TerminateSession",
            "EnableUnitFiles",
            "Subscribe",
            "*",
        ] {
            assert!(
                !rules.iter().any(
                    |r| r.ends_with(&format!(".{acting}@/org/freedesktop/systemd1"))
                        || r.contains(&format!(".{acting}@"))
                ),
                "{acting}"
            );
        }
        assert!(
            !rules
                .iter()
                .any(|r| r.starts_with("--talk") || r.starts_with("--own"))
        );
    }
}
