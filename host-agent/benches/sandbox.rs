//! The read sandbox's cost per exec: `bash -c true` started the way the agent starts a
//! write (directly) and the way it starts a host read (scratch directory, then
//! `vigil-sandbox --scratch DIR -- bash -c true`, then the scratch directory removed),
//! and, for comparison, through the fallback launcher `vigil-agent sandbox-exec`. Run
//! with `cargo bench -p vigil-agent --bench sandbox`; figures go to BENCHMARKS.md.

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

/// A launcher: the program and the arguments before its flags.
type Launcher<'a> = (&'a str, &'a [&'a str]);

const SMALL: Launcher = (env!("CARGO_BIN_EXE_vigil-sandbox"), &[]);
const AGENT: Launcher = (env!("CARGO_BIN_EXE_vigil-agent"), &["sandbox-exec"]);

fn sandboxed(launcher: Launcher, shell: &std::path::Path, base: &std::path::Path) -> Duration {
    let start = Instant::now();
    let scratch = Scratch::create(base).unwrap();
    let status = quiet(
        Command::new(launcher.0)
            .args(launcher.1)
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
        "{name:<26} p50 {:>8.3} ms  p90 {:>8.3} ms  p99 {:>8.3} ms",
        at(0.5).as_secs_f64() * 1e3,
        at(0.9).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3
    );
    at(0.5)
}

fn main() {
    let shell = find_shell();
    let base = tempfile::tempdir().unwrap();
    for (name, launcher) in [("vigil-sandbox", SMALL), ("vigil-agent", AGENT)] {
        let probe = Command::new(launcher.0)
            .args(launcher.1)
            .arg("--probe")
            .output()
            .unwrap();
        let report = String::from_utf8_lossy(&probe.stdout);
        println!("probe of {name}: {}", report.trim());
    }
    // Warm the page cache, then interleave so all three see the same machine load.
    for _ in 0..20 {
        direct(&shell);
        sandboxed(SMALL, &shell, base.path());
        sandboxed(AGENT, &shell, base.path());
    }
    let mut off = Vec::with_capacity(RUNS);
    let (mut small, mut agent) = (off.clone(), off.clone());
    for _ in 0..RUNS {
        off.push(direct(&shell));
        small.push(sandboxed(SMALL, &shell, base.path()));
        agent.push(sandboxed(AGENT, &shell, base.path()));
    }
    println!("{RUNS} runs of `{} -c true` each:", shell.display());
    let off = summary("direct", off);
    let small = summary("vigil-sandbox", small);
    let agent = summary("vigil-agent sandbox-exec", agent);
    let ms = |on: Duration| (on.as_secs_f64() - off.as_secs_f64()) * 1e3;
    println!(
        "sandbox cost per exec (p50 difference): {:.3} ms with vigil-sandbox, {:.3} ms with \
         vigil-agent sandbox-exec",
        ms(small),
        ms(agent)
    );
}
