//! What the agent can see, reported to the controller (docs/inventory.md).
//!
//! Each discovery [`Source`] (the host in [`host`], [`proxmox`], [`docker`],
//! [`kubernetes`]) turns what it finds into `vigil_shared::resource::Resource`s. The
//! [`reporter`] scans every source on connect, rescans after a burst of changes and on a
//! period, and sends only what changed as `InventoryUpdate`s. [`crate::platform`] decides
//! at start-up which sources (and the matching exec backends) exist on this machine.

#[cfg(feature = "docker")]
pub mod docker;
pub mod host;
mod host_source;
#[cfg(feature = "kubernetes")]
pub mod kubernetes;
pub mod proxmox;
pub mod reporter;
mod source;

pub use host::{host_facts, hostname, set_host_root};
pub use host_source::{HostSource, host_resource};
pub use source::{BoxFuture, Scan, ScanError, Source, SourceCtx};
