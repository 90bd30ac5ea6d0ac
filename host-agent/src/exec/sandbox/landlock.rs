//! The Landlock half of the read sandbox: no filesystem write, create, remove, rename,
//! truncate or device-make anywhere except `/dev/null` and the command's scratch
//! directory, no TCP bind, and (from ABI 6) no signals or abstract UNIX sockets across the
//! sandbox's edge. Best effort by ABI: rights the kernel does not know are left out and
//! the outcome says how much was enforced.

use super::SandboxError;
use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, LandlockStatus,
    PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};
use std::path::Path;

/// The filesystem rights a read never has outside its scratch directory. Listed one by
/// one (not `from_write`) so that a newer crate cannot quietly add a right, such as
/// connecting to UNIX sockets, that would break reads like `docker ps`.
pub fn denied_fs() -> BitFlags<AccessFs> {
    AccessFs::WriteFile
        | AccessFs::RemoveDir
        | AccessFs::RemoveFile
        | AccessFs::MakeChar
        | AccessFs::MakeDir
        | AccessFs::MakeReg
        | AccessFs::MakeSock
        | AccessFs::MakeFifo
        | AccessFs::MakeBlock
        | AccessFs::MakeSym
        | AccessFs::Refer
        | AccessFs::Truncate
}

/// What Landlock did for this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// The kernel's Landlock ABI version as far as this crate knows it; 0 without Landlock.
    pub abi: u32,
    /// `full`, `partial` or `none`.
    pub enforced: Enforced,
}

/// How much of the requested ruleset the kernel enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enforced {
    Full,
    Partial,
    None,
}

/// Restrict the calling thread (and what it executes) for good. `scratch` is the one
/// directory where the command may create and remove files.
pub fn restrict(scratch: Option<&Path>) -> Result<Outcome, SandboxError> {
    let denied = denied_fs();
    let dev_null = AccessFs::WriteFile | AccessFs::Truncate;
    let mut created = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(denied)
        .and_then(|r| r.handle_access(AccessNet::BindTcp))
        .and_then(|r| r.scope(Scope::from_all(ABI::V6)))
        .and_then(|r| r.create())
        .map_err(|e| format!("landlock ruleset: {e}"))?
        .no_new_privs(true);
    let null = PathFd::new("/dev/null").map_err(|e| format!("landlock /dev/null: {e}"))?;
    created = created
        .add_rule(PathBeneath::new(null, dev_null))
        .map_err(|e| format!("landlock rule for /dev/null: {e}"))?;
    if let Some(dir) = scratch {
        let fd = PathFd::new(dir).map_err(|e| format!("landlock {}: {e}", dir.display()))?;
        created = created
            .add_rule(PathBeneath::new(fd, denied))
            .map_err(|e| format!("landlock rule for {}: {e}", dir.display()))?;
    }
    let status = created
        .restrict_self()
        .map_err(|e| format!("landlock restrict_self: {e}"))?;
    let abi = match status.landlock {
        LandlockStatus::Available {
            effective_abi,
            kernel_abi,
        } => kernel_abi
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or(effective_abi as u32),
        LandlockStatus::NotEnabled | LandlockStatus::NotImplemented => 0,
    };
    let enforced = match status.ruleset {
        RulesetStatus::FullyEnforced => Enforced::Full,
        RulesetStatus::PartiallyEnforced => Enforced::Partial,
        RulesetStatus::NotEnforced => Enforced::None,
    };
    Ok(Outcome { abi, enforced })
}
