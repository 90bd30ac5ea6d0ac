//! Classifier benchmark: every corpus command (the handbook's and the repository's),
//! timed one by one over several rounds. Prints the per-command median, p90 and p99 and
//! the throughput in commands per second. Run with `make bench`; figures go in
//! BENCHMARKS.md.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};
use vigil_shared::policy::classify;

fn commands() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("../../shared/handbook/corpus/commands.tsv")];
    let mut own: Vec<_> = std::fs::read_dir(root.join("tests/corpus"))
        .expect("corpus dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "tsv"))
        .collect();
    own.sort();
    files.extend(own);
    files
        .iter()
        .filter(|p| p.exists())
        .flat_map(|p| {
            std::fs::read_to_string(p)
                .expect("read corpus")
                .lines()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty() && l != "command\texpected")
        .filter_map(|l| l.rsplit_once('\t').map(|(c, _)| c.replace("\\n", "\n")))
        .collect()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` passes nothing we need.
    let quick = std::env::args().any(|a| a == "--test" || a == "--quick");
    let cmds = commands();
    let rounds = if quick { 1 } else { 20 };
    for c in &cmds {
        std::hint::black_box(classify(c));
    }
    let mut samples = Vec::with_capacity(cmds.len() * rounds);
    let started = Instant::now();
    for _ in 0..rounds {
        for c in &cmds {
            let t = Instant::now();
            std::hint::black_box(classify(std::hint::black_box(c)));
            samples.push(t.elapsed());
        }
    }
    let total = started.elapsed();
    samples.sort();
    let n = samples.len();
    println!(
        "classify: {} commands x {rounds} rounds = {n} calls",
        cmds.len()
    );
    println!(
        "  per command: median {:.1} µs, p90 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
        percentile(&samples, 0.5).as_secs_f64() * 1e6,
        percentile(&samples, 0.9).as_secs_f64() * 1e6,
        percentile(&samples, 0.99).as_secs_f64() * 1e6,
        samples[n - 1].as_secs_f64() * 1e6
    );
    println!(
        "  throughput: {:.0} commands/s on one core",
        n as f64 / total.as_secs_f64()
    );
    let target = Duration::from_micros(50);
    println!(
        "  target median < 50 µs: {}",
        if percentile(&samples, 0.5) < target {
            "met"
        } else {
            "MISSED"
        }
    );
}
