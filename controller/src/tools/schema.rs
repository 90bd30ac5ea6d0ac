//! The JSON schemas the model sees, derived from the [`table`](super::table): one object
//! per tool with `action` as an enum and every argument of any action; the description
//! says which action takes which arguments.

use serde_json::{Map, Value, json};

use super::table::{ArgKind, TOOLS};

/// `(name, description, JSON schema)` of every tool.
pub fn tool_specs() -> Vec<(String, String, Value)> {
    TOOLS
        .iter()
        .map(|tool| {
            let mut properties = Map::new();
            let actions: Vec<&str> = tool.actions.iter().map(|a| a.name).collect();
            properties.insert(
                "action".into(),
                json!({ "type": "string", "enum": actions }),
            );
            let mut lines = vec![tool.doc.to_owned(), "Actions:".to_owned()];
            for action in tool.actions {
                let args: Vec<String> = action
                    .args
                    .iter()
                    .map(|a| {
                        if a.required {
                            a.name.to_owned()
                        } else {
                            format!("{}?", a.name)
                        }
                    })
                    .collect();
                lines.push(format!(
                    "- {}({}): {}",
                    action.name,
                    args.join(", "),
                    action.doc
                ));
                for arg in action.args {
                    properties
                        .entry(arg.name)
                        .or_insert_with(|| property(arg.kind, arg.doc));
                }
            }
            let schema = json!({
                "type": "object",
                "properties": properties,
                "required": ["action"],
                "additionalProperties": false,
            });
            (tool.name.to_owned(), lines.join("\n"), schema)
        })
        .collect()
}

fn property(kind: ArgKind, doc: &str) -> Value {
    match kind {
        ArgKind::Text { .. } => json!({ "type": "string", "description": doc }),
        ArgKind::Int { min, max } => {
            json!({ "type": "integer", "minimum": min, "maximum": max, "description": doc })
        }
        ArgKind::OneOf(values) => json!({ "type": "string", "enum": values, "description": doc }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_a_closed_object_schema() {
        let specs = tool_specs();
        let names: Vec<&str> = specs.iter().map(|(n, _, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "query",
                "read",
                "control",
                "file_edit",
                "docker",
                "kubernetes",
                "metrics",
                "knowledge"
            ]
        );
        for (name, description, schema) in &specs {
            assert_eq!(schema["additionalProperties"], false, "{name}");
            assert!(
                schema["properties"]["action"]["enum"]
                    .as_array()
                    .is_some_and(|a| !a.is_empty())
            );
            assert!(description.contains("Actions:"));
        }
        let read = &specs[1].2;
        assert_eq!(read["properties"]["lines"]["type"], "integer");
    }
}
