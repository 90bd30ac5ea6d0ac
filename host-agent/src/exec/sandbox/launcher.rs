//! The confinement itself ([`confine_base`]: capabilities, no_new_privs, seccomp; then
//! Landlock), applied to the calling thread, and the program that applies it to itself
//! and then replaces itself with a command: `vigil-agent sandbox-exec`, for diagnosis and
//! the tests (the agent's own reads are confined on threads: [`super::thread`]). [`main`]
//! is the whole program; with `--probe` it prints what it could enforce as JSON and
//! exits.

use super::args::LauncherArgs;
use super::{Enforced, Report, SandboxError, caps, landlock, seccomp};
use std::ffi::OsString;
use std::io::{self, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// Exit status of the launcher when it refuses or fails before the command runs (the
/// shell's "cannot execute").
pub const LAUNCH_FAILED: u8 = 126;

/// What the part of the confinement that does not depend on the read enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Base {
    pub seccomp: bool,
    pub no_new_privs: bool,
    /// The bounding set holds only the capabilities a read keeps.
    pub capabilities_dropped: bool,
}

impl Base {
    /// The whole report, once Landlock has done `landlock`; `hidden` says whether the
    /// read's mount namespace hides what it must (or there is nothing to hide).
    pub fn with(self, landlock: landlock::Outcome, hidden: bool) -> Report {
        Report {
            hidden,
            landlock_abi: landlock.abi,
            landlock: landlock.enforced,
            seccomp: self.seccomp,
            no_new_privs: self.no_new_privs,
            capabilities_dropped: self.capabilities_dropped,
        }
    }
}

/// The part of the confinement that is the same for every read, on the calling thread:
/// capabilities, no_new_privs, seccomp, in that order. Landlock, which names the read's
/// scratch directory, comes after ([`landlock::restrict`]).
pub fn confine_base() -> Result<Base, SandboxError> {
    let dropped = caps::drop_unneeded()?;
    rustix::thread::set_no_new_privs(true).map_err(|e| format!("no_new_privs: {e}"))?;
    let seccomp = seccomp::apply().is_ok();
    let no_new_privs = rustix::thread::no_new_privs().unwrap_or(false);
    Ok(Base {
        seccomp,
        no_new_privs,
        capabilities_dropped: dropped.bounded,
    })
}

/// Confine the calling thread for good and say what was enforced. `scratch` is the only
/// directory the command may write in. Only a failure that leaves the thread in an
/// unknown state is an error; missing kernel features show in the report. The program
/// makes no mount namespace, so nothing is hidden (`hidden: false`).
pub fn confine(scratch: Option<&Path>) -> Result<Report, SandboxError> {
    let base = confine_base()?;
    Ok(base.with(landlock::restrict(scratch)?, false))
}

/// Why a read must not run under `report`: Landlock did not take hold and unsandboxed
/// reads are not allowed. The one check for both the program and the agent's threads.
pub fn refuse_unsandboxed(report: &Report, allow_unsandboxed: bool) -> Result<(), SandboxError> {
    if report.landlock == Enforced::None && !allow_unsandboxed {
        return Err(SandboxError::Unavailable(
            "this kernel has no Landlock, so a read cannot be kept from writing; the agent \
             refuses reads unless started with --allow-unsandboxed-reads"
                .to_owned(),
        ));
    }
    Ok(())
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
    if let Err(refusal) = refuse_unsandboxed(&report, allow_unsandboxed) {
        return refusal.to_string();
    }
    let error = Command::new(program).args(args).exec();
    format!("could not run {program}: {error}")
}

/// The launcher as a program: parse `args` (without the program name or subcommand) and
/// run; never returns when the command starts. `name` prefixes error messages.
pub fn main(name: &str, args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let args = match LauncherArgs::parse(args) {
        Ok(args) => args,
        Err(reason) => return fail(name, &reason.to_string()),
    };
    if args.probe {
        return probe(name, args.scratch);
    }
    let Some((program, rest)) = args.command.split_first() else {
        return fail(name, "no command given after --");
    };
    let reason = exec(
        args.scratch.as_deref(),
        args.allow_unsandboxed,
        program,
        rest,
    );
    fail(name, &reason)
}

fn probe(name: &str, scratch: Option<PathBuf>) -> ExitCode {
    let report = match confine(scratch.as_deref()) {
        Ok(report) => report,
        Err(reason) => return fail(name, &reason.to_string()),
    };
    let printed = serde_json::to_string(&report)
        .map_err(io::Error::other)
        .and_then(|json| writeln!(io::stdout().lock(), "{json}"));
    match printed {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(name, &e.to_string()),
    }
}

fn fail(name: &str, reason: &str) -> ExitCode {
    let _ = writeln!(io::stderr().lock(), "{name}: {reason}");
    ExitCode::from(LAUNCH_FAILED)
}
