//! One-line summaries of tool calls and the lines that show an approval, for
//! [`super::render`].

use serde_json::Value;

use super::style::Style;
use crate::assistant::events::ApprovalNeeded;

/// How many lines of an approval's diff are shown.
const DIFF_LINES: usize = 60;
/// The longest tool summary or output line shown, in characters.
pub const WIDTH: usize = 100;

/// `read exec host:abc `uptime``: the tool, its action, resource and main argument.
pub fn tool_summary(name: &str, input: &Value) -> String {
    let mut parts = vec![name.to_owned()];
    if let Value::String(raw) = input {
        parts.push(raw.clone());
    }
    for key in ["action", "resource_id", "kind", "parent", "path", "name"] {
        if let Some(value) = input[key].as_str() {
            parts.push(value.to_owned());
        }
    }
    for key in ["service", "operation", "query", "key"] {
        if let Some(value) = input[key].as_str() {
            parts.push(value.to_owned());
        }
    }
    if let Some(command) = input["command"].as_str() {
        parts.push(format!("`{command}`"));
    }
    shorten(&parts.join(" "), WIDTH)
}

/// What a person needs to decide an approval.
pub fn approval_lines(needed: &ApprovalNeeded, style: Style) -> Vec<String> {
    let mut lines = vec![
        style.yellow(&format!("⚠ approval needed: {}", needed.command)),
        format!("  target: {}  risk: {}", needed.target, needed.risk),
    ];
    for reason in &needed.reasons {
        lines.push(format!("  reason: {reason}"));
    }
    if let Some(diff) = needed.diff.as_deref().filter(|d| !d.trim().is_empty()) {
        lines.push("  diff:".into());
        let all: Vec<&str> = diff.lines().collect();
        for line in all.iter().take(DIFF_LINES) {
            let painted = match line.chars().next() {
                Some('+') if !line.starts_with("+++") => style.green(line),
                Some('-') if !line.starts_with("---") => style.red(line),
                _ => (*line).to_owned(),
            };
            lines.push(format!("    {painted}"));
        }
        if all.len() > DIFF_LINES {
            lines.push(format!("    … {} more lines", all.len() - DIFF_LINES));
        }
    }
    lines.push(style.dim(&format!("  approval {}", needed.approval_id)));
    lines
}

/// `text` on one line, cut to `max` characters with an ellipsis.
pub fn shorten(text: &str, max: usize) -> String {
    let flat = text.replace(['\n', '\r'], " ");
    if flat.chars().count() <= max {
        return flat;
    }
    let mut cut: String = flat.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}
