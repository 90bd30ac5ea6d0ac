//! Latency figures of the benches: nearest-rank quantiles of timed samples, and the one
//! summary line (`p50 …, p90 …, p99 …, max …`) they print.

use std::time::Duration;

/// The `p` quantile (0–1) of sorted samples, in milliseconds.
pub fn pct(sorted: &[Duration], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize].as_secs_f64() * 1e3
}

/// Sorts `samples` and gives their p50, p90, p99 and maximum.
pub fn summary(samples: &mut [Duration]) -> String {
    samples.sort();
    format!(
        "p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        pct(samples, 0.5),
        pct(samples, 0.9),
        pct(samples, 0.99),
        pct(samples, 1.0)
    )
}
