//! The controller's Prometheus metrics, below the HTTP layer so that the exec service, the
//! approvals and the assistant count into them without depending on `api`. Label values
//! are bounded: route templates, status codes and fixed sets of outcomes and gate names.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HttpLabels {
    route: String,
    status: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct GateLabels {
    gate: String,
    state: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ClassLabels {
    class: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ChannelLabels {
    channel: String,
    outcome: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CheckLabels {
    check: String,
    outcome: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TokenLabels {
    kind: String,
    origin: String,
}

/// Outcomes of approval decisions that get their own label value; others are `other`.
const APPROVAL_OUTCOMES: [&str; 6] = [
    "approved",
    "denied",
    "conflict",
    "approval_expired",
    "not_found",
    "self_approval_refused",
];

/// The controller's metrics.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    http: Family<HttpLabels, Counter>,
    agents: Gauge,
    exec_latency: Histogram,
    approvals: Family<OutcomeLabels, Counter>,
    gate_blocks: Family<GateLabels, Counter>,
    recoveries: Family<OutcomeLabels, Counter>,
    iterations: Counter,
    write_runs: Family<OutcomeLabels, Counter>,
    rate_limited: Family<ClassLabels, Counter>,
    notifications: Family<ChannelLabels, Counter>,
    patrol_runs: Family<CheckLabels, Counter>,
    findings: Family<CheckLabels, Counter>,
    tokens: Family<TokenLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Registers every metric.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("vigil");
        let http = Family::<HttpLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests by route template and status",
            http.clone(),
        );
        let agents = Gauge::default();
        registry.register(
            "agents_connected",
            "Agents with an open stream",
            agents.clone(),
        );
        let exec_latency = Histogram::new(exponential_buckets(0.005, 2.0, 14));
        registry.register(
            "exec_latency_seconds",
            "Time from POST /api/exec to its response head",
            exec_latency.clone(),
        );
        let approvals = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "approval_decisions",
            "Approval decisions by outcome",
            approvals.clone(),
        );
        let gate_blocks = Family::<GateLabels, Counter>::default();
        registry.register(
            "assistant_gate_blocks",
            "Tool calls and final answers the assistant's gates blocked, by gate and FSM state",
            gate_blocks.clone(),
        );
        let recoveries = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "assistant_auto_recovery",
            "Automatic retries of blocked tool calls with their suggested rewrite (attempt, success)",
            recoveries.clone(),
        );
        let iterations = Counter::default();
        registry.register(
            "assistant_iterations",
            "Model calls of the assistant loop",
            iterations.clone(),
        );
        let write_runs = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "approved_write_runs",
            "Writes run with a signed grant, by outcome (ok, failed, unknown)",
            write_runs.clone(),
        );
        let rate_limited = Family::<ClassLabels, Counter>::default();
        registry.register(
            "rate_limited",
            "Requests refused by a caller's rate limit, by class (exec, fanout, chat)",
            rate_limited.clone(),
        );
        let notifications = Family::<ChannelLabels, Counter>::default();
        registry.register(
            "notifications",
            "Notification delivery attempts by channel and outcome (delivered, retrying, failed)",
            notifications.clone(),
        );
        let patrol_runs = Family::<CheckLabels, Counter>::default();
        registry.register(
            "patrol_runs",
            "Patrol check runs by check and outcome (ok, found, skipped, failed)",
            patrol_runs.clone(),
        );
        let findings = Family::<CheckLabels, Counter>::default();
        registry.register(
            "findings",
            "Findings recorded by check (built-in, or alertmanager) and outcome (new, repeated, resolved)",
            findings.clone(),
        );
        let tokens = Family::<TokenLabels, Counter>::default();
        registry.register(
            "model_tokens",
            "Model tokens used, by kind (input, output) and origin (chat, investigation)",
            tokens.clone(),
        );
        Metrics {
            registry,
            notifications,
            patrol_runs,
            findings,
            tokens,
            rate_limited,
            gate_blocks,
            recoveries,
            iterations,
            write_runs,
            http,
            agents,
            exec_latency,
            approvals,
        }
    }

    /// Counts an approval decision (`approved`, `denied`, or the error code).
    pub fn approval(&self, outcome: &str) {
        let outcome = if APPROVAL_OUTCOMES.contains(&outcome) {
            outcome
        } else {
            "other"
        };
        self.approvals
            .get_or_create(&OutcomeLabels {
                outcome: outcome.into(),
            })
            .inc();
    }

    /// Records the latency of one exec.
    pub fn exec(&self, elapsed: Duration) {
        self.exec_latency.observe(elapsed.as_secs_f64());
    }

    /// Counts a block by `gate` (`fsm_tool`, `fsm_final`, `strict_resolution`,
    /// `routing_mismatch`, `loop_detected`, `policy`, …) in FSM `state`.
    pub fn gate_block(&self, gate: &'static str, state: &'static str) {
        self.gate_blocks
            .get_or_create(&GateLabels {
                gate: gate.into(),
                state: state.into(),
            })
            .inc();
    }

    /// Counts an auto-recovery `attempt` or `success`.
    pub fn auto_recovery(&self, outcome: &'static str) {
        self.recoveries
            .get_or_create(&OutcomeLabels {
                outcome: outcome.into(),
            })
            .inc();
    }

    /// Counts one model call of the loop.
    pub fn iteration(&self) {
        self.iterations.inc();
    }

    /// Counts an approved write that ran (`ok`, `failed` or `unknown`).
    pub fn write_run(&self, outcome: &'static str) {
        self.write_runs
            .get_or_create(&OutcomeLabels {
                outcome: outcome.into(),
            })
            .inc();
    }

    /// Counts a request refused by its caller's rate limit.
    pub fn rate_limited(&self, class: &'static str) {
        self.rate_limited
            .get_or_create(&ClassLabels {
                class: class.into(),
            })
            .inc();
    }

    /// Counts a notification delivery attempt to `channel`.
    pub fn notification(&self, channel: &str, outcome: &'static str) {
        self.notifications
            .get_or_create(&ChannelLabels {
                channel: channel.into(),
                outcome: outcome.into(),
            })
            .inc();
    }

    /// Counts a run of a patrol check.
    pub fn patrol_run(&self, check: &'static str, outcome: &'static str) {
        self.patrol_runs
            .get_or_create(&CheckLabels {
                check: check.into(),
                outcome: outcome.into(),
            })
            .inc();
    }

    /// Counts a recorded finding; every `alertmanager:*` check counts as `alertmanager`.
    pub fn finding(&self, check: &str, outcome: &'static str) {
        let check = if check.starts_with("alertmanager:") {
            "alertmanager"
        } else {
            check
        };
        self.findings
            .get_or_create(&CheckLabels {
                check: check.into(),
                outcome: outcome.into(),
            })
            .inc();
    }

    /// Counts the tokens of one model call (`origin`: chat or investigation).
    pub fn model_tokens(&self, input: u64, output: u64, origin: &'static str) {
        for (kind, count) in [("input", input), ("output", output)] {
            self.tokens
                .get_or_create(&TokenLabels {
                    kind: kind.into(),
                    origin: origin.into(),
                })
                .inc_by(count);
        }
    }

    /// Counts one HTTP request by route template and status.
    pub fn http_request(&self, route: String, status: u16) {
        self.http
            .get_or_create(&HttpLabels {
                route,
                status: status.to_string(),
            })
            .inc();
    }

    /// The metrics as OpenMetrics text, with `connected` agents.
    pub fn render(&self, connected: usize) -> String {
        self.agents
            .set(i64::try_from(connected).unwrap_or(i64::MAX));
        let mut text = String::new();
        if encode(&mut text, &self.registry).is_err() {
            tracing::error!("cannot encode the metrics");
        }
        text
    }
}
