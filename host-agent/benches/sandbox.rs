//! The read sandbox's cost per exec: `bash -c true` started the way the agent starts a
//! write (directly) and the way it starts a host read (scratch directory, then
//! `vigil-agent sandbox-exec --scratch DIR -- bash -c true`, then the scratch directory
//! removed). Run with `cargo bench -p vigil-agent --bench sandbox`; figures go to
//! BENCHMARKS.md.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::print_stdout)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use vigil_agent::exec::sandbox::read_env;
use vigil_agent::exec::{FIXED_ENV, Scratch, find_shell};

const RUNS: usize = 500;

fn quiet(cmd: &mut Command) -> &mut Command {
    cmd.env_clear()
        .envs(FIXED_ENV)
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
}

fn direct(shell: &std::path::Path) -> Duration {
    let start = Instant::now();
    let status = quiet(Command::new(shell).args(["-c", "true"]))
        .status()
        .unwrap();
    assert!(status.success());
    start.elapsed()
}

fn sandboxed(launcher: &str, shell: &std::path::Path, base: &std::path::Path) -> Duration {
    let start = Instant::now();
    let scratch = Scratch::create(base).unwrap();
    let status = quiet(
        Command::new(launcher)
            .arg("sandbox-exec")
            .arg("--scratch")
            .arg(scratch.path())
            .arg("--")
            .arg(shell)
            .args(["-c", "true"]),
    )
    .envs(read_env::vars(&scratch.path().to_string_lossy()))
    .status()
    .unwrap();
    assert!(status.success(), "the sandboxed run failed (no Landlock?)");
    drop(scratch);
    start.elapsed()
}

fn summary(name: &str, mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    println!(
        "{name:<10} p50 {:>8.3} ms  p90 {:>8.3} ms  p99 {:>8.3} ms",
        at(0.5).as_secs_f64() * 1e3,
        at(0.9).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3
    );
    at(0.5)
}

fn main() {
    let launcher = env!("CARGO_BIN_EXE_vigil-agent");
    let shell = find_shell();
    let base = tempfile::tempdir().unwrap();
    let probe = Command::new(launcher)
        .args(["sandbox-exec", "--probe"])
        .output()
        .unwrap();
    println!("probe: {}", String::from_utf8_lossy(&probe.stdout).trim());
    // Warm the page cache, then interleave so both see the same machine load.
    for _ in 0..20 {
        direct(&shell);
        sandboxed(launcher, &shell, base.path());
    }
    let (mut off, mut on) = (Vec::with_capacity(RUNS), Vec::with_capacity(RUNS));
    for _ in 0..RUNS {
        off.push(direct(&shell));
        on.push(sandboxed(launcher, &shell, base.path()));
    }
    println!("{RUNS} runs of `{} -c true` each:", shell.display());
    let off = summary("direct", off);
    let on = summary("sandboxed", on);
    println!(
        "sandbox cost per exec (p50 difference): {:.3} ms",
        (on.as_secs_f64() - off.as_secs_f64()) * 1e3
    );
}
