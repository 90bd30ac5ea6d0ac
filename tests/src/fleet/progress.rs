//! How many streams are up: every identity counts itself in ([`Progress::up`]) once its
//! hello is acknowledged and out when its stream ends. Reaching all of them prints the line
//! `connected N/N` on standard output (again after every recovery), which scripts and
//! tests wait for; [`report`] logs the count every second while it changes, and the
//! simulator's own CPU and memory every 30 s.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use super::procfs;

/// Live streams against the number wanted.
#[derive(Debug)]
pub struct Progress {
    target: usize,
    connected: AtomicUsize,
    opened: AtomicU64,
    dropped: AtomicU64,
    /// When the count last fell from `target` (or the run started).
    since: Mutex<Instant>,
    /// Why streams failed or ended since the last report, with counts.
    failures: Mutex<BTreeMap<String, u64>>,
}

impl Progress {
    /// Nothing connected yet, out of `target`.
    pub fn new(target: usize) -> Progress {
        Progress {
            target,
            connected: AtomicUsize::new(0),
            opened: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            since: Mutex::new(Instant::now()),
            failures: Mutex::new(BTreeMap::new()),
        }
    }

    /// A stream's hello was acknowledged.
    pub fn up(&self) {
        self.opened.fetch_add(1, Ordering::Relaxed);
        let now = self.connected.fetch_add(1, Ordering::SeqCst) + 1;
        if now == self.target {
            let seconds = self
                .since
                .lock()
                .map(|since| since.elapsed().as_secs_f64())
                .unwrap_or_default();
            info!(
                agents = self.target,
                seconds,
                opened = self.opened.load(Ordering::Relaxed),
                "every stream is up"
            );
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "connected {0}/{0}", self.target).and_then(|()| out.flush());
        }
    }

    /// A stream that was up ended.
    pub fn down(&self) {
        self.dropped.fetch_add(1, Ordering::Relaxed);
        let before = self.connected.fetch_sub(1, Ordering::SeqCst);
        if before == self.target
            && let Ok(mut since) = self.since.lock()
        {
            *since = Instant::now();
        }
    }

    /// A stream failed to open or ended, for `reason` (counted, logged once a second).
    pub fn fail(&self, reason: &str) {
        if let Ok(mut failures) = self.failures.lock() {
            let reason: String = reason.chars().take(240).collect();
            *failures.entry(reason).or_default() += 1;
        }
    }

    fn take_failures(&self) -> BTreeMap<String, u64> {
        self.failures
            .lock()
            .map(|mut f| std::mem::take(&mut *f))
            .unwrap_or_default()
    }

    /// Streams up now.
    pub fn connected(&self) -> usize {
        self.connected.load(Ordering::SeqCst)
    }

    /// Streams wanted.
    pub fn target(&self) -> usize {
        self.target
    }
}

/// Logs `connected k/N` each second while the count changes or is short, and the
/// simulator's own CPU and memory every 30 s, until `shutdown`.
pub async fn report(progress: std::sync::Arc<Progress>, shutdown: CancellationToken) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut last = usize::MAX;
    let mut seconds = 0u64;
    let mut cpu = procfs::cpu_ticks(procfs::SELF).unwrap_or_default();
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        seconds += 1;
        for (reason, count) in progress.take_failures() {
            warn!(count, %reason, "streams failed or ended in the last second");
        }
        let now = progress.connected();
        if now != last || now < progress.target {
            info!("connected {now}/{}", progress.target);
            last = now;
        }
        if seconds.is_multiple_of(30) {
            let ticks = procfs::cpu_ticks(procfs::SELF).unwrap_or_default();
            let percent = procfs::cpu_percent(ticks.saturating_sub(cpu), Duration::from_secs(30));
            cpu = ticks;
            match procfs::rss_kib(procfs::SELF) {
                Ok(rss) => info!(
                    rss_kib = rss,
                    rss_per_agent_kib = rss / progress.target.max(1) as u64,
                    cpu_percent = format!("{percent:.1}"),
                    dropped = progress.dropped.load(Ordering::Relaxed),
                    "simulator footprint"
                ),
                Err(error) => warn!(%error, "cannot read /proc/self"),
            }
        }
    }
}
