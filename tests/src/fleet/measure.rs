//! `vigil-fleet measure`: what `make fleet` records once every agent is connected. The
//! controller's resident memory (and its cost per agent against a figure taken before the
//! fleet connected), its CPU while idle, `GET /api/agents` latency over the whole list,
//! fan-outs to every agent (`POST /api/exec/fanout`) with their results lost, and the
//! simulator's own CPU and memory over the same idle window.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;
use tracing::info;

use super::api::ApiClient;
use super::procfs;
use super::{Error, Result};

/// What to measure.
#[derive(Debug, Clone)]
pub struct MeasureOptions {
    /// The controller's process id.
    pub controller_pid: u32,
    /// The simulator's process id.
    pub fleet_pid: Option<u32>,
    /// Agents the fleet runs.
    pub agents: usize,
    /// The controller's VmRSS before the fleet connected, in KiB.
    pub rss_before_kib: Option<u64>,
    /// Seconds the fleet took to connect, as the simulator logged it.
    pub connect_s: Option<f64>,
    /// The idle window for CPU figures.
    pub idle: Duration,
    /// Sequential `GET /api/agents` requests.
    pub list_requests: usize,
    /// Fan-outs to send.
    pub fanouts: usize,
    /// The fan-out's command.
    pub fanout_command: String,
    /// Where to write the report as JSON.
    pub json: Option<PathBuf>,
}

/// One fan-out to every agent.
#[derive(Debug, Clone, Serialize)]
pub struct FanoutFigures {
    /// Wall time seen by the client, in milliseconds.
    pub wall_ms: u64,
    /// The controller's `summary` (targets, ok, failed, refused, offline, duration_ms).
    pub summary: Value,
    /// Targets without an ok result.
    pub lost: i64,
}

/// The figures.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Agents the fleet runs.
    pub agents: usize,
    /// Agents `GET /api/agents` lists as connected.
    pub listed_connected: usize,
    /// Seconds to connect every agent.
    pub connect_s: Option<f64>,
    /// Controller VmRSS before the fleet, KiB.
    pub controller_rss_before_kib: Option<u64>,
    /// Controller VmRSS with every agent connected, KiB.
    pub controller_rss_kib: u64,
    /// (after - before) / agents, KiB.
    pub controller_kib_per_agent: Option<f64>,
    /// Controller CPU over the idle window, percent of one core.
    pub controller_idle_cpu_percent: f64,
    /// Controller VmRSS after the list requests and fan-outs, KiB.
    pub controller_rss_end_kib: u64,
    /// Controller VmHWM (peak), KiB.
    pub controller_peak_rss_kib: u64,
    /// Simulator VmRSS, KiB.
    pub fleet_rss_kib: Option<u64>,
    /// Simulator CPU over the idle window, percent of one core.
    pub fleet_idle_cpu_percent: Option<f64>,
    /// Idle window, seconds.
    pub idle_s: u64,
    /// `GET /api/agents` p50, ms.
    pub list_p50_ms: f64,
    /// `GET /api/agents` p99, ms.
    pub list_p99_ms: f64,
    /// `GET /api/agents` slowest, ms.
    pub list_max_ms: f64,
    /// Requests timed.
    pub list_requests: usize,
    /// The fan-outs; empty when the controller has no fan-out route.
    pub fanouts: Vec<FanoutFigures>,
    /// Whether the controller serves `POST /api/exec/fanout`.
    pub fanout_available: bool,
}

/// Takes every figure (see the module documentation).
pub async fn measure(api: &ApiClient, options: &MeasureOptions) -> Result<Report> {
    let ctrl = options.controller_pid.to_string();
    let fleet = options.fleet_pid.map(|p| p.to_string());
    let proc_error = |e: std::io::Error| Error::Usage(format!("reading /proc: {e}"));
    let controller_rss_kib = procfs::rss_kib(&ctrl).map_err(proc_error)?;
    let fleet_rss_kib = fleet.as_deref().and_then(|p| procfs::rss_kib(p).ok());

    info!(seconds = options.idle.as_secs(), "measuring idle CPU");
    let ctrl_cpu = procfs::cpu_ticks(&ctrl).map_err(proc_error)?;
    let fleet_cpu = fleet.as_deref().and_then(|p| procfs::cpu_ticks(p).ok());
    let start = Instant::now();
    tokio::time::sleep(options.idle).await;
    let wall = start.elapsed();
    let ctrl_cpu = procfs::cpu_ticks(&ctrl).map_err(proc_error)? - ctrl_cpu;
    let fleet_idle_cpu_percent = fleet
        .as_deref()
        .and_then(|p| procfs::cpu_ticks(p).ok())
        .zip(fleet_cpu)
        .map(|(after, before)| procfs::cpu_percent(after.saturating_sub(before), wall));

    info!(requests = options.list_requests, "timing GET /api/agents");
    let mut times = Vec::with_capacity(options.list_requests);
    let mut listed_connected = 0;
    for _ in 0..options.list_requests.max(1) {
        let start = Instant::now();
        let list = api.agents().await?;
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        listed_connected = list.iter().filter(|a| a["connected"] == true).count();
    }
    times.sort_by(f64::total_cmp);

    let mut fanouts = Vec::new();
    let mut fanout_available = true;
    for n in 0..options.fanouts {
        info!(n = n + 1, of = options.fanouts, "fan-out to every agent");
        let start = Instant::now();
        let Some(answer) = api.fanout_all(&options.fanout_command).await? else {
            fanout_available = false;
            break;
        };
        let wall_ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
        let summary = answer["summary"].clone();
        let lost = summary["targets"].as_i64().unwrap_or(0) - summary["ok"].as_i64().unwrap_or(0);
        fanouts.push(FanoutFigures {
            wall_ms,
            summary,
            lost,
        });
    }

    let controller_rss_end_kib = procfs::rss_kib(&ctrl).map_err(proc_error)?;
    let report = Report {
        agents: options.agents,
        listed_connected,
        connect_s: options.connect_s,
        controller_rss_before_kib: options.rss_before_kib,
        controller_rss_kib,
        controller_kib_per_agent: options.rss_before_kib.map(|before| {
            controller_rss_kib.saturating_sub(before) as f64 / options.agents.max(1) as f64
        }),
        controller_idle_cpu_percent: procfs::cpu_percent(ctrl_cpu, wall),
        controller_rss_end_kib,
        controller_peak_rss_kib: procfs::peak_rss_kib(&ctrl).map_err(proc_error)?,
        fleet_rss_kib,
        fleet_idle_cpu_percent,
        idle_s: wall.as_secs(),
        list_p50_ms: percentile(&times, 0.50),
        list_p99_ms: percentile(&times, 0.99),
        list_max_ms: times.last().copied().unwrap_or_default(),
        list_requests: times.len(),
        fanouts,
        fanout_available,
    };
    if let Some(path) = &options.json {
        let text =
            serde_json::to_string_pretty(&report).map_err(|e| Error::Usage(e.to_string()))?;
        std::fs::write(path, text)
            .map_err(|e| Error::Usage(format!("writing {}: {e}", path.display())))?;
    }
    Ok(report)
}

/// The `q` quantile of sorted `values` (nearest rank).
pub fn percentile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let rank = (q * values.len() as f64).ceil() as usize;
    values[rank.clamp(1, values.len()) - 1]
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

impl Report {
    /// The summary a person reads.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let mut line = |text: String| {
            s.push_str(&text);
            s.push('\n');
        };
        line(format!(
            "fleet: {} agents, {} listed as connected",
            self.agents, self.listed_connected
        ));
        if let Some(secs) = self.connect_s {
            line(format!("time to connect all: {secs:.1} s"));
        }
        let before = self.controller_rss_before_kib.map_or("?".to_owned(), mib);
        line(format!(
            "controller RSS: {before} before, {} connected, {} after the list requests and fan-outs (peak {})",
            mib(self.controller_rss_kib),
            mib(self.controller_rss_end_kib),
            mib(self.controller_peak_rss_kib)
        ));
        if let Some(per) = self.controller_kib_per_agent {
            line(format!("controller memory per agent: {per:.1} KiB"));
        }
        line(format!(
            "controller CPU while idle: {:.1}% of one core over {} s",
            self.controller_idle_cpu_percent, self.idle_s
        ));
        line(format!(
            "GET /api/agents ({} requests, whole list): p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            self.list_requests, self.list_p50_ms, self.list_p99_ms, self.list_max_ms
        ));
        if !self.fanout_available {
            line("fan-out: not available".to_owned());
        }
        for (n, f) in self.fanouts.iter().enumerate() {
            line(format!(
                "fan-out {}: {} ms wall, summary {}, results lost {}",
                n + 1,
                f.wall_ms,
                f.summary,
                f.lost
            ));
        }
        if let (Some(rss), Some(cpu)) = (self.fleet_rss_kib, self.fleet_idle_cpu_percent) {
            line(format!(
                "simulator: RSS {} ({:.1} KiB per agent), CPU while idle {cpu:.1}% of one core",
                mib(rss),
                rss as f64 / self.agents.max(1) as f64
            ));
        }
        s
    }

    /// Prints [`Report::render`] on standard output.
    pub fn print(&self) {
        let mut out = std::io::stdout().lock();
        let _ = out
            .write_all(self.render().as_bytes())
            .and_then(|()| out.flush());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.5), 50.0);
        assert_eq!(percentile(&v, 0.99), 99.0);
        assert_eq!(percentile(&v[..1], 0.99), 1.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }
}
