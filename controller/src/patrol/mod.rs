//! Patrol: built-in checks that run by themselves, with no model. [`Patrol::run`] (one
//! task per replica) runs each enabled check on each resource its selector picks and this
//! replica holds the agent of, every check's interval, through the ordinary read path: the
//! classifier, routing, the agent's guard and sandbox, the audit trail (actor
//! `vigil-patrol`, action `patrol.read`). What a check finds goes to the findings
//! service, which resolves what passes again. The checks themselves are in [`checks`];
//! the controller's own check (agents offline) runs here.

pub mod checks;
pub mod settings;

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use vigil_shared::policy::classify;
use vigil_shared::resource::{Resource, ResourceKind};

pub use checks::Check;
pub use settings::PatrolSettings;

use crate::Result;
use crate::clock::unix_now;
use crate::exec::{ExecService, ExecSpec, Mode, require_read};
use crate::findings::Findings;
use crate::store::findings::Observation;

/// Who patrol reads as, in the audit trail.
pub const ACTOR: &str = "vigil-patrol";
/// The audit action of a patrol read.
pub const ACTION: &str = "patrol.read";
/// Timeout of one patrol command.
const COMMAND_TIMEOUT_S: u32 = 30;
/// Checks running at once on this replica.
const CONCURRENCY: usize = 64;
/// Longest a first run waits (spread so that a restart does not run everything at once).
const FIRST_RUN_SPREAD: Duration = Duration::from_secs(60);

/// Runs the checks (cheap to clone).
#[derive(Debug, Clone)]
pub struct Patrol {
    exec: ExecService,
    findings: Findings,
    settings: Arc<PatrolSettings>,
    running: Arc<Semaphore>,
    /// The (check, resource) runs started and not ended.
    in_flight: Arc<Mutex<HashSet<(Check, String)>>>,
}

impl Patrol {
    /// Patrol over the exec service, recording into `findings`.
    pub fn new(exec: ExecService, findings: Findings, settings: PatrolSettings) -> Patrol {
        Patrol {
            exec,
            findings,
            settings: Arc::new(settings),
            running: Arc::new(Semaphore::new(CONCURRENCY)),
            in_flight: Arc::default(),
        }
    }

    fn in_flight(&self) -> std::sync::MutexGuard<'_, HashSet<(Check, String)>> {
        self.in_flight
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs checks until `shutdown`.
    pub async fn run(self, shutdown: CancellationToken) -> Result<()> {
        if !self.settings.enabled {
            tracing::info!("patrol is off (--patrol=false)");
            // A server task that ends stops the controller: wait for the shutdown.
            shutdown.cancelled().await;
            return Ok(());
        }
        let tick = self
            .settings
            .checks
            .values()
            .filter(|s| s.enabled)
            .map(|s| s.interval)
            .min()
            .unwrap_or(Duration::from_secs(5))
            .clamp(Duration::from_millis(500), Duration::from_secs(5));
        let mut due: HashMap<(Check, String), tokio::time::Instant> = HashMap::new();
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return Ok(()),
                () = tokio::time::sleep(tick) => {}
            }
            self.round(&mut due).await;
        }
    }

    /// Starts every check that is due.
    async fn round(&self, due: &mut HashMap<(Check, String), tokio::time::Instant>) {
        let now = tokio::time::Instant::now();
        let agents = self.exec.agents();
        let everything = agents.inventory().search("", None, usize::MAX);
        for (check, settings) in &self.settings.checks {
            if !settings.enabled {
                continue;
            }
            if *check == Check::AgentOffline {
                let key = (*check, String::new());
                let next = *due.entry(key.clone()).or_insert(now);
                if next <= now {
                    due.insert(key, now + settings.interval);
                    let (patrol, thresholds) = (self.clone(), settings.thresholds);
                    tokio::spawn(async move { patrol.agents_offline(thresholds).await });
                }
                continue;
            }
            for resource in &everything {
                let Ok(route) = self.exec.route(&resource.id) else {
                    continue;
                };
                // This replica checks the resources of the agents it holds.
                if agents.sessions().get(route.agent).is_none() {
                    continue;
                }
                let labels = agents
                    .get(route.agent)
                    .map(|a| a.labels.clone())
                    .unwrap_or_default();
                if !settings.selects(resource, &labels) {
                    continue;
                }
                let key = (*check, resource.id.to_string());
                let first = now + spread(&key, settings.interval.min(FIRST_RUN_SPREAD));
                let next = *due.entry(key.clone()).or_insert(first);
                if next > now {
                    continue;
                }
                // A run that has not ended yet (a slow agent) is not started again.
                if !self.in_flight().insert(key.clone()) {
                    continue;
                }
                due.insert(key.clone(), now + settings.interval);
                let (patrol, check, resource) = (self.clone(), *check, resource.clone());
                let thresholds = settings.thresholds;
                tokio::spawn(async move {
                    // At most CONCURRENCY runs at once; the others wait their turn here.
                    if let Ok(_permit) = patrol.running.clone().acquire_owned().await {
                        patrol.run_check(check, &resource, thresholds).await;
                    }
                    patrol.in_flight().remove(&key);
                });
            }
        }
        due.retain(|_, next| *next + Duration::from_secs(3600) > now);
    }

    /// Runs `check` on `resource` and records what it found.
    pub async fn run_check(&self, check: Check, resource: &Resource, thresholds: (f64, f64)) {
        let metrics = self.exec.metrics().clone();
        let mut outputs = Vec::new();
        let listening: Vec<u16> = self
            .settings
            .tls_ports
            .iter()
            .copied()
            .filter(|port| {
                resource
                    .facts
                    .ports
                    .iter()
                    .any(|p| p.split('/').next().and_then(|n| n.parse().ok()) == Some(*port))
            })
            .collect();
        let commands = check.commands(&self.settings.cert_files, &listening);
        if commands.is_empty() {
            // Nothing to look at here any more (no such port listens): what was found
            // on it is gone.
            metrics.patrol_run(check.as_str(), "ok");
            let scope = resource.id.to_string();
            if let Err(error) = self.findings.settle(check.as_str(), &scope, &[]).await {
                tracing::warn!(check = check.as_str(), %error, "cannot resolve passing findings");
            }
            return;
        }
        for command in commands {
            // The ordinary read path: a command the classifier does not prove read-only is
            // never sent (the checks' own test keeps this from happening).
            if let Err(error) = require_read(&classify(&command)) {
                tracing::error!(check = check.as_str(), %command, %error, "a patrol command is not a read");
                metrics.patrol_run(check.as_str(), "failed");
                return;
            }
            match self.read(resource, &command).await {
                Ok(output) => outputs.push(output),
                Err(error) => {
                    tracing::debug!(check = check.as_str(), resource = %resource.id, %error, "patrol read failed");
                    metrics.patrol_run(check.as_str(), "failed");
                    return;
                }
            }
        }
        let children = self.children(resource);
        let ctx = checks::Context {
            children: &children,
            thresholds,
            now: unix_now(),
        };
        let scope = resource.id.to_string();
        let problems = match checks::evaluate(check, &outputs, &ctx) {
            checks::Verdict::Skipped(why) => {
                tracing::debug!(check = check.as_str(), resource = %scope, why, "check does not apply");
                metrics.patrol_run(check.as_str(), "skipped");
                return;
            }
            checks::Verdict::Checked(problems) => problems,
        };
        metrics.patrol_run(
            check.as_str(),
            if problems.is_empty() { "ok" } else { "found" },
        );
        let mut failing = Vec::with_capacity(problems.len());
        for problem in problems {
            let subject = format!("{scope} {}", problem.item);
            let (resource_id, resource_name) = problem
                .resource
                .unwrap_or_else(|| (scope.clone(), resource.name.clone()));
            let seen = Observation {
                check: check.as_str().into(),
                subject: subject.clone(),
                scope: scope.clone(),
                resource_id: Some(resource_id),
                resource_name: Some(resource_name),
                severity: problem.severity.as_str().into(),
                summary: problem.summary,
                evidence: problem.evidence,
            };
            if let Err(error) = self.findings.observe(seen).await {
                tracing::warn!(check = check.as_str(), %error, "cannot record a finding");
            }
            failing.push(subject);
        }
        if let Err(error) = self.findings.settle(check.as_str(), &scope, &failing).await {
            tracing::warn!(check = check.as_str(), %error, "cannot resolve passing findings");
        }
    }

    async fn read(&self, resource: &Resource, command: &str) -> Result<checks::Output> {
        let route = self.exec.route(&resource.id)?;
        let running = self
            .exec
            .start(ExecSpec {
                actor: ACTOR.into(),
                action: ACTION,
                route,
                command: command.into(),
                mode: Mode::Read,
                timeout_s: COMMAND_TIMEOUT_S,
                approval_id: None,
            })
            .await?;
        let outcome = running.collect(|_, _| {}).await?;
        Ok(checks::Output {
            command: command.into(),
            stdout: vigil_shared::redact::redact(&outcome.stdout).text,
            exit_code: outcome.exit.exit_code,
        })
    }

    fn children(&self, resource: &Resource) -> Vec<Resource> {
        if !matches!(resource.kind, ResourceKind::Host | ResourceKind::Node) {
            return Vec::new();
        }
        let inventory = self.exec.agents().inventory();
        let children = inventory
            .get(&resource.id)
            .map(|view| view.children)
            .unwrap_or_default();
        children
            .iter()
            .filter_map(|id| inventory.get(id).map(|view| view.resource))
            .collect()
    }

    /// The controller's own check: agents not connected for `thresholds` minutes.
    async fn agents_offline(&self, (warning, critical): (f64, f64)) {
        let now = unix_now();
        let agents = self.exec.agents();
        let mut failing = Vec::new();
        for agent in agents.list() {
            let subject = format!("agent {}", agent.id);
            if agent.connected {
                continue;
            }
            let row = agent.id.parse().ok().and_then(|id| agents.get(id));
            // Never connected: counted from its enrollment (an agent being installed).
            let (since, ever) = match row.as_ref().map(|r| (r.last_seen, r.created_at)) {
                Some((Some(seen), _)) => (seen, true),
                Some((None, enrolled)) => (enrolled, false),
                None => continue,
            };
            let minutes = (now - since) as f64 / 60.0;
            let Some(severity) = checks::level(minutes, (warning, critical)) else {
                continue;
            };
            let at = crate::clock::rfc3339(since);
            let summary = if ever {
                format!("agent {} has been offline since {at}", agent.hostname)
            } else {
                format!(
                    "agent {} has not connected since it enrolled at {at}",
                    agent.hostname
                )
            };
            let seen = Observation {
                check: Check::AgentOffline.as_str().into(),
                subject: subject.clone(),
                scope: "agents".into(),
                resource_id: Some(format!("host:{}", agent.id)),
                resource_name: Some(agent.hostname.clone()),
                severity: severity.as_str().into(),
                evidence: format!(
                    "agent {} ({}), last seen {}",
                    agent.hostname,
                    agent.id,
                    agent.last_seen.as_deref().unwrap_or("never")
                ),
                summary,
            };
            if let Err(error) = self.findings.observe(seen).await {
                tracing::warn!(%error, "cannot record an offline agent");
            }
            failing.push(subject);
        }
        if let Err(error) = self
            .findings
            .settle(Check::AgentOffline.as_str(), "agents", &failing)
            .await
        {
            tracing::warn!(%error, "cannot resolve agents that came back");
        }
        self.exec.metrics().patrol_run(
            Check::AgentOffline.as_str(),
            if failing.is_empty() { "ok" } else { "found" },
        );
    }
}

/// Where in `window` the first run of `key` falls (stable per key).
fn spread(key: &(Check, String), window: Duration) -> Duration {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut hasher);
    let millis = u64::try_from(window.as_millis()).unwrap_or(u64::MAX).max(1);
    Duration::from_millis(hasher.finish() % millis)
}
