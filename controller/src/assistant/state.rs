//! [`SessionState`]: a session's gates together (FSM, resolved context, loop guard), in
//! memory only, reset together so they never disagree.

use std::time::Instant;

use vigil_shared::resource::{Resource, ResourceId};

use super::gates::GateBlock;
use super::gates::context::ResolvedContext;
use super::gates::fsm::{FsmState, SessionFsm};
use super::gates::loops::LoopGuard;
use super::gates::routing;
use super::knowledge::Knowledge;
use crate::tools::call::ToolCall;
use crate::tools::class::ToolClass;

/// False for `knowledge`, which touches only Vigil's own store: its `remember` is a write
/// by class but needs no verification read (nor approval).
fn touches_hosts(call: &ToolCall) -> bool {
    call.name() != "knowledge"
}

/// What a session remembers between turns (never stored).
#[derive(Debug, Clone, Default)]
pub struct SessionState {
    pub fsm: SessionFsm,
    pub context: ResolvedContext,
    pub loops: LoopGuard,
    /// Facts the session's tool results taught it (the knowledge gate).
    pub knowledge: Knowledge,
    /// The session's turn number (from 1), for the knowledge's eviction.
    pub turn: u32,
}

impl SessionState {
    /// A new turn: loop counts restart and stale context expires.
    pub fn begin_turn(&mut self) {
        self.turn += 1;
        self.loops.reset_turn();
        self.context.expire(Instant::now());
    }

    /// The user named `resource`: resolved, explicit, pinned.
    pub fn mention(&mut self, resource: Resource) {
        let now = Instant::now();
        let id = resource.id.clone();
        self.context.register(resource, now);
        self.context.mark_mentioned(&id, now);
        self.fsm.on_resolved();
    }

    /// The gates before a call's target is looked up, in order: loop detection, the FSM,
    /// strict resolution (writes).
    pub fn check(&mut self, call: &ToolCall, class: ToolClass) -> Result<(), GateBlock> {
        self.loops.check(call)?;
        if touches_hosts(call) {
            self.fsm.check_tool(class)?;
        }
        if class == ToolClass::Write {
            routing::check_strict(&mut self.context, call, Instant::now())?;
        }
        Ok(())
    }

    /// The routing check of a call whose target is `target`.
    pub fn check_routing(&self, call: &ToolCall, target: &Resource) -> Result<(), GateBlock> {
        routing::check_routing(&self.context, call, target)
    }

    /// Resources found (registered) and chosen (explicit) by a call.
    pub fn learn(&mut self, registered: Vec<Resource>, explicit: &[ResourceId]) {
        let now = Instant::now();
        for resource in registered {
            self.context.register(resource, now);
        }
        for id in explicit {
            self.context.mark_explicit(id, now);
        }
    }

    /// A call of `class` to `tool` ended (`ok`); `what` describes a write.
    pub fn after_call(&mut self, tool: &str, class: ToolClass, ok: bool, what: Option<&str>) {
        if ok && tool != "knowledge" {
            self.fsm.on_success(class, what);
        }
    }

    /// The final-answer gate.
    pub fn check_final_answer(&self) -> Result<(), String> {
        self.fsm.check_final_answer()
    }

    /// The FSM state's metric label.
    pub fn fsm_state(&self) -> FsmState {
        self.fsm.state()
    }

    /// The resolved-context block of the prompt.
    pub fn context_block(&self) -> String {
        self.context.block()
    }

    /// Forgets everything, FSM and context together.
    pub fn reset(&mut self) {
        *self = SessionState::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::call::parse_call;

    #[test]
    fn reset_clears_the_fsm_and_the_context_together() {
        let mut state = SessionState::default();
        state.mention(crate::assistant::gates::test_resource(
            "lxc:delly:141",
            "homepage",
            Some("node:delly"),
        ));
        let write = parse_call(
            "control",
            r#"{"action":"command","resource_id":"homepage","command":"x"}"#,
        )
        .unwrap();
        state.check(&write, ToolClass::Write).unwrap();
        state.after_call("control", ToolClass::Write, true, Some("x"));
        assert_eq!(state.fsm_state(), FsmState::Verifying);
        state.reset();
        assert_eq!(state.fsm_state(), FsmState::Resolving);
        assert!(state.context.is_empty());
        let blocked = state.check(&write, ToolClass::Write).unwrap_err();
        assert_eq!(
            blocked.gate_label(),
            "strict_resolution",
            "nothing resolved after a reset"
        );
    }
}
