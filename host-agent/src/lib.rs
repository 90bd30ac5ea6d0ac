//! `vigil-agent` is the small program installed on each managed machine (Proxmox node, LXC,
//! VM, Docker host, Kubernetes node). It will dial out to the controller over mutual TLS,
//! classify every command again with the same library the controller uses
//! (`vigil_shared::policy`), run only bounded read-only commands or writes carrying a valid
//! signed grant, and stream the output back. Today it only has its command line (see
//! `main.rs`); the link, the guard, execution and inventory arrive as planned in DESIGN.md.

/// The agent's version, as reported by `vigil-agent version` and (later) in its hello.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
