//! The read sandbox's cost per exec: `bash -c true` started the way the agent starts a
//! write (directly) and the way it starts a host read (scratch directory, spawned from a
//! read thread of the confined base thread, scratch directory removed), and, for comparison, through the launcher
//! program `vigil-agent sandbox-exec` (one more `execve` per read); then the same read in
//! the agent's mount namespace (the default hidden list, the doors, every other socket
//! masked) with each reach's socket filter, which adds the checks made before each read.
//! Run with `cargo bench -p vigil-agent --bench sandbox` (as root); figures go to
//! BENCHMARKS.md.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::print_stdout)]

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::process::Command;
use vigil_agent::exec::sandbox::mountns::Plan;
use vigil_agent::exec::sandbox::thread::{self, Confinement};
use vigil_agent::exec::sandbox::{HiddenPaths, caps, doors, landlock, read_env, seccomp};
use vigil_agent::exec::{FIXED_ENV, Scratch, find_shell};
use vigil_shared::policy::Reach;

const RUNS: usize = 500;
const AGENT: &str = env!("CARGO_BIN_EXE_vigil-agent");

fn quiet(cmd: &mut Command) -> &mut Command {
    cmd.env_clear()
        .envs(FIXED_ENV)
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
}

async fn direct(shell: &Path) -> Duration {
    let start = Instant::now();
    let status = quiet(Command::new(shell).args(["-c", "true"]))
        .status()
        .await
        .unwrap();
    assert!(status.success());
    start.elapsed()
}

/// The way the agent runs a host read: from a confined thread.
async fn on_thread(shell: &Path, base: &Path) -> Duration {
    on_thread_with(shell, base, Reach::Local).await
}

/// The same with a given reach.
async fn on_thread_with(shell: &Path, base: &Path, reach: Reach) -> Duration {
    let start = Instant::now();
    let scratch = Scratch::create(base).unwrap();
    let mut cmd = Command::new(shell);
    quiet(cmd.args(["-c", "true"])).envs(read_env::vars(&scratch.path().to_string_lossy()));
    let how = Confinement {
        scratch: Some(scratch.path().to_owned()),
        allow_unsandboxed: false,
        reach,
    };
    let status = thread::spawn(cmd, how).await.unwrap().wait().await.unwrap();
    assert!(status.success(), "the confined run failed");
    drop(scratch);
    start.elapsed()
}

/// Through the launcher program `vigil-agent sandbox-exec`.
async fn program(shell: &Path, base: &Path) -> Duration {
    let start = Instant::now();
    let scratch = Scratch::create(base).unwrap();
    let status = quiet(
        Command::new(AGENT)
            .arg("sandbox-exec")
            .arg("--scratch")
            .arg(scratch.path())
            .arg("--")
            .arg(shell)
            .args(["-c", "true"]),
    )
    .envs(read_env::vars(&scratch.path().to_string_lossy()))
    .status()
    .await
    .unwrap();
    assert!(status.success(), "the sandboxed run failed (no Landlock?)");
    drop(scratch);
    start.elapsed()
}

fn summary(name: &str, mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    println!(
        "{name:<26} p50 {:>8.3} ms  p90 {:>8.3} ms  p99 {:>8.3} ms",
        at(0.5).as_secs_f64() * 1e3,
        at(0.9).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3
    );
    at(0.5)
}

/// The confinement's parts, each timed on a fresh thread: (thread start, capabilities,
/// no_new_privs, Landlock, seccomp).
fn parts(base: &Path) -> [Duration; 5] {
    let base = base.to_owned();
    let start = Instant::now();
    std::thread::spawn(move || {
        let started = start.elapsed();
        let mut lap = Instant::now();
        let mut next = || {
            let took = lap.elapsed();
            lap = Instant::now();
            took
        };
        caps::drop_unneeded().unwrap();
        let caps = next();
        rustix::thread::set_no_new_privs(true).unwrap();
        let nnp = next();
        landlock::restrict(Some(&base)).unwrap();
        let landlock = next();
        seccomp::apply().unwrap();
        [started, caps, nnp, landlock, next()]
    })
    .join()
    .unwrap()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let shell = find_shell();
    let base = tempfile::tempdir().unwrap();
    println!("probe: {:?}", thread::probe(None));
    let mut laps: [Vec<Duration>; 5] = Default::default();
    for _ in 0..RUNS {
        for (lap, took) in laps.iter_mut().zip(parts(base.path())) {
            lap.push(took);
        }
    }
    println!(
        "the confinement's parts, {RUNS} fresh threads (the agent's base thread pays \
         capabilities, no_new_privs and seccomp once; each read pays a thread start and \
         Landlock):"
    );
    for (name, lap) in [
        "thread start",
        "capabilities",
        "no_new_privs",
        "landlock",
        "seccomp",
    ]
    .into_iter()
    .zip(laps)
    {
        summary(name, lap);
    }
    // Warm the page cache, then interleave so all three see the same machine load.
    for _ in 0..20 {
        direct(&shell).await;
        on_thread(&shell, base.path()).await;
        program(&shell, base.path()).await;
    }
    let mut off = Vec::with_capacity(RUNS);
    let (mut confined, mut launched) = (off.clone(), off.clone());
    for _ in 0..RUNS {
        off.push(direct(&shell).await);
        confined.push(on_thread(&shell, base.path()).await);
        launched.push(program(&shell, base.path()).await);
    }
    println!("{RUNS} runs of `{} -c true` each:", shell.display());
    let off = summary("direct", off);
    let confined = summary("confined thread (agent)", confined);
    let launched = summary("vigil-agent sandbox-exec", launched);
    let ms = |on: Duration| (on.as_secs_f64() - off.as_secs_f64()) * 1e3;
    println!(
        "sandbox cost per exec (p50 difference): {:.3} ms from a confined thread, {:.3} ms \
         through vigil-agent sandbox-exec",
        ms(confined),
        ms(launched)
    );

    // The agent's namespace: what `vigil-agent run` sets up.
    let state = tempfile::tempdir().unwrap();
    let hidden = HiddenPaths::new([state.path().to_owned()], true, &[]).unwrap();
    let door_dir = tempfile::tempdir().unwrap();
    let doors = doors::start(door_dir.path(), None).await;
    thread::set_plan(Plan {
        hidden,
        doors: doors.list.clone(),
        mask_sockets: true,
        root: None,
    });
    let made = Instant::now();
    let probe = thread::probe(None).unwrap();
    println!(
        "namespace made in {:.3} ms (masks: paths, devices, sockets = {:?})",
        made.elapsed().as_secs_f64() * 1e3,
        probe.masks.as_ref().map(|m| m.as_ref().map(|m| m.counts()))
    );
    for _ in 0..20 {
        on_thread_with(&shell, base.path(), Reach::Sockets).await;
    }
    let (mut bare, mut local, mut sockets) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..RUNS {
        bare.push(direct(&shell).await);
        local.push(on_thread_with(&shell, base.path(), Reach::Local).await);
        sockets.push(on_thread_with(&shell, base.path(), Reach::Sockets).await);
    }
    let bare = summary("direct", bare);
    let local = summary("namespace, reach local", local);
    let sockets = summary("namespace, reach sockets", sockets);
    let ms = |on: Duration| (on.as_secs_f64() - bare.as_secs_f64()) * 1e3;
    println!(
        "with the namespace, cost per exec (p50 difference): {:.3} ms (reach local), {:.3} ms \
         (reach sockets, which also checks the socket masks)",
        ms(local),
        ms(sockets)
    );
    drop(doors);
}
