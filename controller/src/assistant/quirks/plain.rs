//! Calls written as plain JSON: in fenced code (```` ```json ````, a bare ```` ``` ````, any
//! language tag) whose whole body is calls to known tools, and bare JSON objects or arrays
//! of calls that end the message or make up most of it. JSON in prose that goes on after
//! it, a config file in a code block, or an unknown tool name stay text.

use super::json::{calls_from_value, calls_whole, salvage, value_prefix};
use super::{Finds, Found, strip_reasoning};

const FENCE: &str = "```";

/// Calls in fenced code blocks.
pub(super) fn find_fenced(text: &str, tools: &[&str], finds: &mut Finds) {
    let mut from = 0;
    while let Some(open) = text[from..].find(FENCE).map(|at| at + from) {
        let Some(body) = text[open..].find('\n').map(|at| at + open + 1) else {
            break;
        };
        let Some(close) = text[body..].find(FENCE).map(|at| at + body) else {
            break;
        };
        let end = close + FENCE.len();
        if finds.covering(open, end).is_none()
            && let Some(calls) = calls_whole(&text[body..close], tools)
        {
            finds.add(open, end, calls);
        }
        from = end;
    }
}

/// Bare JSON calls outside the blocks already found: the run of calls that ends the
/// message, or all of them when they are most of it. A message that is one broken call
/// object naming a known tool is recovered with its raw arguments.
pub(super) fn find_bare(text: &str, tools: &[&str], finds: &mut Finds) {
    let candidates = candidates(text, tools, finds);
    if candidates.is_empty() {
        let whole = text.trim();
        if finds.0.is_empty()
            && whole.starts_with('{')
            && whole.ends_with('}')
            && let Some(call) = salvage(whole, tools)
        {
            finds.add(0, text.len(), vec![call]);
        }
        return;
    }
    let mut accepted = candidates.len();
    let mut tail = text.len();
    for (index, found) in candidates.iter().enumerate().rev() {
        if !ignorable(&finds.outside(text, found.end, tail)) {
            break;
        }
        accepted = index;
        tail = found.start;
    }
    if accepted == candidates.len() {
        let calls: usize = candidates
            .iter()
            .map(|found| visible_len(&text[found.start..found.end]))
            .sum();
        let prose = visible_len(&finds.outside(text, 0, text.len())).saturating_sub(calls);
        if prose <= calls {
            accepted = 0;
        }
    }
    for found in candidates.into_iter().skip(accepted) {
        finds.add(found.start, found.end, found.calls);
    }
}

/// Every top-level JSON value outside `finds` that is a call or an array of calls.
fn candidates(text: &str, tools: &[&str], finds: &Finds) -> Vec<Found> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(start) = text[at..].find(['{', '[']).map(|offset| offset + at) {
        if let Some(end) = finds.covering(start, start + 1) {
            at = end;
            continue;
        }
        let Some((value, used)) = value_prefix(&text[start..]) else {
            at = start + 1;
            continue;
        };
        let end = start + used;
        if let Some(calls) = calls_from_value(&value, tools) {
            found.push(Found { start, end, calls });
        }
        at = end;
    }
    found
}

/// True when `text` holds nothing but whitespace, separators and artifacts.
fn ignorable(text: &str) -> bool {
    strip_reasoning(text)
        .trim_matches(|c: char| c.is_whitespace() || c == ',' || c == ';')
        .is_empty()
}

/// The bytes of `text` that are not whitespace.
fn visible_len(text: &str) -> usize {
    text.chars()
        .filter(|c| !c.is_whitespace())
        .map(char::len_utf8)
        .sum()
}
