//! Confining a read without a launcher process: the agent starts a fresh thread, confines
//! that one thread (capabilities, no_new_privs, Landlock, seccomp: [`launcher::confine`])
//! and spawns the read from it. All four are properties of the calling *thread* in Linux
//! (its credentials, its task flags, its Landlock domain, its seccomp filter; none of the
//! calls here asks for the whole process), and a new process starts as a copy of the
//! thread that made it, so the read inherits every restriction while the agent's other
//! threads keep theirs. The thread ends right after the spawn and is never reused.
//!
//! Against a launcher binary (`vigil-agent sandbox-exec`, still there for diagnosis) this
//! saves a whole `execve` and the launcher's start-up per read, and the seccomp program is
//! compiled once per agent instead of once per read (BENCHMARKS.md, "Read sandbox"). It
//! needs no `unsafe`: nothing runs between fork and exec.

use super::launcher::confine;
use super::{Enforced, Report};
use std::io;
use std::path::PathBuf;
use tokio::process::{Child, Command};
use tokio::sync::oneshot;

/// The name of the short-lived thread each confined spawn runs on.
pub const THREAD_NAME: &str = "vigil-read-spawn";

/// What a confined spawn needs to know.
#[derive(Debug, Clone)]
pub struct Confinement {
    /// The one directory the read may write in.
    pub scratch: Option<PathBuf>,
    /// Run the read even where the kernel has no Landlock.
    pub allow_unsandboxed: bool,
}

/// Confine a new thread as `how` says and spawn `command` from it. Fails, without
/// starting anything, when the thread cannot be confined, or when the kernel has no
/// Landlock and unsandboxed reads are not allowed.
pub async fn spawn(mut command: Command, how: Confinement) -> io::Result<Child> {
    let runtime = tokio::runtime::Handle::current();
    let (tx, rx) = oneshot::channel();
    std::thread::Builder::new()
        .name(THREAD_NAME.to_owned())
        .spawn(move || {
            let _entered = runtime.enter();
            let result = confined(&how).and_then(|_| command.spawn());
            let _ = tx.send(result);
        })?;
    rx.await
        .unwrap_or_else(|_| Err(io::Error::other("the read's spawn thread ended early")))
}

/// Confine the calling thread for good and say what was enforced, refusing (as an error)
/// when there is no Landlock and that is not allowed.
fn confined(how: &Confinement) -> io::Result<Report> {
    let report = confine(how.scratch.as_deref())
        .map_err(|reason| io::Error::other(format!("could not confine the read: {reason}")))?;
    if report.landlock == Enforced::None && !how.allow_unsandboxed {
        return Err(io::Error::other(
            "this kernel has no Landlock, so a read cannot be kept from writing; the agent \
             refuses reads unless started with --allow-unsandboxed-reads",
        ));
    }
    Ok(report)
}

/// Confine a throw-away thread and report what the kernel enforced: the agent's probe at
/// startup.
pub fn probe(scratch: Option<PathBuf>) -> Result<Report, String> {
    std::thread::Builder::new()
        .name(THREAD_NAME.to_owned())
        .spawn(move || confine(scratch.as_deref()))
        .map_err(|e| format!("could not start the probe thread: {e}"))?
        .join()
        .unwrap_or_else(|_| Err("the probe thread panicked".to_owned()))
}
