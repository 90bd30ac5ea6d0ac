//! The one exec service. `POST /api/exec`, the assistant's read tools and the write path
//! of approved changes all come here: [`ExecService::route`] finds where a command goes
//! (an explicit agent and target, or along a resource's chain), [`ExecService::refuse`]
//! audits a refusal, and [`ExecService::start`] sends a READ, or a WRITE with its signed
//! grant, to the agent with an audit trail that is written when the command ends.
//! [`ExecService::fanout`] sends one read to many targets ([`fanout`]).

pub mod fanout;
mod route;
mod running;
mod trail;
mod utf8;

use std::sync::Arc;

use vigil_proto::agent::v1::{ExecMode, ExecRequest, Grant};
use vigil_shared::ids::{AgentId, ExecTarget};
use vigil_shared::resource::ResourceId;

pub use route::{MAX_TIMEOUT_S, Route, parse_target, require_read, route_along};
pub use running::{
    DEADLINE_GRACE, ExecExit, ExecOutcome, MAX_COLLECTED_OUTPUT, OutputStream, Running,
};
pub use trail::ExecTrail;
pub use utf8::Utf8Carry;

use crate::agents::Agents;
use crate::audit::{self, Entry};
use crate::gateway::Dispatcher;
use crate::gateway::convert::target_to_proto;
use crate::metrics::Metrics;
use crate::{Error, Result};

/// READ (the agent classifies again) or WRITE (runs only with the grant).
#[derive(Debug, Clone)]
pub enum Mode {
    Read,
    Write(Box<Grant>),
}

/// One command to send.
#[derive(Debug, Clone)]
pub struct ExecSpec {
    /// Who asked (an API token's name, `assistant:<session>`, …).
    pub actor: String,
    /// The audit action: `exec`, `raw_exec`, `tool.read`, `approval.run`.
    pub action: &'static str,
    /// Where it goes.
    pub route: Route,
    /// The exact command.
    pub command: String,
    /// READ or WRITE.
    pub mode: Mode,
    /// Timeout in seconds (0: the agent's default).
    pub timeout_s: u32,
    /// The approval a write comes from.
    pub approval_id: Option<String>,
}

/// Routes, dispatches and audits commands.
#[derive(Debug, Clone)]
pub struct ExecService {
    agents: Agents,
    dispatcher: Dispatcher,
    metrics: Arc<Metrics>,
    fanout_concurrency: usize,
}

impl ExecService {
    /// The service over the agent registry, its dispatcher and the metrics.
    pub fn new(agents: Agents, dispatcher: Dispatcher, metrics: Arc<Metrics>) -> Self {
        ExecService {
            agents,
            dispatcher,
            metrics,
            fanout_concurrency: fanout::DEFAULT_FANOUT_CONCURRENCY,
        }
    }

    /// The same service with at most `limit` targets of a fan-out in flight at once.
    pub fn with_fanout_concurrency(mut self, limit: usize) -> Self {
        self.fanout_concurrency = limit.max(1);
        self
    }

    /// The agent registry.
    pub fn agents(&self) -> &Agents {
        &self.agents
    }

    /// The metrics.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// An explicit route: `agent` and its `target`.
    pub fn route_explicit(agent: AgentId, target: ExecTarget) -> Route {
        Route {
            agent,
            target,
            resource: None,
        }
    }

    /// The resource `text` names: its id, or its name or alias as chat's `@NAME` finds it
    /// ([`crate::inventory::names`]). A name that several resources have is an error
    /// listing them; one that none has is `NOT_FOUND`.
    pub fn resource_named(&self, text: &str) -> Result<ResourceId> {
        if let Ok(id) = text.parse() {
            return Ok(id);
        }
        match self.agents.inventory().resolve(text) {
            Ok(resource) => Ok(resource.id),
            Err(candidates) if candidates.is_empty() => Err(Error::NotFound(format!(
                "no resource is named {text:?} (give its id, name or alias; \
                 `vigil-controller resources` lists them)"
            ))),
            Err(candidates) => {
                let list: Vec<String> = candidates
                    .iter()
                    .map(crate::inventory::names::describe)
                    .collect();
                Err(Error::InvalidInput(format!(
                    "{text:?} names {} resources: {}; give one of their ids",
                    candidates.len(),
                    list.join(", ")
                )))
            }
        }
    }

    /// The route to `id`: the first path of its chain whose agent is connected.
    pub fn route(&self, id: &ResourceId) -> Result<Route> {
        route_along(
            self.agents.inventory().get(id).map(|view| view.resource),
            id,
            |agent| self.agents.is_connected(agent),
        )
    }

    /// Audits a command refused before it reached an agent, and returns `refusal`.
    pub async fn refuse(
        &self,
        actor: &str,
        action: &str,
        agent: Option<String>,
        target: String,
        command: &str,
        refusal: Error,
    ) -> Error {
        tracing::info!(
            code = refusal.api_code(),
            actor,
            action,
            "refused a command"
        );
        let mut entry = Entry::new(actor, action, "refused").command(command);
        entry.agent = agent;
        entry.target = Some(target);
        audit::record(self.agents.store(), entry).await;
        refusal
    }

    /// Sends `spec` to its agent and waits for the first event: a refusal by the agent
    /// is an error, anything else a [`Running`] command.
    pub async fn start(&self, spec: ExecSpec) -> Result<Running> {
        let route = &spec.route;
        tracing::info!(agent = %route.agent, target = %route.target, resource = ?route.resource.as_ref().map(ToString::to_string), action = spec.action, "sending a command");
        let (mode, grant) = match spec.mode {
            Mode::Read => (ExecMode::Read, None),
            Mode::Write(grant) => (ExecMode::Write, Some(*grant)),
        };
        let request = ExecRequest {
            request_id: String::new(),
            target: Some(target_to_proto(&route.target)),
            command: spec.command,
            mode: mode as i32,
            grant,
            timeout_s: spec.timeout_s,
            output_cap_bytes: 0,
        };
        let trail = Trail {
            actor: &spec.actor,
            action: spec.action,
            target: &route.audit_target(),
            approval_id: spec.approval_id.as_deref(),
        };
        self.start_request(route.agent, request, trail).await
    }

    /// Sends a request as it is (`POST /api/raw-exec`, which tests the agent's guard).
    pub async fn start_request(
        &self,
        agent: AgentId,
        request: ExecRequest,
        audit: Trail<'_>,
    ) -> Result<Running> {
        let mut trail = ExecTrail::new(
            self.agents.store().clone(),
            self.metrics.clone(),
            audit.actor,
            audit.action,
            &agent.to_string(),
            audit.target,
            &request.command,
        );
        if let Some(id) = audit.approval_id {
            trail.approval(id);
        }
        let mut request = request;
        request.timeout_s = running::effective_timeout(request.timeout_s);
        let stream = self
            .dispatcher
            .exec(agent, request, audit.actor)
            .await
            .inspect_err(|e| trail.failed(e.api_code()))?;
        let timeout_s = stream.timeout_s();
        Running::start(stream, trail, timeout_s).await
    }
}

/// What the audit row of an execution says about it.
#[derive(Debug, Clone, Copy)]
pub struct Trail<'a> {
    /// Who asked.
    pub actor: &'a str,
    /// The audit action.
    pub action: &'a str,
    /// The target as recorded.
    pub target: &'a str,
    /// The approval a write comes from.
    pub approval_id: Option<&'a str>,
}
