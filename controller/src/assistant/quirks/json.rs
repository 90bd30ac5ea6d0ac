//! Reading a tool call out of JSON the model wrote: the shapes small models use for a call,
//! arguments given as an object or as JSON inside a string, and a call whose JSON is broken
//! (its arguments are kept raw so that the tool answers `INVALID_INPUT`).

use serde_json::{Deserializer, Map, Value};

use super::RecoveredCall;

/// Keys that name the tool, in the order they are tried.
const NAME_KEYS: [&str; 4] = ["name", "tool", "tool_name", "function"];
/// Keys that hold the arguments, in the order they are tried.
const ARGUMENT_KEYS: [&str; 7] = [
    "arguments",
    "parameters",
    "args",
    "input",
    "tool_input",
    "params",
    "argument",
];
/// Keys of a call object that are never arguments in the flat shape.
const ENVELOPE_KEYS: [&str; 7] = [
    "name",
    "tool",
    "tool_name",
    "function",
    "type",
    "id",
    "index",
];

/// The tool `name` refers to, when it is one of `tools` (`functions.read` is `read`).
pub(super) fn known_name(name: &str, tools: &[&str]) -> Option<String> {
    let name = name.trim();
    let name = name.strip_prefix("functions.").unwrap_or(name);
    tools
        .iter()
        .find(|tool| **tool == name)
        .map(|tool| (*tool).to_owned())
}

/// Arguments as the tool should see them: a JSON object's text; JSON encoded twice (a
/// string holding the object) is unwrapped, nothing at all is `{}`, and anything that is
/// not JSON is left as it is so that the tool answers `INVALID_INPUT`.
pub fn normalize_arguments(raw: &str) -> String {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return "{}".to_owned();
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(value) => arguments_text(Some(&value)),
        Err(_) => raw.to_owned(),
    }
}

/// The arguments text of an arguments value (`None` and `null` are `{}`).
pub(super) fn arguments_text(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "{}".to_owned(),
        Some(Value::String(inner)) => normalize_arguments(inner),
        Some(other) => other.to_string(),
    }
}

/// The first JSON value at the start of `text` (leading whitespace allowed) and the byte
/// offset just past it.
pub(super) fn value_prefix(text: &str) -> Option<(Value, usize)> {
    let mut values = Deserializer::from_str(text).into_iter::<Value>();
    match values.next() {
        Some(Ok(value)) => Some((value, values.byte_offset())),
        _ => None,
    }
}

/// The calls in the JSON values at the start of `text` (separated by whitespace, `,` or
/// `;`), and the byte offset past the last one; `None` when the first value is not a call.
/// A value that is not a call ends the run.
pub(super) fn calls_prefix(text: &str, tools: &[&str]) -> Option<(Vec<RecoveredCall>, usize)> {
    let mut calls = Vec::new();
    let mut end = 0;
    let mut at = 0;
    while let Some((value, used)) = value_prefix(&text[at..]) {
        let Some(found) = calls_from_value(&value, tools) else {
            break;
        };
        calls.extend(found);
        end = at + used;
        at = end + separator_len(&text[end..]);
    }
    (!calls.is_empty()).then_some((calls, end))
}

/// The calls when all of `text` is JSON values that are calls to known tools.
pub(super) fn calls_whole(text: &str, tools: &[&str]) -> Option<Vec<RecoveredCall>> {
    let (calls, end) = calls_prefix(text, tools)?;
    text[end..].trim().is_empty().then_some(calls)
}

/// The length of the whitespace and `,`/`;` separators at the start of `text`.
fn separator_len(text: &str) -> usize {
    text.len()
        - text
            .trim_start_matches(|c: char| c.is_whitespace() || c == ',' || c == ';')
            .len()
}

/// The calls a JSON value holds: one call object, a non-empty array of them, or
/// `{"tool_calls": [...]}`. Every one must name a known tool.
pub(super) fn calls_from_value(value: &Value, tools: &[&str]) -> Option<Vec<RecoveredCall>> {
    match value {
        Value::Array(items) if !items.is_empty() => items
            .iter()
            .map(|item| {
                item.as_object()
                    .and_then(|object| call_from_object(object, tools))
            })
            .collect(),
        Value::Object(object) => match object.get("tool_calls") {
            Some(inner @ Value::Array(_)) => calls_from_value(inner, tools),
            _ => call_from_object(object, tools).map(|call| vec![call]),
        },
        _ => None,
    }
}

/// One call object: `{name|tool|tool_name: N, arguments|parameters|args|input: A}`,
/// `{"function": {"name": N, "arguments": A}}`, or the flat `{name: N, action: …, …}`.
fn call_from_object(object: &Map<String, Value>, tools: &[&str]) -> Option<RecoveredCall> {
    if let Some(Value::Object(function)) = object.get("function") {
        return call_from_object(function, tools);
    }
    let name = NAME_KEYS
        .iter()
        .find_map(|key| object.get(*key).and_then(Value::as_str))
        .and_then(|name| known_name(name, tools))?;
    if let Some(arguments) = ARGUMENT_KEYS.iter().find_map(|key| object.get(*key)) {
        return Some(RecoveredCall {
            name,
            arguments: arguments_text(Some(arguments)),
        });
    }
    if !object.contains_key("action") {
        return None;
    }
    let flat: Map<String, Value> = object
        .iter()
        .filter(|(key, _)| !ENVELOPE_KEYS.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    Some(RecoveredCall {
        name,
        arguments: Value::Object(flat).to_string(),
    })
}

/// A call whose JSON does not parse, read loosely: the string after `"name":` (or another
/// name key) must be a known tool; the arguments are the raw text after the arguments key,
/// without the object's closing brace.
pub(super) fn salvage(body: &str, tools: &[&str]) -> Option<RecoveredCall> {
    let name = NAME_KEYS
        .iter()
        .find_map(|key| string_after_key(body, key))?;
    let name = known_name(&name, tools)?;
    let arguments = ARGUMENT_KEYS
        .iter()
        .find_map(|key| after_key(body, key))
        .map(loose_arguments)
        .unwrap_or_else(|| "{}".to_owned());
    Some(RecoveredCall { name, arguments })
}

/// Arguments cut out of a broken call: the value when it parses (and only closing braces
/// follow it), else the raw text without the call object's closing brace.
fn loose_arguments(rest: &str) -> String {
    let rest = rest.trim();
    if let Some((value, used)) = value_prefix(rest)
        && rest[used..]
            .trim_matches(|c: char| c == '}' || c.is_whitespace())
            .is_empty()
    {
        return arguments_text(Some(&value));
    }
    rest.strip_suffix('}').unwrap_or(rest).trim_end().to_owned()
}

/// The text after `"key":` in `body`.
fn after_key<'a>(body: &'a str, key: &str) -> Option<&'a str> {
    let quoted = format!("\"{key}\"");
    let start = body.find(&quoted)? + quoted.len();
    body[start..].trim_start().strip_prefix(':')
}

/// The JSON string value after `"key":` in `body`.
fn string_after_key(body: &str, key: &str) -> Option<String> {
    let rest = after_key(body, key)?.trim_start();
    match value_prefix(rest) {
        Some((Value::String(text), _)) => Some(text),
        _ => None,
    }
}
