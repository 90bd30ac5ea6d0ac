//! The tools an MCP client is offered: the assistant's tool table (one source for names,
//! arguments and schemas), narrowed to resolve and read actions for a viewer, with
//! annotations derived from the classes of the offered actions (`readOnlyHint` when all
//! read, `destructiveHint` when any writes), and `approval_status`. Annotations are advice
//! to the client: every call passes the gates whatever the client believes.

use std::sync::Arc;

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Value, json};

use crate::roles::Role;
use crate::tools::class::ToolClass;
use crate::tools::schema::tool_specs_where;

/// The tool that reports how an approval a call raised stands.
pub const APPROVAL_STATUS: &str = "approval_status";

/// The arguments of [`APPROVAL_STATUS`].
fn approval_status_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "approval_id": { "type": "string", "description": "the approval_id a write call answered with" }
        },
        "required": ["approval_id"],
        "additionalProperties": false,
    })
}

fn object(schema: Value) -> Arc<serde_json::Map<String, Value>> {
    match schema {
        Value::Object(map) => Arc::new(map),
        _ => Arc::default(),
    }
}

/// True when `role` is offered actions of `class` (a viewer only resolves and reads).
pub fn offers(role: Role, class: ToolClass) -> bool {
    role >= Role::Operator || class != ToolClass::Write
}

/// The tools `role` is offered, in the table's order, then [`APPROVAL_STATUS`].
pub fn tools_for(role: Role) -> Vec<Tool> {
    let mut tools: Vec<Tool> = tool_specs_where(|class| offers(role, class))
        .into_iter()
        .map(|spec| {
            let writes = spec.classes.contains(&ToolClass::Write);
            let annotations = ToolAnnotations::new()
                .read_only(!writes)
                .destructive(writes);
            Tool::new(spec.name, spec.description, object(spec.schema)).annotate(annotations)
        })
        .collect();
    tools.push(
        Tool::new(
            APPROVAL_STATUS,
            "How an approval a write raised stands: pending, approved, denied, expired or \
             withdrawn, and once it ran, its outcome (exit code and the end of its output). \
             A person decides approvals in Vigil's web page, its terminal chat or \
             `vigil-controller approvals`; nothing sent through MCP can decide one.",
            object(approval_status_schema()),
        )
        .annotate(ToolAnnotations::new().read_only(true).destructive(false)),
    );
    tools
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(tools: &[Tool]) -> Vec<String> {
        tools.iter().map(|t| t.name.to_string()).collect()
    }

    #[test]
    fn a_viewer_is_offered_no_write() {
        let viewer = tools_for(Role::Viewer);
        assert!(!names(&viewer).contains(&"control".to_owned()));
        for tool in &viewer {
            let hints = tool.annotations.as_ref().unwrap();
            assert_eq!(hints.read_only_hint, Some(true), "{}", tool.name);
            assert_eq!(hints.destructive_hint, Some(false), "{}", tool.name);
        }
        let docker = viewer.iter().find(|t| t.name == "docker").unwrap();
        assert_eq!(
            docker.input_schema["properties"]["action"]["enum"],
            json!(["list", "inspect", "logs"])
        );
    }

    #[test]
    fn an_operator_sees_every_tool_with_hints_from_its_classes() {
        let tools = tools_for(Role::Operator);
        assert_eq!(
            names(&tools),
            [
                "query",
                "read",
                "control",
                "file_edit",
                "docker",
                "kubernetes",
                "metrics",
                "knowledge",
                "approval_status"
            ]
        );
        let hint = |name: &str| {
            let tool = tools.iter().find(|t| t.name == name).unwrap();
            let a = tool.annotations.as_ref().unwrap();
            (a.read_only_hint, a.destructive_hint)
        };
        assert_eq!(hint("read"), (Some(true), Some(false)));
        assert_eq!(hint("query"), (Some(true), Some(false)));
        assert_eq!(hint("control"), (Some(false), Some(true)));
        assert_eq!(hint("file_edit"), (Some(false), Some(true)));
        assert_eq!(hint("approval_status"), (Some(true), Some(false)));
    }
}
