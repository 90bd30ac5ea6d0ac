//! Confining a read without a launcher process. Capabilities, no_new_privs, the seccomp
//! filter and the Landlock domain are all properties of a *thread* in Linux (its
//! credentials and its task flags; none of the calls here asks for the whole process),
//! a new thread starts with the ones of the thread that created it, and a new process
//! starts as a copy of the thread that made it. So:
//!
//! 1. One long-lived **base thread** confines itself once with what is the same for every
//!    read ([`launcher::confine_base`]: capabilities, no_new_privs, seccomp) and then only
//!    starts threads.
//! 2. For each read it starts a **read thread**, which inherits all of that, adds the
//!    read's own Landlock domain (its scratch directory is the one writable place;
//!    Landlock domains only ever narrow, which is why this cannot happen on the base
//!    thread), spawns the read, and ends. It is never reused.
//!
//! The read inherits every restriction; the agent's other threads keep theirs. Against a
//! launcher binary (`vigil-agent sandbox-exec`, still there for diagnosis) a read saves a
//! whole `execve`, and the capability drop and the seccomp filter are paid once per agent
//! instead of once per read (BENCHMARKS.md, "Read sandbox"). No `unsafe`: nothing runs
//! between fork and exec.

use super::hidden::HiddenPaths;
use super::launcher::{Base, confine_base, refuse_unsandboxed};
use super::mountns::Plan;
use super::mountns::{self, Masks};
use super::read_hide;
use super::sockets::{self, Reach};
use super::{Report, SandboxError, landlock};
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::process::{Child, Command};
use tokio::sync::oneshot;

/// The name of the base thread.
pub const BASE_THREAD: &str = "vigil-read-base";
/// The name of the short-lived thread each read is spawned from.
pub const THREAD_NAME: &str = "vigil-read-spawn";

/// What a confined spawn needs to know.
#[derive(Debug, Clone)]
pub struct Confinement {
    /// The one directory the read may write in.
    pub scratch: Option<PathBuf>,
    /// Run the read even where the kernel has no Landlock.
    pub allow_unsandboxed: bool,
    /// The sockets the read may open (its programs' needs).
    pub reach: Reach,
}

/// What a read thread inherits from the base thread: its confinement and the masks of
/// its mount namespace.
#[derive(Debug, Clone)]
pub struct Inherited {
    pub base: Base,
    /// The masks, or why the namespace could not be made (`None` inside: nothing to hide).
    pub masks: Result<Option<Arc<Masks>>, SandboxError>,
    /// What to hide when there is no namespace ([`read_hide`]).
    pub hidden: Option<HiddenPaths>,
    /// Reads must run in the host's root (`--host-root`), which only the namespace gives.
    pub rooted: bool,
}

impl Inherited {
    /// Without a namespace, hide by a Landlock read layer on the calling thread.
    /// `Ok(true)`: hidden (by the namespace, or by the layer).
    fn hide_without_namespace(&self) -> Result<bool, SandboxError> {
        match &self.masks {
            Ok(_) => Ok(true),
            Err(_) => {
                let paths = self
                    .hidden
                    .as_ref()
                    .map(HiddenPaths::existing)
                    .unwrap_or_default();
                read_hide::restrict(&paths)
            }
        }
    }
}

/// Work for a read thread; it runs with the base thread's confinement.
type Job = Box<dyn FnOnce(Inherited) + Send>;

/// The base thread's queue of jobs, once it runs.
static BASE: Mutex<Option<mpsc::Sender<Job>>> = Mutex::new(None);

/// What the reads' namespace is made of (what they must not see, the doors); the base
/// thread makes it.
static PLAN: Mutex<Option<Plan>> = Mutex::new(None);

/// Set when a read found a hidden path uncovered: the next read starts a new base thread.
static STALE: AtomicBool = AtomicBool::new(false);

/// Hide `hidden` from every read from now on (a new base thread, with a new namespace,
/// starts with the next read).
pub fn set_hidden(hidden: HiddenPaths) {
    set_plan(Plan::hiding(hidden));
}

/// Make every read's namespace after `plan` from now on (a new base thread starts with
/// the next read).
pub fn set_plan(plan: Plan) {
    *PLAN.lock().unwrap_or_else(PoisonError::into_inner) = Some(plan);
    STALE.store(true, Ordering::SeqCst);
}

/// Start the next read in a new namespace, made from the same plan (whose hidden paths
/// changed).
pub fn refresh() {
    STALE.store(true, Ordering::SeqCst);
}

/// Make the mount namespace (when there is anything to hide), then confine.
fn prepare_base() -> Result<Inherited, SandboxError> {
    let plan = PLAN.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let masks = match &plan {
        Some(p)
            if !p.hidden.all_patterns().is_empty()
                || !p.doors.is_empty()
                || p.mask_sockets
                || p.root.is_some() =>
        {
            mountns::enter(p).map(|m| Some(Arc::new(m)))
        }
        _ => Ok(None),
    };
    let rooted = plan.as_ref().is_some_and(|p| p.root.is_some());
    Ok(Inherited {
        base: confine_base()?,
        masks,
        hidden: plan.map(|p| p.hidden),
        rooted,
    })
}

/// Start the base thread and wait until it has confined itself.
fn start_base() -> Result<mpsc::Sender<Job>, SandboxError> {
    let (jobs, inbox) = mpsc::channel::<Job>();
    let (ready, confined) = mpsc::channel();
    std::thread::Builder::new()
        .name(BASE_THREAD.to_owned())
        .spawn(move || {
            let inherited = prepare_base();
            let _ = ready.send(inherited.clone().map(|_| ()));
            let Ok(inherited) = inherited else { return };
            for job in inbox {
                // A read thread that cannot start drops its job, and with it the
                // answer channel: the waiting read fails with "ended early".
                let given = inherited.clone();
                let _ = std::thread::Builder::new()
                    .name(THREAD_NAME.to_owned())
                    .spawn(move || job(given));
            }
        })
        .map_err(|e| format!("could not start the read base thread: {e}"))?;
    confined
        .recv()
        .map_err(|_| SandboxError::from("the read base thread ended before it was confined"))??;
    Ok(jobs)
}

/// Run `job` on a new read thread started by the base thread (starting the base thread
/// first, or again if it has gone).
fn on_read_thread(job: Job) -> Result<(), SandboxError> {
    let mut base = BASE.lock().unwrap_or_else(PoisonError::into_inner);
    if STALE.swap(false, Ordering::SeqCst) {
        // The old base thread ends once its queue is dropped; reads it started go on.
        *base = None;
    }
    let job = match base.as_ref() {
        Some(jobs) => match jobs.send(job) {
            Ok(()) => return Ok(()),
            Err(mpsc::SendError(job)) => job,
        },
        None => job,
    };
    let started = start_base()?;
    let sent = started
        .send(job)
        .map_err(|_| SandboxError::from("the read base thread ended"));
    *base = Some(started);
    sent
}

/// Spawn `command` as a read, confined as `how` says. Fails, without starting anything,
/// when the thread cannot be confined, or when the kernel has no Landlock and
/// unsandboxed reads are not allowed.
pub async fn spawn(command: Command, how: Confinement) -> io::Result<Child> {
    let command = Arc::new(Mutex::new(command));
    match spawn_once(command.clone(), how.clone()).await {
        // A mask went away since the namespace was made: once more, in a fresh one.
        Err(e) if matches!(SandboxError::of(&e), Some(SandboxError::Uncovered(_))) => {
            spawn_once(command, how).await
        }
        other => other,
    }
}

async fn spawn_once(command: Arc<Mutex<Command>>, how: Confinement) -> io::Result<Child> {
    let runtime = tokio::runtime::Handle::current();
    let (tx, rx) = oneshot::channel();
    on_read_thread(Box::new(move |inherited| {
        let _entered = runtime.enter();
        let result = confined(inherited, &how).and_then(|_| {
            command
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .spawn()
        });
        let _ = tx.send(result);
    }))
    .map_err(|reason| {
        io::Error::other(match reason {
            SandboxError::Confine(why) => {
                SandboxError::Confine(format!("could not confine the read: {why}"))
            }
            other => other,
        })
    })?;
    rx.await
        .unwrap_or_else(|_| Err(io::Error::other("the read's spawn thread ended early")))
}

/// Check the namespace's masks, then add the read's Landlock domain to the calling (read)
/// thread, refusing (as an error) when a hidden path is uncovered, or when there is no
/// Landlock or no namespace and that is not allowed.
fn confined(inherited: Inherited, how: &Confinement) -> io::Result<Report> {
    let hidden = match &inherited.masks {
        Ok(Some(masks)) => match masks.verify(how.reach) {
            Ok(()) => true,
            Err(why) => {
                tracing::info!(%why, "a hidden path lost its mask; the reads get a new namespace");
                STALE.store(true, Ordering::SeqCst);
                return Err(io::Error::other(why));
            }
        },
        Ok(None) => true,
        // Without the namespace a read would run in the agent's container, not on the
        // host: never, whatever --allow-unsandboxed-reads says.
        Err(why) if inherited.rooted => {
            return Err(io::Error::other(SandboxError::Unavailable(format!(
                "reads run in the host's root (--host-root), which needs their mount \
                 namespace, and it could not be made: {why}"
            ))));
        }
        Err(why) if how.reach != Reach::Local && !how.allow_unsandboxed => {
            return Err(io::Error::other(SandboxError::Unavailable(format!(
                "without the reads' mount namespace ({why}) there are no read-only doors to \
                 daemons, so reads that may open sockets are refused; run the agent as root, \
                 or start it with --allow-unsandboxed-reads"
            ))));
        }
        Err(why) => match inherited.hide_without_namespace() {
            Ok(true) => true,
            _ if how.allow_unsandboxed => false,
            outcome => {
                let layer = outcome
                    .err()
                    .map_or_else(|| "not enforced".to_owned(), |e| e.to_string());
                return Err(io::Error::other(SandboxError::Unavailable(format!(
                    "the read's mount namespace could not hide Vigil's secrets ({why}), nor \
                     could Landlock ({layer}); the agent refuses reads unless started with \
                     --allow-unsandboxed-reads"
                ))));
            }
        },
    };
    let report = landlock::restrict(how.scratch.as_deref())
        .map(|landlock| inherited.base.with(landlock, hidden))
        .map_err(|reason| SandboxError::Confine(format!("could not confine the read: {reason}")))
        .and_then(|report| refuse_unsandboxed(&report, how.allow_unsandboxed).map(|()| report))
        .map_err(io::Error::other)?;
    if let Err(why) = sockets::apply(how.reach)
        && !how.allow_unsandboxed
    {
        return Err(io::Error::other(SandboxError::Confine(format!(
            "could not limit the read's sockets: {why}"
        ))));
    }
    if let Some(why) = sockets::unscoped(how.reach, report.landlock_abi)
        && !how.allow_unsandboxed
    {
        return Err(io::Error::other(why));
    }
    Ok(report)
}

/// What a read thread gets: the base confinement and Landlock without a scratch
/// directory, on a throw-away read thread. The agent's probe at startup.
pub fn probe(scratch: Option<PathBuf>) -> Result<Probe, SandboxError> {
    let (tx, rx) = mpsc::channel();
    on_read_thread(Box::new(move |inherited| {
        let hidden = inherited.hide_without_namespace().unwrap_or(false);
        let result = landlock::restrict(scratch.as_deref()).map(|l| Probe {
            report: inherited.base.with(l, hidden),
            masks: inherited.masks,
        });
        let _ = tx.send(result);
    }))?;
    rx.recv()
        .unwrap_or_else(|_| Err(SandboxError::from("the probe thread ended early")))
}

/// What the probe found: the report, and the namespace's masks or why there are none.
#[derive(Debug, Clone)]
pub struct Probe {
    pub report: Report,
    pub masks: Result<Option<Arc<Masks>>, SandboxError>,
}
