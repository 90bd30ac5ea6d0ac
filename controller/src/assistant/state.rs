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
    call.name() != "knowledge" && !call.name().starts_with(crate::mcp::external::PREFIX)
}

/// What a session remembers between turns, in memory and, at the end of each turn, in the
/// store ([`StoredState`]), so the next turn may run on another replica.
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
        // Vigil's own store and other MCP servers are not hosts a read could verify.
        if ok && tool != "knowledge" && !tool.starts_with(crate::mcp::external::PREFIX) {
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

    /// What is stored at the end of a turn (the loop guard is per turn and is not).
    pub fn to_stored(&self) -> StoredState {
        StoredState {
            fsm: self.fsm.clone(),
            context: self.context.to_stored(Instant::now()),
            knowledge: self.knowledge.clone(),
            turn: self.turn,
        }
    }

    /// The state a stored one describes.
    pub fn from_stored(stored: StoredState) -> Self {
        SessionState {
            fsm: stored.fsm,
            context: ResolvedContext::from_stored(stored.context, Instant::now()),
            loops: LoopGuard::default(),
            knowledge: stored.knowledge,
            turn: stored.turn,
        }
    }

    /// Forgets everything, FSM and context together.
    pub fn reset(&mut self) {
        *self = SessionState::default();
    }
}

/// A session's state as stored between turns (JSON in `chat_session_state`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct StoredState {
    fsm: SessionFsm,
    context: Vec<super::gates::context::StoredEntry>,
    knowledge: Knowledge,
    turn: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::call::parse_call;

    /// A write on a mentioned resource: the session is left verifying.
    fn wrote(state: &mut SessionState) -> ToolCall {
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
        write
    }

    #[test]
    fn the_stored_state_brings_back_the_fsm_the_context_and_the_turn() {
        let mut state = SessionState::default();
        state.begin_turn();
        let write = wrote(&mut state);
        let json = serde_json::to_string(&state.to_stored()).unwrap();
        let back = SessionState::from_stored(serde_json::from_str(&json).unwrap());
        assert_eq!(back.fsm_state(), FsmState::Verifying, "{json}");
        assert_eq!(back.turn, 1);
        assert!(!back.context.is_empty());
        let mut back = back;
        let blocked = back.check(&write, ToolClass::Write).unwrap_err();
        assert_eq!(
            blocked.gate_label(),
            "fsm_tool",
            "the write is still unverified"
        );
        let read = parse_call(
            "read",
            r#"{"action":"exec","resource_id":"homepage","command":"uptime"}"#,
        )
        .unwrap();
        back.check(&read, ToolClass::Read)
            .expect("a verifying read may run");
    }

    #[test]
    fn reset_clears_the_fsm_and_the_context_together() {
        let mut state = SessionState::default();
        let write = wrote(&mut state);
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
