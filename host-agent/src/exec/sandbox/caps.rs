//! The capability half of the read sandbox: a read keeps only the capabilities that let
//! root *read* what it could read before, and loses the rest from its bounding,
//! inheritable and ambient sets, so nothing it executes can get them back.
//!
//! Kept, and why:
//! - `CAP_DAC_OVERRIDE`, `CAP_DAC_READ_SEARCH`: read any file and list any directory
//!   (`journalctl`, `/var/log`, `/etc/shadow`-style files reads already show); writing is
//!   stopped by Landlock, not by permissions.
//! - `CAP_SYSLOG`: read the kernel log (`dmesg` with `kernel.dmesg_restrict=1`); the
//!   `syslog(2)` actions that clear it are refused by seccomp.
//! - `CAP_SETUID`, `CAP_SETGID`: read as another user (`runuser -u postgres -- psql …`);
//!   a lesser identity gains nothing, and the sandbox stays in force across it.
//!
//! `CAP_SYS_PTRACE` goes too: Landlock already forbids a sandboxed process to inspect
//! processes outside its sandbox (the ptrace access check behind `/proc/PID/fd`,
//! `/proc/PID/exe` and `/proc/PID/environ`), so `ss -p` and `lsof` show no owners in a
//! read whatever the capabilities; `ps`, `/proc/PID/status` and `cmdline` still work.
//!
//! Everything else goes, among them `CAP_SYS_ADMIN`, `CAP_NET_ADMIN` (so `iptables -L`
//! and `nft list` fail in a read), `CAP_SYS_RAWIO` (`smartctl`), `CAP_CHOWN`,
//! `CAP_FOWNER`, `CAP_KILL`, `CAP_SYS_MODULE`, `CAP_SYS_TIME` and `CAP_MKNOD`.

use super::SandboxError;
use rustix::thread::{
    CapabilitySet, capabilities, capability_is_in_bounding_set, clear_ambient_capability_set,
    remove_capability_from_bounding_set, set_capabilities,
};

/// Highest capability number the agent knows (`CAP_CHECKPOINT_RESTORE`).
const LAST_CAP: u32 = 40;

/// The capabilities a read keeps.
pub fn kept() -> CapabilitySet {
    CapabilitySet::DAC_OVERRIDE
        | CapabilitySet::DAC_READ_SEARCH
        | CapabilitySet::SYSLOG
        | CapabilitySet::SETUID
        | CapabilitySet::SETGID
}

/// What the drop did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dropped {
    /// How many capabilities left the bounding set.
    pub removed: u32,
    /// True when the bounding set now holds nothing outside [`kept`].
    pub bounded: bool,
}

/// Drop every capability outside [`kept`] from the bounding set (needs `CAP_SETPCAP`,
/// which goes last), then narrow the effective, permitted and inheritable sets and clear
/// the ambient set. A process without capabilities has nothing to drop and succeeds.
pub fn drop_unneeded() -> Result<Dropped, SandboxError> {
    let keep = kept();
    let mut removed = 0;
    let mut bounded = true;
    let setpcap = CapabilitySet::SETPCAP;
    let order = (0..=LAST_CAP)
        .map(|n| CapabilitySet::from_bits_retain(1u64 << n))
        .filter(|c| *c != setpcap)
        .chain([setpcap]);
    for cap in order {
        if keep.contains(cap) || !capability_is_in_bounding_set(cap).unwrap_or(false) {
            continue;
        }
        match remove_capability_from_bounding_set(cap) {
            Ok(()) => removed += 1,
            Err(_) => bounded = false,
        }
    }
    let _ = clear_ambient_capability_set();
    let mut sets = capabilities(None).map_err(|e| format!("capget: {e}"))?;
    sets.effective &= keep;
    sets.permitted &= keep;
    sets.inheritable &= keep;
    set_capabilities(None, sets).map_err(|e| format!("capset: {e}"))?;
    Ok(Dropped { removed, bounded })
}
