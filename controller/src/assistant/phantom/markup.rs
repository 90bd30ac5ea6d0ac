//! Tool-call markup written into an answer instead of a real call.

use serde_json::Value;

use super::{Executed, Unsupported};

/// Text markers of tool calls in the formats local models use.
const MARKERS: &[&str] = &[
    "<tool_call",
    "[tool_calls]",
    "<function_call",
    "<|tool_call",
    "<function=",
    "<invoke",
    "<|python_tag|>",
    "<tool_use",
];

const REASON: &str = "it contains tool-call markup for a call that was never made";

/// Tool-call markup in `answer` that names no call this turn executed.
pub(crate) fn markup(answer: &str, executed: &[Executed]) -> Vec<Unsupported> {
    let lower = answer.to_lowercase();
    let mut out = Vec::new();
    let mut starts: Vec<usize> = MARKERS
        .iter()
        .filter_map(|marker| lower.find(marker))
        .collect();
    let arguments = lower
        .find("\"arguments\"")
        .or_else(|| lower.find("\"parameters\""));
    if let Some(at) = arguments.filter(|_| lower.contains("\"name\"")) {
        starts.push(lower[..at].rfind('{').unwrap_or(at));
    }
    starts.sort_unstable();
    if let Some(&start) = starts.first() {
        let window: String = lower[start..].chars().take(300).collect();
        let tools = crate::tools::table::names();
        let named = tools.iter().find(|tool| names(&window, tool));
        let ran = named.is_some_and(|tool| executed.iter().any(|e| e.tool == *tool));
        if !ran {
            out.push(Unsupported {
                reason: REASON,
                claim: window.chars().take(120).collect(),
            });
        }
    }
    for block in fences(answer) {
        let Ok(Value::Object(call)) = serde_json::from_str::<Value>(block.trim()) else {
            continue;
        };
        let key = |k: &str| call.contains_key(k);
        let is_call = (key("name") && (key("arguments") || key("parameters") || key("input")))
            || (key("tool") && key("action"))
            || (key("action") && key("resource_id"));
        if !is_call || out.iter().any(|u| u.reason == REASON) {
            continue;
        }
        let text = |k: &str| call.get(k).and_then(Value::as_str).unwrap_or_default();
        let tool = if key("tool") {
            text("tool")
        } else {
            text("name")
        };
        let ran = executed.iter().any(|e| {
            (tool.is_empty() || e.tool == tool)
                && (text("action").is_empty() || e.action == text("action"))
        });
        if !ran {
            out.push(Unsupported {
                reason: REASON,
                claim: block.trim().chars().take(120).collect(),
            });
        }
    }
    out
}

/// Whether `window` names `tool` as a quoted string or after `function=`/`name=`.
fn names(window: &str, tool: &str) -> bool {
    window.contains(&format!("\"{tool}\""))
        || window.contains(&format!("function={tool}"))
        || window.contains(&format!("name=\"{tool}\""))
        || window.contains(&format!("name={tool}"))
}

/// The contents of the fenced blocks of `answer`.
fn fences(answer: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in answer.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            match current.take() {
                Some(block) => out.push(block),
                None => current = Some(String::new()),
            }
            continue;
        }
        if let Some(block) = current.as_mut() {
            block.push_str(line);
            block.push('\n');
        }
    }
    out
}
