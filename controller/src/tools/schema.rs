//! The JSON schemas the model sees, derived from the [`table`](super::table): one object
//! per tool with `action` as an enum and every argument of any action; the description
//! says which action takes which arguments. A caller that may not write (an MCP viewer)
//! gets the same schemas narrowed to the actions of the classes it may use.

use serde_json::{Map, Value, json};

use super::class::ToolClass;
use super::table::{ArgKind, TOOLS};

/// `(name, description, JSON schema)` of every tool.
pub fn tool_specs() -> Vec<(String, String, Value)> {
    tool_specs_where(|_| true)
        .into_iter()
        .map(|spec| (spec.name, spec.description, spec.schema))
        .collect()
}

/// One tool's schema narrowed to some of its actions, and the classes of those actions.
#[derive(Debug, Clone)]
pub struct NarrowSpec {
    pub name: String,
    pub description: String,
    pub schema: Value,
    /// The classes of the offered actions.
    pub classes: Vec<ToolClass>,
}

/// The tools with only the actions whose class `offer` accepts (a tool left with no
/// action is not offered).
pub fn tool_specs_where(offer: impl Fn(ToolClass) -> bool) -> Vec<NarrowSpec> {
    TOOLS
        .iter()
        .filter_map(|tool| {
            let offered: Vec<_> = tool.actions.iter().filter(|a| offer(a.class)).collect();
            if offered.is_empty() {
                return None;
            }
            let mut properties = Map::new();
            let actions: Vec<&str> = offered.iter().map(|a| a.name).collect();
            properties.insert(
                "action".into(),
                json!({ "type": "string", "enum": actions }),
            );
            let mut lines = vec![tool.doc.to_owned(), "Actions:".to_owned()];
            for action in &offered {
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
            let mut classes: Vec<ToolClass> = offered.iter().map(|a| a.class).collect();
            classes.sort_by_key(|class| class.as_str());
            classes.dedup();
            Some(NarrowSpec {
                name: tool.name.to_owned(),
                description: lines.join("\n"),
                schema,
                classes,
            })
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

    #[test]
    fn narrowed_specs_offer_only_the_accepted_actions() {
        let specs = tool_specs_where(|class| class != ToolClass::Write);
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert!(!names.contains(&"control"), "{names:?}");
        let docker = specs.iter().find(|s| s.name == "docker").unwrap();
        assert_eq!(
            docker.schema["properties"]["action"]["enum"],
            json!(["list", "inspect", "logs"])
        );
        assert!(docker.schema["properties"].get("operation").is_none());
        assert!(!docker.classes.contains(&ToolClass::Write));
        let edit = specs.iter().find(|s| s.name == "file_edit").unwrap();
        assert_eq!(edit.schema["properties"]["action"]["enum"], json!(["read"]));
        assert!(edit.schema["properties"].get("content").is_none());
    }
}
