//! Calls in tagged blocks: a wrapper tag around JSON (Hermes/Qwen `<tool_call>`,
//! `<tool_use>`, `<function_call>`, `<functioncall>`, Phi `<|tool_call|>`, Llama 3.1
//! `<|python_tag|>`), Llama's `<function=NAME>{…}</function>` and Qwen3-Coder's
//! `<function=NAME><parameter=KEY>value</parameter></function>`. A missing closing tag is
//! tolerated: the block then ends with its JSON.

use serde_json::{Map, Value};

use super::json::{arguments_text, calls_prefix, calls_whole, known_name, salvage, value_prefix};
use super::{Finds, RecoveredCall, normalize_arguments};

/// A wrapper's opening tag and the tags that may close it.
const WRAPPERS: &[(&str, &[&str])] = &[
    ("<tool_call>", &["</tool_call>"]),
    ("<tool_calls>", &["</tool_calls>"]),
    ("<tool_use>", &["</tool_use>"]),
    ("<function_call>", &["</function_call>"]),
    ("<functioncall>", &["</functioncall>"]),
    ("<|tool_call|>", &["<|/tool_call|>"]),
    ("<|python_tag|>", &["<|eom_id|>", "<|eot_id|>"]),
];

const FUNCTION: &str = "<function=";
const FUNCTION_END: &str = "</function>";
const PARAMETER: &str = "<parameter=";
const PARAMETER_END: &str = "</parameter>";

/// Calls in wrapper tags.
pub(super) fn find_wrapped(text: &str, tools: &[&str], finds: &mut Finds) {
    for (open, closes) in WRAPPERS {
        let mut from = 0;
        while let Some(start) = text[from..].find(open).map(|at| at + from) {
            let body = start + open.len();
            let next_open = text[body..].find(open).map(|at| at + body);
            let close = closes
                .iter()
                .filter_map(|close| text[body..].find(close).map(|at| (at + body, close.len())))
                .min_by_key(|(at, _)| *at)
                .filter(|(at, _)| next_open.is_none_or(|next| *at < next));
            let (end, calls) = match close {
                Some((at, len)) => (at + len, body_calls(&text[body..at], tools)),
                None => match body_prefix(&text[body..], tools) {
                    Some((calls, used)) => (body + used, Some(calls)),
                    None => (body, None),
                },
            };
            if let Some(calls) = calls {
                finds.add(start, end, calls);
            }
            from = end;
        }
    }
}

/// Calls in `<function=NAME>` blocks outside any wrapper.
pub(super) fn find_functions(text: &str, tools: &[&str], finds: &mut Finds) {
    let mut from = 0;
    while let Some(start) = text[from..].find(FUNCTION).map(|at| at + from) {
        from = start + FUNCTION.len();
        if let Some(end) = finds.covering(start, from) {
            from = end;
            continue;
        }
        if let Some((call, used)) = function_block(&text[start..], tools) {
            finds.add(start, start + used, vec![call]);
            from = start + used;
        }
    }
}

/// The calls of a whole wrapper body: fenced or bare JSON, `<function=…>` blocks, or a
/// broken call object whose name is still readable.
fn body_calls(body: &str, tools: &[&str]) -> Option<Vec<RecoveredCall>> {
    let body = unfence(body.trim());
    if body.starts_with(FUNCTION) {
        let mut calls = Vec::new();
        let mut rest = body;
        while !rest.is_empty() {
            let (call, used) = function_block(rest, tools)?;
            calls.push(call);
            rest = rest[used..].trim_start();
        }
        return Some(calls);
    }
    calls_whole(body, tools).or_else(|| salvage(body, tools).map(|call| vec![call]))
}

/// The calls at the start of an unclosed wrapper body, and how many bytes they take.
fn body_prefix(text: &str, tools: &[&str]) -> Option<(Vec<RecoveredCall>, usize)> {
    let skipped = text.len() - text.trim_start().len();
    if text[skipped..].starts_with(FUNCTION) {
        let (call, used) = function_block(&text[skipped..], tools)?;
        return Some((vec![call], skipped + used));
    }
    calls_prefix(text, tools)
}

/// The body of a fenced code block, or `text` itself.
pub(super) fn unfence(text: &str) -> &str {
    let Some(opened) = text.strip_prefix("```") else {
        return text;
    };
    let body = opened.find('\n').map_or("", |at| &opened[at + 1..]);
    body.trim_end().strip_suffix("```").unwrap_or(body).trim()
}

/// The call of the `<function=NAME>` block at the start of `text`, and its length.
fn function_block(text: &str, tools: &[&str]) -> Option<(RecoveredCall, usize)> {
    let after = text.strip_prefix(FUNCTION)?;
    let name_end = after.find('>')?;
    let name = known_name(
        after[..name_end].trim_matches(|c: char| c == '"' || c == '\''),
        tools,
    )?;
    let body = FUNCTION.len() + name_end + 1;
    let rest = &text[body..];
    match rest.find(FUNCTION_END) {
        Some(at) => {
            let arguments = function_arguments(rest[..at].trim());
            Some((
                RecoveredCall { name, arguments },
                body + at + FUNCTION_END.len(),
            ))
        }
        None => {
            let (value, used) = value_prefix(rest)?;
            let arguments = arguments_text(Some(&value));
            Some((RecoveredCall { name, arguments }, body + used))
        }
    }
}

/// A function block's arguments: `<parameter=…>` elements or JSON (raw when broken).
fn function_arguments(body: &str) -> String {
    if !body.starts_with(PARAMETER) {
        return normalize_arguments(body);
    }
    let mut arguments = Map::new();
    let mut rest = body;
    while let Some(at) = rest.find(PARAMETER) {
        let after = &rest[at + PARAMETER.len()..];
        let Some(key_end) = after.find('>') else {
            break;
        };
        let key = after[..key_end].trim().to_owned();
        let value_text = &after[key_end + 1..];
        let value_end = [PARAMETER_END, PARAMETER]
            .iter()
            .filter_map(|tag| value_text.find(tag))
            .min()
            .unwrap_or(value_text.len());
        arguments.insert(key, parameter_value(value_text[..value_end].trim()));
        rest = value_text[value_end..]
            .strip_prefix(PARAMETER_END)
            .unwrap_or(&value_text[value_end..]);
    }
    Value::Object(arguments).to_string()
}

/// A parameter's value: JSON when it reads as JSON (numbers, booleans, objects), else text.
fn parameter_value(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}
