//! The read sandbox: every READ that runs on the agent's own host is confined by the
//! kernel so that it cannot write, whatever the command turns out to do.
//!
//! The agent does not run a read directly. It starts a launcher,
//! `vigil-sandbox --scratch DIR -- bash -c CMD` (a small binary installed beside the
//! agent; [`choice`] falls back to `vigil-agent sandbox-exec` when it is missing), which
//! ([`launcher`]) drops the capabilities a read never needs ([`caps`]), sets
//! no_new_privs, restricts itself with Landlock ([`landlock`]: no filesystem write,
//! create, remove, rename or truncate except `/dev/null` and a fresh scratch directory,
//! no TCP bind, no signals or abstract UNIX sockets outside the sandbox) and seccomp
//! ([`seccomp`]: mount, reboot, modules, clock, tracing, namespaces, keyrings, file
//! metadata… answer `EPERM`), then execs the command. The scratch directory ([`scratch`])
//! is the read's `TMPDIR` and is removed when it ends; [`read_env`] adds the environment
//! that pins off programs that tools load from configuration (git's fsmonitor, pager,
//! external diff, …).
//!
//! At startup [`ReadSandbox::detect`] picks the launcher and runs it once in probe mode
//! to learn what the kernel enforces; the result is logged and sent in the host facts.
//! Without Landlock the agent refuses host reads unless it was started with
//! `--allow-unsandboxed-reads`. Approved writes (with a grant) and reads in guests,
//! containers and pods do not use this sandbox (see `docs/sandbox.md`).

pub mod args;
pub mod caps;
pub mod choice;
pub mod landlock;
pub mod launcher;
pub mod read_env;
pub mod scratch;
pub mod seccomp;

pub use choice::{Launcher, SANDBOX_BINARY};
pub use landlock::Enforced;
pub use scratch::Scratch;

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;
use vigil_proto::agent::v1::SandboxFacts;

/// The hidden subcommand of `vigil-agent` that launches a read.
pub const SUBCOMMAND: &str = "sandbox-exec";

/// The environment variable behind `--allow-unsandboxed-reads`.
pub const ENV_ALLOW_UNSANDBOXED_READS: &str = "VIGIL_ALLOW_UNSANDBOXED_READS";

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
}

impl Report {
    /// `full` (Landlock with every right asked for, seccomp, no_new_privs), `none` (no
    /// Landlock), else `partial`.
    pub fn level(&self) -> &'static str {
        match self.landlock {
            Enforced::None => "none",
            Enforced::Full if self.seccomp && self.no_new_privs => "full",
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

/// How this agent runs host reads, fixed at startup.
#[derive(Debug, Clone)]
pub struct ReadSandbox {
    /// The launcher; `None` runs reads directly (unit tests only).
    launcher: Option<Launcher>,
    /// Why the agent fell back to `vigil-agent sandbox-exec`, if it did.
    fallback: Option<String>,
    /// What the probe found, or why it failed.
    probe: Result<Report, String>,
    allow_unsandboxed: bool,
}

impl ReadSandbox {
    /// Pick the launcher for the agent binary `agent` — `vigil-sandbox` beside it when it
    /// is there and its probe runs, else the agent itself — and learn from the probe what
    /// the kernel enforces.
    pub fn detect(agent: PathBuf, allow_unsandboxed: bool) -> Self {
        let fallback = match Launcher::beside(&agent) {
            Some(small) => match small.probe() {
                Ok(report) => {
                    return ReadSandbox {
                        launcher: Some(small),
                        fallback: None,
                        probe: Ok(report),
                        allow_unsandboxed,
                    };
                }
                Err(error) => error,
            },
            None => format!("there is no {SANDBOX_BINARY} beside {}", agent.display()),
        };
        let launcher = Launcher::Agent(agent);
        ReadSandbox {
            probe: launcher.probe(),
            launcher: Some(launcher),
            fallback: Some(fallback),
            allow_unsandboxed,
        }
    }

    /// Reads run directly, unconfined: for the agent's own unit tests, whose binary is
    /// not `vigil-agent`.
    #[cfg(test)]
    pub fn off() -> Self {
        ReadSandbox {
            launcher: None,
            fallback: None,
            probe: Err("off in unit tests".into()),
            allow_unsandboxed: true,
        }
    }

    /// A sandbox whose probe found `probe`, launched by `launcher` (tests).
    #[cfg(test)]
    pub fn with_probe(
        launcher: Launcher,
        probe: Result<Report, String>,
        allow_unsandboxed: bool,
    ) -> Self {
        ReadSandbox {
            launcher: Some(launcher),
            fallback: None,
            probe,
            allow_unsandboxed,
        }
    }

    /// The launcher reads go through (`None` only in unit tests).
    pub fn launcher(&self) -> Option<&Launcher> {
        self.launcher.as_ref()
    }

    /// Why the agent launches reads with itself instead of `vigil-sandbox`, if it does.
    pub fn fallback(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    /// `full`, `partial` or `none`.
    pub fn level(&self) -> &'static str {
        self.probe.as_ref().map_or("none", Report::level)
    }

    /// What the probe found.
    pub fn probe(&self) -> Result<&Report, &str> {
        self.probe.as_ref().map_err(String::as_str)
    }

    /// True when host reads run even without Landlock.
    pub fn allow_unsandboxed(&self) -> bool {
        self.allow_unsandboxed
    }

    /// Why host reads are refused, if they are: no Landlock and no
    /// `--allow-unsandboxed-reads`.
    pub fn refusal(&self) -> Option<String> {
        if self.allow_unsandboxed || self.level() != "none" {
            return None;
        }
        let why = match &self.probe {
            Ok(_) => "this kernel has no Landlock".to_owned(),
            Err(e) => e.clone(),
        };
        Some(format!(
            "SANDBOX_UNAVAILABLE: reads on this host cannot be kept from writing ({why}); \
             the agent refuses them unless started with --allow-unsandboxed-reads \
             ({ENV_ALLOW_UNSANDBOXED_READS}=1)"
        ))
    }

    /// The process for `shell -c command` as a read, confined, with `scratch` as its
    /// only writable directory and `TMPDIR`.
    pub fn command(&self, shell: &Path, command: &str, scratch: &Path) -> Command {
        let mut cmd = match &self.launcher {
            Some(launcher) => {
                let mut cmd = launcher.command();
                cmd.arg("--scratch").arg(scratch);
                if self.allow_unsandboxed {
                    cmd.arg("--allow-unsandboxed");
                }
                cmd.arg("--").arg(shell);
                cmd
            }
            None => Command::new(shell),
        };
        cmd.arg("-c").arg(command);
        cmd
    }

    /// The facts the controller shows under `facts.sandbox`.
    pub fn facts(&self) -> SandboxFacts {
        let report = self.probe.as_ref().ok();
        SandboxFacts {
            landlock_abi: report.map_or(0, |r| r.landlock_abi),
            seccomp: report.is_some_and(|r| r.seccomp),
            no_new_privs: report.is_some_and(|r| r.no_new_privs),
            capabilities_dropped: report.is_some_and(|r| r.capabilities_dropped),
            level: self.level().to_owned(),
            allow_unsandboxed_reads: self.allow_unsandboxed,
            error: self.probe.as_ref().err().cloned().unwrap_or_default(),
            launcher: self.launcher.as_ref().map_or("", Launcher::kind).to_owned(),
        }
    }
}

#[cfg(test)]
mod tests;
