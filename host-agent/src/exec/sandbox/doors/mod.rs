//! Read-only doors: in the reads' mount namespace a daemon's socket is replaced by a
//! socket the agent serves, which forwards only requests that read. The agent itself, and
//! approved writes, use the real sockets.
//!
//! - [`engine`]: the Docker and Podman API (`/run/docker.sock`, `/run/podman/podman.sock`)
//!   through [`policy`]: `GET`/`HEAD` on listing and inspecting endpoints only.
//!
//! [`start`] starts a door for each engine socket this host has, in
//! [`DOOR_DIR`]; the base thread's mount namespace binds each door over the socket it
//! stands for ([`super::mountns`]).

pub mod engine;
pub mod policy;

use std::path::{Path, PathBuf};
use tracing::{info, warn};

/// Where the agent's door sockets live (outside every hidden directory).
pub const DOOR_DIR: &str = "/run/vigil-agent/doors";

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

/// Start a door for every engine socket of [`ENGINE_SOCKETS`] that exists, with its door
/// socket in `dir`. A socket reached by two paths (`/var/run` is usually a link to
/// `/run`) gets one door covering both. Failures are logged and leave that socket
/// without a door, which the namespace then masks.
pub async fn start(dir: &Path) -> Vec<Door> {
    let mut doors: Vec<Door> = Vec::new();
    let mut served: Vec<(PathBuf, PathBuf)> = Vec::new();
    for (i, path) in ENGINE_SOCKETS.iter().enumerate() {
        let path = Path::new(path);
        let Ok(real) = std::fs::canonicalize(path) else {
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
