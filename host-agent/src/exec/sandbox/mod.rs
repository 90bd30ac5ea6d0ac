//! The read sandbox: every READ that runs on the agent's own host is confined by the
//! kernel so that it cannot write, whatever the command turns out to do.
//!
//! The agent spawns each read from a confined thread ([`thread`]). A base thread, once,
//! drops the capabilities a read never needs ([`caps`]), sets no_new_privs and installs
//! the seccomp filter ([`seccomp`]: mount, reboot, modules, clock, tracing, namespaces,
//! keyrings, file metadata… answer `EPERM`). For each read it starts a read thread, which
//! adds Landlock ([`landlock`]: no filesystem write, create, remove, rename or truncate
//! except `/dev/null` and a fresh scratch directory, no TCP bind, no signals or abstract
//! UNIX sockets outside the sandbox) and spawns the read. All of these belong to the
//! thread, and the read's process, a copy of that thread, inherits them. The scratch
//! directory ([`scratch`]) is the read's `TMPDIR` and is removed when it ends;
//! [`read_env`] adds the environment that pins off programs that tools load from
//! configuration (git's fsmonitor, pager, external diff, …).
//!
//! The same confinement as a program, [`launcher`] (`vigil-agent sandbox-exec --probe`,
//! or `--scratch DIR -- CMD`), is there for diagnosis and for the tests.
//!
//! At startup [`ReadSandbox::detect`] confines one throw-away read thread to learn what the
//! kernel enforces; the result is logged and sent in the host facts. Without Landlock
//! the agent refuses host reads unless it was started with `--allow-unsandboxed-reads`.
//! Approved writes (with a grant) and reads in guests, containers and pods do not use
//! this sandbox (see `docs/sandbox.md`).

pub mod args;
pub mod blockdev;
pub mod caps;
pub mod doors;
pub mod error;
pub mod hidden;
pub mod host_root;
pub mod landlock;
pub mod launcher;
pub mod mountns;
pub mod read_env;
pub mod read_hide;
pub mod scratch;
pub mod seccomp;
pub mod sockets;
pub mod thread;

pub use error::SandboxError;
pub use hidden::HiddenPaths;
pub use landlock::Enforced;
pub use scratch::Scratch;
pub use thread::Confinement;

use serde::{Deserialize, Serialize};
use std::path::Path;
use vigil_proto::agent::v1::SandboxFacts;

/// The hidden subcommand of `vigil-agent` that runs the confinement as a program
/// (`--probe`, or `--scratch DIR -- CMD`), for diagnosis and tests.
pub const SUBCOMMAND: &str = "sandbox-exec";

/// The environment variable behind `vigil-agent run --hide` (a `:`-separated list).
pub const ENV_HIDE: &str = "VIGIL_HIDE";

/// The environment variable behind `--allow-unsandboxed-reads`.
pub const ENV_ALLOW_UNSANDBOXED_READS: &str = "VIGIL_ALLOW_UNSANDBOXED_READS";

/// `vigil-agent run --host-root`'s environment variable ([`host_root`]).
pub const ENV_HOST_ROOT: &str = "VIGIL_HOST_ROOT";

/// What the launcher enforced on itself (and so on the command it runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// The kernel's Landlock ABI version; 0 without Landlock.
    pub landlock_abi: u32,
    #[serde(with = "enforced_name")]
    pub landlock: Enforced,
    pub seccomp: bool,
    pub no_new_privs: bool,
    /// The bounding set holds only the capabilities a read keeps.
    pub capabilities_dropped: bool,
    /// The read's mount namespace hides Vigil's state and the credential stores (or there
    /// is nothing to hide); false from `sandbox-exec`, which makes no namespace.
    #[serde(default)]
    pub hidden: bool,
}

impl Report {
    /// `full` (Landlock with every right asked for, seccomp, no_new_privs, hidden paths
    /// hidden), `none` (no Landlock), else `partial`.
    pub fn level(&self) -> &'static str {
        match self.landlock {
            Enforced::None => "none",
            Enforced::Full if self.seccomp && self.no_new_privs && self.hidden => "full",
            _ => "partial",
        }
    }
}

mod enforced_name {
    use super::Enforced;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &Enforced, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(match value {
            Enforced::Full => "full",
            Enforced::Partial => "partial",
            Enforced::None => "none",
        })
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Enforced, D::Error> {
        Ok(match String::deserialize(d)?.as_str() {
            "full" => Enforced::Full,
            "partial" => Enforced::Partial,
            _ => Enforced::None,
        })
    }
}

/// The launcher name in the facts for reads confined on a thread of the agent.
pub const THREAD_LAUNCHER: &str = "thread";

/// How this agent runs host reads, fixed at startup.
#[derive(Debug, Clone)]
pub struct ReadSandbox {
    /// Reads are confined; `false` runs them directly (unit tests only).
    confined: bool,
    /// What the probe found, or why it failed.
    probe: Result<Report, SandboxError>,
    allow_unsandboxed: bool,
    /// What reads must not see.
    hidden: HiddenPaths,
    /// The doors in the reads' namespace, as the facts show them.
    doors: Vec<String>,
    /// The kubeconfig reads get (`KUBECONFIG`), when the admin configured one.
    kubeconfig: Option<std::path::PathBuf>,
    /// How many paths, device nodes and sockets the namespace masks, or why it could
    /// not be made.
    masked: Result<(usize, usize, usize), SandboxError>,
    /// The host's root when the agent runs in a container (`--host-root`).
    root: Option<host_root::HostRoot>,
}

impl ReadSandbox {
    /// Hide `hidden` from every read, then learn what the kernel enforces by confining one
    /// throw-away read thread.
    pub fn detect(allow_unsandboxed: bool, plan: mountns::Plan) -> Self {
        let hidden = plan.hidden.clone();
        let root = plan.root.clone();
        let mut doors: Vec<String> = plan.doors.iter().map(doors::Door::describe).collect();
        thread::set_plan(plan);
        let probe = thread::probe(None);
        let masked = match &probe {
            Ok(p) => match &p.masks {
                Ok(masks) => Ok(masks.as_ref().map_or((0, 0, 0), |m| m.counts())),
                // No namespace, but the read layer of Landlock hides (`read_hide`): no
                // doors then, and reads that may open sockets are refused.
                Err(e) if p.report.hidden => {
                    tracing::warn!(
                        error = %e,
                        "no mount namespace for reads: Vigil's secrets are hidden by Landlock \
                         instead, and reads that talk to daemons or the network are refused \
                         (run the agent as root for the read-only doors)"
                    );
                    doors = Vec::new();
                    Ok((0, 0, 0))
                }
                Err(e) => Err(e.clone()),
            },
            Err(e) => Err(e.clone()),
        };
        ReadSandbox {
            confined: true,
            probe: probe.map(|p| p.report),
            allow_unsandboxed,
            hidden,
            doors,
            kubeconfig: None,
            masked,
            root,
        }
    }

    /// The host's root when the agent runs in a container (`--host-root`): reads run in it.
    pub fn host_root(&self) -> Option<&host_root::HostRoot> {
        self.root.as_ref()
    }

    /// What reads must not see.
    pub fn hidden(&self) -> &HiddenPaths {
        &self.hidden
    }

    /// Apply the controller's `SandboxPolicy`: hide its patterns from the next read on
    /// (a new namespace is made for it). Returns true when what is hidden changed.
    pub fn apply_controller_policy(&self, hide: &[String]) -> bool {
        let changed = self.hidden.set_from_controller(hide);
        if changed && self.confined {
            thread::refresh();
        }
        changed
    }

    /// Give reads `path` as their kubeconfig.
    pub fn with_kubeconfig(mut self, path: Option<std::path::PathBuf>) -> Self {
        self.kubeconfig = path;
        self
    }

    /// The kubeconfig reads get, if any.
    pub fn kubeconfig(&self) -> Option<&Path> {
        self.kubeconfig.as_deref()
    }

    /// How many paths, block device nodes and sockets the reads' namespace masks, or why
    /// it could not be made.
    pub fn masked(&self) -> Result<(usize, usize, usize), &SandboxError> {
        self.masked.as_ref().copied()
    }

    /// Reads run directly, unconfined: for the agent's own unit tests.
    #[cfg(test)]
    pub fn off() -> Self {
        ReadSandbox {
            confined: false,
            probe: Err("off in unit tests".into()),
            allow_unsandboxed: true,
            hidden: HiddenPaths::none(),
            doors: Vec::new(),
            kubeconfig: None,
            masked: Ok((0, 0, 0)),
            root: None,
        }
    }

    /// A confining sandbox whose probe found `probe` (tests).
    #[cfg(test)]
    pub fn with_probe(probe: Result<Report, SandboxError>, allow_unsandboxed: bool) -> Self {
        ReadSandbox {
            confined: true,
            probe,
            allow_unsandboxed,
            hidden: HiddenPaths::none(),
            doors: Vec::new(),
            kubeconfig: None,
            masked: Ok((0, 0, 0)),
            root: None,
        }
    }

    /// `full`, `partial` or `none`.
    pub fn level(&self) -> &'static str {
        self.probe.as_ref().map_or("none", Report::level)
    }

    /// What the probe found.
    pub fn probe(&self) -> Result<&Report, &SandboxError> {
        self.probe.as_ref()
    }

    /// True when host reads run even without Landlock.
    pub fn allow_unsandboxed(&self) -> bool {
        self.allow_unsandboxed
    }

    /// Why host reads are refused, if they are: no Landlock and no
    /// `--allow-unsandboxed-reads`.
    pub fn refusal(&self) -> Option<SandboxError> {
        if self.allow_unsandboxed {
            return None;
        }
        if let Err(why) = &self.masked
            && self.level() != "none"
        {
            return Some(SandboxError::Unavailable(format!(
                "reads on this host cannot be kept from Vigil's secrets and the hidden \
                 credential files ({why}); the agent refuses them unless started with \
                 --allow-unsandboxed-reads ({ENV_ALLOW_UNSANDBOXED_READS}=1)"
            )));
        }
        if self.level() != "none" {
            return None;
        }
        let why = match &self.probe {
            Ok(_) => "this kernel has no Landlock".to_owned(),
            Err(e) => e.to_string(),
        };
        Some(SandboxError::Unavailable(format!(
            "reads on this host cannot be kept from writing ({why}); the agent refuses them \
             unless started with --allow-unsandboxed-reads ({ENV_ALLOW_UNSANDBOXED_READS}=1)"
        )))
    }

    /// How to confine a read whose only writable directory is `scratch` and that may
    /// open the sockets of `reach`; `None` when reads run directly (unit tests).
    pub fn confinement(&self, scratch: &Path, reach: sockets::Reach) -> Option<Confinement> {
        self.confined.then(|| Confinement {
            scratch: Some(scratch.to_owned()),
            allow_unsandboxed: self.allow_unsandboxed,
            reach,
        })
    }

    /// The facts the controller shows under `facts.sandbox`.
    pub fn facts(&self) -> SandboxFacts {
        let report = self.probe.as_ref().ok();
        let from_controller = self.hidden.from_controller();
        SandboxFacts {
            landlock_abi: report.map_or(0, |r| r.landlock_abi),
            seccomp: report.is_some_and(|r| r.seccomp),
            no_new_privs: report.is_some_and(|r| r.no_new_privs),
            capabilities_dropped: report.is_some_and(|r| r.capabilities_dropped),
            level: self.level().to_owned(),
            allow_unsandboxed_reads: self.allow_unsandboxed,
            error: self
                .probe
                .as_ref()
                .err()
                .map(ToString::to_string)
                .unwrap_or_default(),
            launcher: if self.confined { THREAD_LAUNCHER } else { "" }.to_owned(),
            hidden_paths: self.hidden.all_patterns(),
            controller_hidden_paths: from_controller.patterns,
            refused_hidden_paths: from_controller.refused,
            hidden: report.is_some_and(|r| r.hidden) && self.masked.is_ok(),
            doors: self.doors.clone(),
            sockets_by_need: report.is_some_and(|r| r.seccomp),
        }
    }
}

#[cfg(test)]
mod tests;
