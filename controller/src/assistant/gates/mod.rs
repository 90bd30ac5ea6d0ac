//! The session's gates, pure logic with no I/O (the clock is passed in): the FSM
//! ([`fsm`]), the resolved context ([`context`]), strict resolution and the routing check
//! ([`routing`]), and loop detection ([`loops`]). A refusal is a [`GateBlock`], which
//! becomes the tool's envelope and a count in `/metrics`.

pub mod context;
pub mod fsm;
pub mod loops;
pub mod routing;

use serde_json::{Value, json};

use crate::tools::envelope::{Envelope, ErrorCode};

/// A gate's refusal of a tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct GateBlock {
    /// The envelope's code.
    pub code: ErrorCode,
    /// A sentence for the model.
    pub message: String,
    /// What to do instead.
    pub recovery_hint: String,
    /// True when the loop may retry the call with the fix in `details`.
    pub auto_recoverable: bool,
    /// Extra details (`suggested_target`, `candidates`, `state`, …).
    pub details: Value,
    /// The metric label of the gate.
    pub gate: &'static str,
}

impl GateBlock {
    /// A block by `gate` with `code`.
    pub fn new(
        gate: &'static str,
        code: ErrorCode,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        GateBlock {
            code,
            message: message.into(),
            recovery_hint: hint.into(),
            auto_recoverable: false,
            details: json!({}),
            gate,
        }
    }

    /// The metric label (`fsm_tool`, `strict_resolution`, `routing_mismatch`, `loop_detected`).
    pub fn gate_label(&self) -> &'static str {
        self.gate
    }

    /// The tool's answer.
    pub fn into_envelope(self) -> Envelope {
        let mut details = match self.details {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        details.insert("recovery_hint".into(), Value::String(self.recovery_hint));
        details.insert(
            "auto_recoverable".into(),
            Value::Bool(self.auto_recoverable),
        );
        Envelope::blocked(self.code, self.message, Value::Object(details))
    }
}

/// A running resource for tests: `id`, `name`, `parent`, no paths or facts.
#[cfg(test)]
pub(crate) fn test_resource(
    id: &str,
    name: &str,
    parent: Option<&str>,
) -> vigil_shared::resource::Resource {
    let id: vigil_shared::resource::ResourceId = id.parse().expect("resource id");
    vigil_shared::resource::Resource {
        kind: id.kind(),
        id,
        name: name.into(),
        aliases: Vec::new(),
        parent: parent.map(|p| p.parse().expect("parent id")),
        status: "running".into(),
        paths: Vec::new(),
        facts: Default::default(),
    }
}
