//! Running the model's tool calls (docs/design.md §9.1) through the gates, in this order:
//! the call's own validation (unknown tool, action or argument: `INVALID_INPUT`, classified
//! a write), loop detection, the FSM, strict resolution (writes), the routing check, then
//! the tool itself: resolve tools read the inventory, read tools classify their command and
//! run it as a READ, write tools become approvals (or refusals, or signed runs, by control
//! level). A blocked read that says how to recover (`auto_recoverable` with a
//! `suggested_rewrite`) is retried once with the rewrite; a routing mismatch names the
//! right target for the model to use. Tools of external MCP servers ([`external`]) pass
//! loop detection and the knowledge gate, then run as reads or approvals by their class.

pub mod external;
mod output;
mod read;
mod resolve;
mod write;

use std::time::Instant;

use futures_util::future::join_all;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use vigil_shared::resource::{Resource, ResourceId};

use super::events::ChatEvent;
use super::gates::GateBlock;
use super::knowledge::Knowledge;
use super::service::Assistant;
use super::state::SessionState;
use super::turn::Turn;
use crate::approvals::ControlLevel;
use crate::assistant::gates::fsm::FsmState;
use crate::llm::ToolCall;
use crate::tools::call::parse_call;
use crate::tools::class::{ToolClass, classify_tool};
use crate::tools::envelope::{Envelope, ErrorCode};

/// A tool call and its answer.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    pub call: ToolCall,
    pub envelope: Envelope,
}

impl CallOutcome {
    /// The answer to a call the turn's cancellation stopped before it ran.
    pub fn cancelled(call: &ToolCall) -> CallOutcome {
        CallOutcome {
            call: call.clone(),
            envelope: Envelope::failed(
                ErrorCode::ExecutionFailed,
                "cancelled before it ran",
                false,
                json!({}),
            ),
        }
    }
}

/// What a call taught the session: resources found, and which the user or model chose.
#[derive(Debug, Default)]
pub(super) struct Effects {
    pub registered: Vec<Resource>,
    pub explicit: Vec<ResourceId>,
}

/// A call ready to run: validated, gated, its target resolved.
#[derive(Debug, Clone)]
pub(super) struct Prepared {
    pub call: ToolCall,
    pub action: String,
    pub args: Value,
    pub class: ToolClass,
    pub target: Option<Resource>,
}

/// Runs tool calls for one turn, or for one client of the tools (MCP).
#[derive(Debug, Clone)]
pub struct ToolRunner {
    pub(super) assistant: Assistant,
    /// The chat session the calls belong to (its approvals name it); `None` for an MCP
    /// client's calls.
    pub(super) session_id: Option<String>,
    pub(super) level: ControlLevel,
    pub(super) actor: String,
    events: mpsc::UnboundedSender<ChatEvent>,
    pub(super) cancel: CancellationToken,
    /// An investigation's turn (`read_only`, run by `vigil-patrol`): a write it asks for is
    /// raised as a pending approval for a person, and the turn does not wait for it.
    pub(super) proposes: bool,
}

/// Records the facts of a result; a successful write makes its target's facts stale.
fn learn_facts(state: &mut SessionState, prepared: &Prepared, envelope: &Envelope) {
    let seen = serde_json::to_value(envelope).unwrap_or_default();
    let facts = Knowledge::extract(&prepared.call.name, &prepared.action, &prepared.args, &seen);
    let turn = state.turn;
    state.knowledge.record(facts, turn);
    if prepared.class == ToolClass::Write && envelope.ok {
        if let Some(target) = &prepared.target {
            state.knowledge.invalidate(&target.id.to_string());
            state.knowledge.invalidate(&target.name);
        }
        if let Some(named) = prepared.args.get("resource_id").and_then(Value::as_str) {
            state.knowledge.invalidate(named);
        }
    }
}

/// The action of a call's arguments, if they are a JSON object with one.
fn action_of(arguments: &str) -> Option<String> {
    serde_json::from_str::<Value>(arguments)
        .ok()
        .and_then(|v| v.get("action").and_then(Value::as_str).map(str::to_owned))
}

impl ToolRunner {
    /// The runner of `turn`.
    pub fn new(turn: &Turn) -> ToolRunner {
        ToolRunner {
            assistant: turn.assistant.clone(),
            session_id: Some(turn.session_id.clone()),
            level: turn.level,
            actor: format!("{} (assistant {})", turn.caller.name, turn.session_id),
            events: turn.events_sender(),
            cancel: turn.cancel.clone(),
            proposes: turn.caller.name == crate::findings::investigate::INVESTIGATOR
                && turn.caller.role >= crate::roles::Role::Operator
                && turn.level == ControlLevel::ReadOnly,
        }
    }

    /// The runner of a tool client outside chat (an MCP client): the same gates, its
    /// approvals in no chat session, its events on `events`, its actor `actor` in the
    /// audit trail.
    pub fn for_client(
        assistant: Assistant,
        level: ControlLevel,
        actor: String,
        events: mpsc::UnboundedSender<ChatEvent>,
        cancel: CancellationToken,
    ) -> ToolRunner {
        ToolRunner {
            assistant,
            session_id: None,
            level,
            actor,
            events,
            cancel,
            proposes: false,
        }
    }

    /// Takes the resource a call names as chosen, as a user's mention is, when it names
    /// exactly one (a canonical id, or a name or alias of one resource): what a client
    /// without a session gives instead of resolving the name first.
    pub fn adopt_named(&self, state: &mut SessionState, call: &ToolCall) {
        let Ok(parsed) = parse_call(&call.name, &call.arguments) else {
            return;
        };
        if let Some(name) = parsed.resource_id()
            && let Ok(resource) = resolve::find(&self.assistant, state, name)
        {
            state.mention(resource);
        }
    }

    pub(super) fn emit(&self, event: ChatEvent) {
        let _ = self.events.send(event);
    }

    /// The class of a call: an external MCP tool's as last listed, otherwise by its tool
    /// and action (an unparsable call is a write).
    pub fn class_of(&self, call: &ToolCall) -> ToolClass {
        if let Some(tool) = self.assistant.external().find(&call.name) {
            return tool.class;
        }
        classify_tool(&call.name, action_of(&call.arguments).as_deref())
    }

    /// Where the batch that starts at `start` ends: a write runs alone; reads and resolves
    /// run up to `max` at once.
    pub fn batch_end(&self, calls: &[ToolCall], start: usize, max: usize) -> usize {
        if self.class_of(&calls[start]) == ToolClass::Write {
            return start + 1;
        }
        let mut end = start + 1;
        while end < calls.len()
            && end - start < max
            && self.class_of(&calls[end]) != ToolClass::Write
        {
            end += 1;
        }
        end
    }

    /// Runs a batch: gates in order, execution at once, results in order.
    pub async fn run_batch(
        &self,
        state: &mut SessionState,
        batch: &[ToolCall],
    ) -> Vec<CallOutcome> {
        let started = Instant::now();
        let mut ready: Vec<Result<Prepared, Envelope>> = Vec::with_capacity(batch.len());
        for call in batch {
            let input = serde_json::from_str::<Value>(&call.arguments)
                .unwrap_or_else(|_| Value::String(call.arguments.clone()));
            self.emit(ChatEvent::ToolStart {
                tool_call_id: call.id.clone(),
                name: call.name.clone(),
                input,
            });
            ready.push(self.prepare(state, call));
        }
        let runs = ready.iter().map(|prepared| async move {
            match prepared {
                Ok(prepared) => self.execute_recovering(prepared).await,
                Err(envelope) => (envelope.clone(), Effects::default()),
            }
        });
        let results = join_all(runs).await;
        let mut outcomes = Vec::with_capacity(batch.len());
        for ((call, prepared), (envelope, effects)) in batch.iter().zip(&ready).zip(results) {
            let class = prepared.as_ref().map_or(ToolClass::Write, |p| p.class);
            state.learn(effects.registered, &effects.explicit);
            if let Ok(prepared) = prepared {
                learn_facts(state, prepared, &envelope);
                let what = prepared
                    .args
                    .get("command")
                    .or(prepared.args.get("operation"))
                    .and_then(Value::as_str);
                state.after_call(&call.name, class, envelope.ok, what);
            }
            self.emit(ChatEvent::ToolEnd {
                tool_call_id: call.id.clone(),
                name: call.name.clone(),
                ok: envelope.ok,
                error_code: envelope.code().map(|c| c.as_str().to_owned()),
                duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            });
            outcomes.push(CallOutcome {
                call: call.clone(),
                envelope,
            });
        }
        outcomes
    }

    /// Validates and gates one call, retrying once with the right target when the routing
    /// check says how.
    fn prepare(&self, state: &mut SessionState, call: &ToolCall) -> Result<Prepared, Envelope> {
        if let Some(tool) = self.assistant.external().find(&call.name) {
            return self.prepare_external(state, call, tool.class);
        }
        let metrics = self.assistant.exec().metrics().clone();
        let parsed = parse_call(&call.name, &call.arguments).map_err(|invalid| {
            Envelope::blocked(
                ErrorCode::InvalidInput,
                invalid.to_string(),
                json!({ "recovery_hint": "check the tool's schema: tool, action and argument names are fixed", "auto_recoverable": false }),
            )
        })?;
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or_else(|_| json!({}));
        let action = parsed.action().to_owned();
        let class = classify_tool(&call.name, Some(&action));
        let block = |state: &SessionState, block: GateBlock| {
            metrics.gate_block(block.gate_label(), state.fsm_state().as_str());
            block.into_envelope()
        };
        state.check(&parsed, class).map_err(|b| block(state, b))?;
        let Some(name) = parsed.resource_id() else {
            return Ok(Prepared {
                call: call.clone(),
                action,
                args,
                class,
                target: None,
            });
        };
        let target = resolve::find(&self.assistant, state, name)?;
        // A routing mismatch goes back to the model (auto-recoverable: the details name the
        // right target), so the retried call, its approval and the audit all show the guest.
        state
            .check_routing(&parsed, &target)
            .map_err(|b| block(state, b))?;
        if class != ToolClass::Write {
            self.knowledge_gate(state, &call.name, &action, &args)?;
        }
        Ok(Prepared {
            call: call.clone(),
            action,
            args,
            class,
            target: Some(target),
        })
    }

    /// The knowledge gate of a read: the facts this session already observed answer it
    /// instead of running it again (not while a write waits to be verified).
    fn knowledge_gate(
        &self,
        state: &mut SessionState,
        tool: &str,
        action: &str,
        args: &Value,
    ) -> Result<(), Envelope> {
        let verifying = state.fsm_state() == FsmState::Verifying;
        let (turn, knowledge) = (state.turn, &mut state.knowledge);
        let Some(facts) = knowledge.answer(tool, action, args, turn, verifying) else {
            return Ok(());
        };
        tracing::info!(%tool, "answered from the session's knowledge");
        let metrics = self.assistant.exec().metrics();
        metrics.gate_block("knowledge", state.fsm_state().as_str());
        let mut envelope = Envelope::success(json!({ "from_knowledge": true, "facts": facts }));
        envelope.set_meta(
            "not_run",
            json!("answered from facts this session already observed"),
        );
        Err(envelope)
    }

    /// Gates a call of an external MCP tool: its arguments must be an object (its server
    /// checks the rest), then loop detection and, for a read, the knowledge gate.
    fn prepare_external(
        &self,
        state: &mut SessionState,
        call: &ToolCall,
        class: ToolClass,
    ) -> Result<Prepared, Envelope> {
        let metrics = self.assistant.exec().metrics().clone();
        let Ok(Value::Object(args)) = serde_json::from_str::<Value>(&call.arguments) else {
            return Err(Envelope::blocked(
                ErrorCode::InvalidInput,
                format!("the arguments of {} must be one JSON object", call.name),
                json!({ "auto_recoverable": false }),
            ));
        };
        let parsed = crate::tools::call::ToolCall::external(&call.name, args.clone());
        state.check(&parsed, class).map_err(|b| {
            metrics.gate_block(b.gate_label(), state.fsm_state().as_str());
            b.into_envelope()
        })?;
        let args = Value::Object(args);
        if class != ToolClass::Write {
            self.knowledge_gate(state, &call.name, "call", &args)?;
        }
        Ok(Prepared {
            call: call.clone(),
            action: "call".into(),
            args,
            class,
            target: None,
        })
    }

    /// Runs a prepared call; a blocked read with a suggested rewrite is retried once.
    async fn execute_recovering(&self, prepared: &Prepared) -> (Envelope, Effects) {
        let first = self.execute(prepared).await;
        let rewrite = first.0.error_details().and_then(|d| {
            (d.get("auto_recoverable") == Some(&Value::Bool(true)))
                .then(|| {
                    d.get("suggested_rewrite")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                })
                .flatten()
        });
        let Some(rewrite) = rewrite else {
            return first;
        };
        let metrics = self.assistant.exec().metrics();
        metrics.auto_recovery("attempt");
        tracing::info!(tool = %prepared.call.name, %rewrite, "retrying with the suggested rewrite");
        let mut retry = prepared.clone();
        retry.args["command"] = Value::String(rewrite.clone());
        let (mut envelope, effects) = self.execute(&retry).await;
        if envelope.ok {
            metrics.auto_recovery("success");
            envelope.set_meta(
                "auto_recovered",
                json!({ "rewrite": rewrite, "original_error": first.0.code().map(|c| c.as_str()) }),
            );
        }
        (envelope, effects)
    }

    async fn execute(&self, prepared: &Prepared) -> (Envelope, Effects) {
        match (prepared.call.name.as_str(), prepared.class) {
            (name, _) if name.starts_with(crate::mcp::external::PREFIX) => {
                (external::run(self, prepared).await, Effects::default())
            }
            ("query", _) => resolve::query(self, prepared),
            ("knowledge", _) => (resolve::knowledge(self, prepared).await, Effects::default()),
            (_, ToolClass::Write) => (write::run(self, prepared).await, Effects::default()),
            _ => (read::run(self, prepared).await, Effects::default()),
        }
    }
}
