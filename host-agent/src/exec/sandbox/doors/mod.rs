//! Read-only doors: in the reads' mount namespace a daemon's socket is replaced by a
//! socket the agent serves, which forwards only requests that read. The agent itself, and
//! approved writes, use the real sockets.
//!
//! - [`engine`]: the Docker and Podman API (`/run/docker.sock`, `/run/podman/podman.sock`)
//!   through [`vigil_shared::door_policy`]: `GET`/`HEAD` on listing and inspecting
//!   endpoints only.
//! - [`dbus`]: the D-Bus system bus through `xdg-dbus-proxy`: properties and the
//!   get-and-list methods of systemd and its companions only.
//!
//! [`start`] starts a door for each engine socket this host has, in
//! [`DOOR_DIR`]; the base thread's mount namespace binds each door over the socket it
//! stands for ([`super::mountns`]).

pub mod dbus;
pub mod engine;

use super::host_root::HostRoot;
use std::path::{Path, PathBuf};
use tokio::process::Child;
use tracing::{info, warn};

/// Where agents' door sockets live (outside every hidden directory), one directory per
/// agent process ([`agent_dir`]).
pub const DOOR_DIR: &str = "/run/vigil-agent/doors";

/// This agent's own door directory, `DOOR_DIR/<pid>`: several agents on one host (or an
/// agent restarting while the old one still exits) never take each other's doors.
/// Directories of processes that are gone are removed first.
pub fn agent_dir() -> PathBuf {
    let base = Path::new(DOOR_DIR);
    if let Ok(entries) = std::fs::read_dir(base) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let gone = name
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
                .is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists());
            if gone {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    base.join(std::process::id().to_string())
}

/// The engine sockets a door stands in for, when they exist.
pub const ENGINE_SOCKETS: &[&str] = &[
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/podman/podman.sock",
];

/// One door: the socket the agent serves and the path it covers in the namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Door {
    pub socket: PathBuf,
    pub covers: PathBuf,
}

impl Door {
    /// `KIND PATH` for the facts: `dbus` for the system bus's door, else `engine`.
    pub fn describe(&self) -> String {
        let kind = if self.socket.ends_with("dbus-system.sock") {
            "dbus"
        } else {
            "engine"
        };
        format!("{kind} {}", self.covers.display())
    }
}

/// The doors an agent serves, and the proxy processes behind some of them (killed when
/// this is dropped).
#[derive(Debug, Default)]
pub struct Doors {
    pub list: Vec<Door>,
    pub children: Vec<Child>,
}

/// Where the host's `path` really is in the agent's namespace: its canonical path, or,
/// with a host root, the path resolved inside that root.
fn real(path: &Path, root: Option<&HostRoot>) -> Option<PathBuf> {
    match root {
        Some(root) => root.resolve(path),
        None => std::fs::canonicalize(path).ok(),
    }
}

/// Start every door this host needs, with their sockets in `dir`: one per container
/// engine socket, and one for the D-Bus system bus. Failures are logged and leave that
/// socket without a door, which the namespace then masks. With `root` (`--host-root`)
/// the sockets are the host's, found inside the root; each door still covers the host's
/// own path.
pub async fn start(dir: &Path, root: Option<&HostRoot>) -> Doors {
    let mut doors = Doors {
        list: start_engines(dir, root).await,
        children: Vec::new(),
    };
    let Some(bus) = SYSTEM_BUS_PATHS
        .iter()
        .find_map(|p| real(Path::new(p), root))
    else {
        return doors;
    };
    let Some(proxy) = dbus::find_proxy() else {
        warn!(
            bus = %bus.display(),
            "{} is not installed: reads cannot reach the D-Bus system bus (systemctl, \
             hostnamectl, … fail in a read); install it to give them a read-only door",
            dbus::PROXY
        );
        return doors;
    };
    let socket = dir.join("dbus-system.sock");
    match dbus::serve(&proxy, &socket, &bus).await {
        Ok(child) => {
            info!(door = %socket.display(), covers = %bus.display(), "read-only door for the D-Bus system bus");
            doors.children.push(child);
            for path in SYSTEM_BUS_PATHS {
                if real(Path::new(path), root).is_some() {
                    doors.list.push(Door {
                        socket: socket.clone(),
                        covers: PathBuf::from(path),
                    });
                }
            }
        }
        Err(error) => {
            warn!(%error, "no read-only door for the D-Bus system bus; reads cannot reach it")
        }
    }
    doors
}

use dbus::SYSTEM_BUS as SYSTEM_BUS_PATHS;

/// A door for every engine socket of [`ENGINE_SOCKETS`] that exists. A socket reached by
/// two paths (`/var/run` is usually a link to `/run`) gets one door covering both.
async fn start_engines(dir: &Path, root: Option<&HostRoot>) -> Vec<Door> {
    let mut doors: Vec<Door> = Vec::new();
    let mut served: Vec<(PathBuf, PathBuf)> = Vec::new();
    for (i, path) in ENGINE_SOCKETS.iter().enumerate() {
        let path = Path::new(path);
        let Some(real) = real(path, root) else {
            continue;
        };
        if let Some((_, socket)) = served.iter().find(|(r, _)| *r == real) {
            doors.push(Door {
                socket: socket.clone(),
                covers: path.to_owned(),
            });
            continue;
        }
        let socket = dir.join(format!("engine-{i}.sock"));
        match engine::serve(&socket, &real).await {
            Ok(()) => {
                info!(door = %socket.display(), covers = %path.display(), "read-only door for the container engine");
                served.push((real, socket.clone()));
                doors.push(Door {
                    socket,
                    covers: path.to_owned(),
                });
            }
            Err(error) => {
                warn!(%error, socket = %path.display(), "no read-only door for this socket; reads cannot reach it")
            }
        }
    }
    doors
}
