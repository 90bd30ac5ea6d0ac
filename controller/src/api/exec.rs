//! `POST /api/exec`: a remote read. The command is classified here first and must be
//! provably read-only and bounded; only then is it sent to the agent as a READ, and the
//! agent classifies it again.

use axum::extract::{Extension, State};
use axum::http::HeaderMap;
use axum::response::Response;
use serde::Deserialize;
use vigil_proto::agent::v1::{ExecMode, ExecRequest};
use vigil_shared::ids::{AgentId, ExecTarget};
use vigil_shared::policy::{Classification, classify};
use vigil_shared::resource::{Resource, ResourceId};

use super::ApiState;
use super::agents::parse_agent_id;
use super::auth::Principal;
use super::exec_output::run_audited;
use super::json_body::JsonBody;
use crate::audit::{self, Entry};
use crate::gateway::convert::target_to_proto;
use crate::{Error, Result};

/// Longest command timeout a caller may ask for, in seconds.
pub const MAX_TIMEOUT_S: u32 = 300;

/// The body of `POST /api/exec`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecBody {
    /// The agent id. Without it, `target` is a resource id and the command is routed along
    /// the resource's chain (docs/inventory.md).
    #[serde(default)]
    pub agent: Option<String>,
    /// With `agent`: `host` (default), `lxc:ID`, `vm:ID`, `docker:NAME`,
    /// `lxc:ID/docker:NAME` or `pod:NS/NAME[/CONTAINER]`. Without: a resource id such as
    /// `lxc:delly:141` or `docker_container:media:3f2a9c0b1d2e`.
    #[serde(default)]
    pub target: Option<String>,
    /// One shell command.
    pub command: String,
    /// Timeout in seconds (default 30, at most 300).
    #[serde(default)]
    pub timeout_s: Option<u32>,
}

/// Parses an optional target (`host` when absent).
pub fn parse_target(target: Option<&str>) -> Result<ExecTarget> {
    match target.map(str::trim) {
        None | Some("") => Ok(ExecTarget::Host),
        Some(text) => text.parse().map_err(Error::InvalidInput),
    }
}

/// Refuses what may not run as a READ: not provably read-only (403), or read-only but
/// unbounded (422, with the rewrite when the classifier has one).
pub fn require_read(classification: &Classification) -> Result<()> {
    if !classification.intent.is_read_only() {
        return Err(Error::PolicyBlocked {
            reasons: classification.reasons.clone(),
        });
    }
    if !classification.boundedness.is_bounded() {
        return Err(Error::UnboundedCommand {
            reasons: classification.reasons.clone(),
            rewrite: classification.rewrite().map(str::to_owned),
            category: classification.category().map(|c| c.as_str()),
        });
    }
    Ok(())
}

/// `POST /api/exec`.
pub async fn exec(
    State(state): State<ApiState>,
    headers: HeaderMap,
    Extension(principal): Extension<Principal>,
    JsonBody(body): JsonBody<ExecBody>,
) -> Result<Response> {
    if body.command.trim().is_empty() {
        return Err(Error::InvalidInput("command is empty".into()));
    }
    let timeout_s = body.timeout_s.unwrap_or(0);
    if timeout_s > MAX_TIMEOUT_S {
        return Err(Error::InvalidInput(format!(
            "timeout_s {timeout_s} is over the maximum of {MAX_TIMEOUT_S}"
        )));
    }
    // The classifier decides first, whatever the agent or resource: a write is refused
    // (and audited) even when its target would not resolve.
    let classification = classify(&body.command);
    if let Err(refusal) = require_read(&classification) {
        tracing::info!(code = refusal.api_code(), "refused a command");
        let mut entry = Entry::new(&principal.name, "exec", "refused").command(&body.command);
        entry.agent = body.agent.clone();
        entry.target = Some(body.target.clone().unwrap_or_else(|| "host".into()));
        audit::record(state.agents.store(), entry).await;
        return Err(refusal);
    }
    let route = route(&state, &body)?;
    let agent = route.agent;
    let target_text = route.audit_target();
    tracing::info!(%agent, target = %route.target, resource = ?route.resource.as_ref().map(ToString::to_string), "routed a command");
    let request = ExecRequest {
        request_id: String::new(),
        target: Some(target_to_proto(&route.target)),
        command: body.command,
        mode: ExecMode::Read as i32,
        grant: None,
        timeout_s,
        output_cap_bytes: 0,
    };
    run_audited(
        &state,
        &headers,
        &principal,
        "exec",
        agent,
        &target_text,
        request,
    )
    .await
}

/// Where a command goes: the agent, its target, and the resource it was routed for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub agent: AgentId,
    pub target: ExecTarget,
    pub resource: Option<ResourceId>,
}

impl Route {
    /// The target as the audit log records it: `RESOURCE via TARGET` when routed.
    pub fn audit_target(&self) -> String {
        match &self.resource {
            Some(resource) => format!("{resource} via {}", self.target),
            None => self.target.to_string(),
        }
    }
}

/// Resolve the body's agent and target: explicit (`agent` given) or along the chain of the
/// resource `target` names.
pub fn route(state: &ApiState, body: &ExecBody) -> Result<Route> {
    if let Some(agent) = &body.agent {
        return Ok(Route {
            agent: parse_agent_id(agent)?,
            target: parse_target(body.target.as_deref())?,
            resource: None,
        });
    }
    let Some(text) = body
        .target
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
    else {
        return Err(Error::InvalidInput(
            "give agent (and optionally target), or target as a resource id".into(),
        ));
    };
    let id: ResourceId = text
        .parse()
        .map_err(|e: vigil_shared::resource::ResourceIdError| {
            Error::InvalidInput(format!("{e}; without agent, target must be a resource id"))
        })?;
    let sessions = state.agents.sessions();
    route_along(
        state.agents.inventory().get(&id).map(|view| view.resource),
        &id,
        |agent| sessions.get(agent).is_some(),
    )
}

/// The first path of `resource`'s chain whose agent is connected.
pub fn route_along(
    resource: Option<Resource>,
    id: &ResourceId,
    connected: impl Fn(AgentId) -> bool,
) -> Result<Route> {
    let resource = resource.ok_or_else(|| Error::NotFound(format!("no resource {id}")))?;
    if resource.paths.is_empty() {
        return Err(Error::NotFound(format!(
            "no agent can run commands in {id}: it has no execution path (no agent inside it, \
             and its parent's agent cannot reach it)"
        )));
    }
    let mut agents = Vec::new();
    for path in &resource.paths {
        let Ok(agent) = path.agent.parse::<AgentId>() else {
            continue;
        };
        if connected(agent) {
            return Ok(Route {
                agent,
                target: path.target.clone(),
                resource: Some(id.clone()),
            });
        }
        agents.push(path.agent.clone());
    }
    Err(Error::ResourceOffline {
        resource: id.to_string(),
        agents,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_pass_and_refusals_carry_reasons_and_rewrites() {
        assert!(require_read(&classify("uptime")).is_ok());
        let Err(Error::PolicyBlocked { reasons }) = require_read(&classify("rm -rf /tmp/x")) else {
            panic!("rm is not a read");
        };
        assert!(!reasons.is_empty());
        let Err(Error::UnboundedCommand { rewrite, .. }) = require_read(&classify("journalctl -f"))
        else {
            panic!("journalctl -f is unbounded");
        };
        assert!(rewrite.unwrap_or_default().contains("journalctl -n 200"));
    }

    #[test]
    fn targets_default_to_the_host() {
        assert_eq!(parse_target(None).unwrap(), ExecTarget::Host);
        assert_eq!(parse_target(Some("lxc:141")).unwrap(), ExecTarget::Lxc(141));
        assert!(parse_target(Some("ssh:x")).is_err());
    }

    #[test]
    fn routing_takes_the_first_connected_path_of_the_chain() {
        use vigil_shared::resource::{ExecPath, Facts, ResourceKind, Via};
        let inside = AgentId::new_random();
        let node = AgentId::new_random();
        let id: ResourceId = "lxc:delly:141".parse().unwrap();
        let resource = Resource {
            id: id.clone(),
            kind: ResourceKind::Lxc,
            name: "media".into(),
            aliases: Vec::new(),
            parent: None,
            status: "running".into(),
            paths: vec![
                ExecPath {
                    agent: inside.to_string(),
                    target: ExecTarget::Host,
                    via: Via::Direct,
                },
                ExecPath {
                    agent: node.to_string(),
                    target: ExecTarget::Lxc(141),
                    via: Via::PctExec,
                },
            ],
            facts: Facts::default(),
        };
        let both = route_along(Some(resource.clone()), &id, |_| true).unwrap();
        assert_eq!((both.agent, both.target), (inside, ExecTarget::Host));
        let node_only = route_along(Some(resource.clone()), &id, |a| a == node).unwrap();
        assert_eq!(
            (node_only.agent, node_only.target.clone()),
            (node, ExecTarget::Lxc(141))
        );
        assert_eq!(node_only.audit_target(), "lxc:delly:141 via lxc:141");
        let Err(Error::ResourceOffline { agents, .. }) =
            route_along(Some(resource.clone()), &id, |_| false)
        else {
            panic!("no agent connected");
        };
        assert_eq!(agents, [inside.to_string(), node.to_string()]);
        let no_paths = Resource {
            paths: Vec::new(),
            ..resource
        };
        assert!(matches!(
            route_along(Some(no_paths), &id, |_| true),
            Err(Error::NotFound(_))
        ));
        assert!(matches!(
            route_along(None, &id, |_| true),
            Err(Error::NotFound(_))
        ));
    }
}
