//! `vigil-agent sandbox-exec`: the tiny launcher every host read goes through. It runs as
//! a child of the agent, confines itself (capabilities, no_new_privs, Landlock, seccomp,
//! in that order) and then replaces itself with the command, which inherits every
//! restriction. Confining the launcher itself, instead of the child between fork and
//! exec, needs no `unsafe`.

use super::{Enforced, Report, caps, landlock, seccomp};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

/// Exit status of the launcher when it refuses or fails before the command runs (the
/// shell's "cannot execute").
pub const LAUNCH_FAILED: u8 = 126;

/// Confine the calling process for good and say what was enforced. `scratch` is the only
/// directory the command may write in. Only a failure that leaves the process in an
/// unknown state is an error; missing kernel features show in the report.
pub fn confine(scratch: Option<&Path>) -> Result<Report, String> {
    let dropped = caps::drop_unneeded()?;
    rustix::thread::set_no_new_privs(true).map_err(|e| format!("no_new_privs: {e}"))?;
    let landlock = landlock::restrict(scratch)?;
    let seccomp = seccomp::apply().is_ok();
    let no_new_privs = rustix::thread::no_new_privs().unwrap_or(false);
    Ok(Report {
        landlock_abi: landlock.abi,
        landlock: landlock.enforced,
        seccomp,
        no_new_privs,
        capabilities_dropped: dropped.bounded,
    })
}

/// Confine this process, then exec `program` with `args`. Returns only on failure, with
/// the reason. Without Landlock the command runs only when `allow_unsandboxed` is set.
pub fn exec(
    scratch: Option<&Path>,
    allow_unsandboxed: bool,
    program: &str,
    args: &[String],
) -> String {
    let report = match confine(scratch) {
        Ok(report) => report,
        Err(reason) => return format!("could not confine the read: {reason}"),
    };
    if report.landlock == Enforced::None && !allow_unsandboxed {
        return "this kernel has no Landlock, so a read cannot be kept from writing; \
                the agent refuses reads unless started with --allow-unsandboxed-reads"
            .to_owned();
    }
    let error = Command::new(program).args(args).exec();
    format!("could not run {program}: {error}")
}
