//! The agent's integration tests, gathered into one test binary (a module per area) so the
//! workspace links it once: `cargo test -p vigil-agent --test all [AREA::]`.
//!
//! - `cli`: the built `vigil-agent` binary, run as a person would.
//! - `confine`: the read confinement, on the agent's threads and as `sandbox-exec`.
//! - `doors`, `dbus_door`: the read-only doors to daemons' sockets and the network.
//! - `hidden`: Vigil's own secrets and the hidden paths, out of every read's sight.
//! - `kubernetes`: the Kubernetes source and pod backend against a stand-in API server.
//! - `proxmox`: the Proxmox source and exec backend against the fixture tools.
//!
//! The sandbox tests need root (they are skipped with a note outside CI without it).

mod support;

mod cli;
mod confine;
mod dbus_door;
mod doors;
mod hidden;
#[cfg(feature = "kubernetes")]
mod kubernetes;
mod proxmox;
