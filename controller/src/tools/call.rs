//! Validating a model's tool call against the [`table`](super::table): the arguments must
//! be one JSON object with a known `action`, every required argument, nothing else, and
//! each of the right type. Anything else is [`InvalidCall`] (the tool answers
//! `INVALID_INPUT`, and the call is classified a write and never runs).

use serde_json::{Map, Value};

use super::table::{self, ArgKind};

/// A validated call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    name: String,
    action: String,
    args: Map<String, Value>,
}

/// Why a call is not valid, in a sentence for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidCall(pub String);

impl ToolCall {
    /// A call of an external MCP server's tool (`mcp__NAME__TOOL`), whose arguments its
    /// server validates; its action is `call`.
    pub fn external(name: &str, args: Map<String, Value>) -> ToolCall {
        ToolCall {
            name: name.to_owned(),
            action: "call".into(),
            args,
        }
    }

    /// The tool.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The action.
    pub fn action(&self) -> &str {
        &self.action
    }

    /// A string argument.
    pub fn text(&self, key: &str) -> Option<&str> {
        self.args.get(key).and_then(Value::as_str)
    }

    /// A number argument.
    pub fn number(&self, key: &str) -> Option<u64> {
        self.args.get(key).and_then(Value::as_u64)
    }

    /// The `resource_id` argument.
    pub fn resource_id(&self) -> Option<&str> {
        self.text("resource_id")
    }

    /// The arguments with keys sorted, as one string (loop detection).
    pub fn canonical(&self) -> String {
        let sorted: std::collections::BTreeMap<_, _> = self.args.iter().collect();
        format!(
            "{}:{}",
            self.name,
            serde_json::to_string(&sorted).unwrap_or_default()
        )
    }
}

/// Validates `arguments` (the model's raw JSON text) for tool `name`.
pub fn parse_call(name: &str, arguments: &str) -> Result<ToolCall, InvalidCall> {
    let invalid = |text: String| Err(InvalidCall(text));
    let Some(tool) = table::tool(name) else {
        let names = table::names();
        return invalid(format!(
            "unknown tool {name:?}; the tools are {}",
            names.join(", ")
        ));
    };
    let text = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    let args: Map<String, Value> = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => map,
        Ok(_) => return invalid("the arguments must be one JSON object".into()),
        Err(error) => return invalid(format!("the arguments are not valid JSON: {error}")),
    };
    let actions: Vec<&str> = tool.actions.iter().map(|a| a.name).collect();
    let Some(action_name) = args
        .get("action")
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        return invalid(format!(
            "{name} needs \"action\": one of {}",
            actions.join(", ")
        ));
    };
    let action_name = action_name.as_str();
    let Some(action) = table::action(name, action_name) else {
        return invalid(format!(
            "unknown action {action_name:?} of {name}; the actions are {}",
            actions.join(", ")
        ));
    };
    for key in args.keys().filter(|k| *k != "action") {
        if !action.args.iter().any(|a| a.name == key) {
            let allowed: Vec<&str> = action.args.iter().map(|a| a.name).collect();
            return invalid(format!(
                "unknown argument {key:?} for {name} {action_name}; it takes {}",
                if allowed.is_empty() {
                    "no arguments".into()
                } else {
                    allowed.join(", ")
                }
            ));
        }
    }
    for arg in action.args {
        match (args.get(arg.name), arg.required) {
            (None | Some(Value::Null), true) => {
                return invalid(format!(
                    "{name} {action_name} needs {:?} ({})",
                    arg.name, arg.doc
                ));
            }
            (None | Some(Value::Null), false) => {}
            (Some(value), _) => check_type(name, action_name, arg.name, arg.kind, value)?,
        }
    }
    let mut args = args;
    args.remove("action");
    args.retain(|_, v| !v.is_null());
    Ok(ToolCall {
        name: name.to_owned(),
        action: action_name.to_owned(),
        args,
    })
}

fn check_type(
    tool: &str,
    action: &str,
    key: &str,
    kind: ArgKind,
    value: &Value,
) -> Result<(), InvalidCall> {
    let wrong = |what: String| Err(InvalidCall(format!("{tool} {action}: {key:?} {what}")));
    match kind {
        ArgKind::Text { max } => match value.as_str() {
            Some(s) if s.trim().is_empty() => wrong("is empty".into()),
            Some(s) if s.len() > max => wrong(format!("is longer than {max} bytes")),
            Some(s) if s.contains('\0') => wrong("contains a NUL byte".into()),
            Some(_) => Ok(()),
            None => wrong("must be a string".into()),
        },
        ArgKind::Int { min, max } => match value.as_u64() {
            Some(n) if (min..=max).contains(&n) => Ok(()),
            _ => wrong(format!("must be a whole number from {min} to {max}")),
        },
        ArgKind::OneOf(values) => match value.as_str() {
            Some(s) if values.contains(&s) => Ok(()),
            _ => wrong(format!("must be one of {}", values.join(", "))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_calls_parse() {
        let call = parse_call(
            "read",
            r#"{"action":"exec","resource_id":"lxc:delly:141","command":"uptime"}"#,
        )
        .unwrap();
        assert_eq!(
            (call.name(), call.action(), call.resource_id()),
            ("read", "exec", Some("lxc:delly:141"))
        );
        assert_eq!(call.text("command"), Some("uptime"));
        let tail = parse_call(
            "read",
            r#"{"action":"tail","resource_id":"x","path":"/var/log/syslog","lines":50}"#,
        )
        .unwrap();
        assert_eq!(tail.number("lines"), Some(50));
        assert!(parse_call("query", r#"{"action":"health"}"#).is_ok());
        assert!(parse_call("query", r#"{"action":"list","kind":null}"#).is_ok());
    }

    #[test]
    fn invalid_calls_say_why() {
        let cases = [
            ("shell", r#"{"action":"exec"}"#, "unknown tool"),
            (
                "read",
                r#"{"action":"exec","resource_id":"x","command":"ls""#,
                "not valid JSON",
            ),
            ("read", r#"["exec"]"#, "one JSON object"),
            ("read", r#"{"resource_id":"x"}"#, "needs \"action\""),
            (
                "read",
                r#"{"action":"run","resource_id":"x"}"#,
                "unknown action",
            ),
            (
                "read",
                r#"{"action":"exec","resource_id":"x"}"#,
                "needs \"command\"",
            ),
            (
                "read",
                r#"{"action":"exec","resource_id":"x","command":"ls","sudo":true}"#,
                "unknown argument",
            ),
            (
                "read",
                r#"{"action":"exec","resource_id":"x","command":42}"#,
                "must be a string",
            ),
            (
                "read",
                r#"{"action":"exec","resource_id":"x","command":"  "}"#,
                "is empty",
            ),
            (
                "read",
                r#"{"action":"tail","resource_id":"x","path":"/f","lines":0}"#,
                "whole number",
            ),
            (
                "read",
                r#"{"action":"tail","resource_id":"x","path":"/f","lines":"5"}"#,
                "whole number",
            ),
            (
                "control",
                r#"{"action":"guest","resource_id":"x","operation":"destroy"}"#,
                "one of",
            ),
        ];
        for (tool, args, expected) in cases {
            let error = parse_call(tool, args).unwrap_err().0;
            assert!(error.contains(expected), "{tool} {args}: {error}");
        }
    }

    #[test]
    fn canonical_form_ignores_key_order() {
        let a = parse_call(
            "read",
            r#"{"action":"exec","resource_id":"x","command":"ls"}"#,
        )
        .unwrap();
        let b = parse_call(
            "read",
            r#"{"command":"ls","resource_id":"x","action":"exec"}"#,
        )
        .unwrap();
        assert_eq!(a.canonical(), b.canonical());
    }
}
