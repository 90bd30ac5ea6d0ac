//! Vendor formats written as text: DeepSeek's
//! `<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{…}\n```<｜tool▁call▁end｜>`
//! (and the later `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜>`), DeepSeek's
//! DSML `<｜DSML｜invoke name="NAME">` with `<｜DSML｜parameter …>` elements, and Mistral's
//! `[TOOL_CALLS] [{…}]` (and `[TOOL_CALLS]NAME[ARGS]{…}`). DeepSeek's markers are matched
//! with full-width and with ASCII bars.

use serde_json::{Map, Value};

use super::json::{arguments_text, calls_prefix, known_name, value_prefix};
use super::tagged::unfence;
use super::{Finds, RecoveredCall, normalize_arguments};

const MISTRAL: &str = "[TOOL_CALLS]";
const MISTRAL_ARGS: &str = "[ARGS]";
const MISTRAL_CALL_ID: &str = "[CALL_ID]";

/// DeepSeek's tool-call markers.
pub(super) fn find_deepseek(text: &str, tools: &[&str], finds: &mut Finds) {
    let mut from = 0;
    while let Some((start, head)) = find_any(text, from, "<｜tool▁call▁begin｜>") {
        from = head;
        let Some((sep, body)) = find_any(text, head, "<｜tool▁sep｜>") else {
            break;
        };
        let (body_end, end) = find_any(text, body, "<｜tool▁call▁end｜>")
            .or_else(|| find_any(text, body, "<｜tool▁calls▁end｜>").map(|(at, _)| (at, at)))
            .unwrap_or((text.len(), text.len()));
        let head_text = text[head..sep].trim();
        let body_text = &text[body..body_end];
        let (name, arguments) = if head_text == "function" || head_text.is_empty() {
            let body_text = body_text.trim_start();
            let line = body_text.find('\n').unwrap_or(body_text.len());
            (&body_text[..line], &body_text[line..])
        } else {
            (head_text, body_text)
        };
        if let Some(name) = known_name(name, tools) {
            let arguments = normalize_arguments(unfence(arguments.trim()));
            finds.add(start, end, vec![RecoveredCall { name, arguments }]);
        }
        from = end.max(from);
    }
}

/// DeepSeek's DSML `invoke` elements.
pub(super) fn find_dsml(text: &str, tools: &[&str], finds: &mut Finds) {
    let mut from = 0;
    while let Some((start, name_start)) = find_any(text, from, "<｜DSML｜invoke name=\"") {
        from = name_start;
        let Some(name_end) = text[name_start..].find('"').map(|at| at + name_start) else {
            break;
        };
        let Some(body) = text[name_end..].find('>').map(|at| at + name_end + 1) else {
            break;
        };
        let (body_end, end) =
            find_any(text, body, "</｜DSML｜invoke>").unwrap_or((text.len(), text.len()));
        if let Some(name) = known_name(&text[name_start..name_end], tools) {
            let arguments = dsml_parameters(&text[body..body_end]);
            finds.add(start, end, vec![RecoveredCall { name, arguments }]);
        }
        from = end.max(from);
    }
}

/// The arguments object of DSML `parameter` elements (`string="true"` values are text,
/// the others JSON).
fn dsml_parameters(body: &str) -> String {
    let mut arguments = Map::new();
    let mut from = 0;
    while let Some((_, key_start)) = find_any(body, from, "<｜DSML｜parameter name=\"") {
        let Some(key_end) = body[key_start..].find('"').map(|at| at + key_start) else {
            break;
        };
        let Some(value_start) = body[key_end..].find('>').map(|at| at + key_end + 1) else {
            break;
        };
        let is_string = body[key_end..value_start].contains("string=\"true\"");
        let (value_end, next) =
            find_any(body, value_start, "</｜DSML｜parameter>").unwrap_or((body.len(), body.len()));
        let raw = &body[value_start..value_end];
        let value = match serde_json::from_str::<Value>(raw.trim()) {
            Ok(value) if !is_string => value,
            _ => Value::String(raw.to_owned()),
        };
        arguments.insert(body[key_start..key_end].to_owned(), value);
        from = next;
    }
    Value::Object(arguments).to_string()
}

/// The first of `marker` (written with full-width bars) or its ASCII-bar twin in
/// `text[from..]`: where it starts and ends.
fn find_any(text: &str, from: usize, marker: &str) -> Option<(usize, usize)> {
    let ascii = marker.replace('｜', "|");
    [marker, ascii.as_str()]
        .iter()
        .filter_map(|marker| {
            text[from..]
                .find(marker)
                .map(|at| (from + at, from + at + marker.len()))
        })
        .min()
}

/// Mistral's `[TOOL_CALLS]`.
pub(super) fn find_mistral(text: &str, tools: &[&str], finds: &mut Finds) {
    let mut from = 0;
    while let Some(start) = text[from..].find(MISTRAL).map(|at| at + from) {
        let body = start + MISTRAL.len();
        let rest = &text[body..];
        let skipped = rest.len() - rest.trim_start().len();
        let found = if rest[skipped..].starts_with(['[', '{']) {
            calls_prefix(rest, tools)
        } else {
            named_call(rest, tools).map(|(call, used)| (vec![call], used))
        };
        from = body;
        if let Some((calls, used)) = found {
            finds.add(start, body + used, calls);
            from = body + used;
        }
    }
}

/// `NAME[ARGS]{…}` (optionally `NAME[CALL_ID]id[ARGS]{…}`) at the start of `text`; broken
/// arguments run to the next `[TOOL_CALLS]` or the end.
fn named_call(text: &str, tools: &[&str]) -> Option<(RecoveredCall, usize)> {
    let args = text.find(MISTRAL_ARGS)?;
    let name_end = text[..args].find(MISTRAL_CALL_ID).unwrap_or(args);
    let name = known_name(&text[..name_end], tools)?;
    let body = args + MISTRAL_ARGS.len();
    if let Some((value, used)) = value_prefix(&text[body..]) {
        let arguments = arguments_text(Some(&value));
        return Some((RecoveredCall { name, arguments }, body + used));
    }
    let end = text[body..]
        .find(MISTRAL)
        .map_or(text.len(), |at| at + body);
    let arguments = text[body..end].trim().to_owned();
    Some((RecoveredCall { name, arguments }, end))
}
