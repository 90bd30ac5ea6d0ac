//! Model quirks (docs/design.md §9, item 9), pure text handling for local models: tool
//! calls a model wrote into its text are recovered into real calls
//! ([`recover_tool_calls`]), and reasoning blocks and vendor artifacts are kept from the
//! user ([`VisibleText`]) and from the store ([`strip_reasoning`]).
//!
//! Recovered styles: a bare JSON call (or array of calls) that is the message or ends it
//! ([`plain`]), fenced code holding one ([`plain`]), tagged blocks — Hermes/Qwen
//! `<tool_call>`, `<tool_use>`, `<function_call>`, Phi `<|tool_call|>`, Llama 3.1
//! `<|python_tag|>` and `<function=NAME>`, Qwen3-Coder `<parameter=…>` — ([`tagged`]), and
//! the vendor formats of Mistral (`[TOOL_CALLS]`) and DeepSeek (`<｜tool▁call▁begin｜>`,
//! DSML) ([`vendor`]). A call's arguments that are not JSON are passed on raw, so the tool
//! answers `INVALID_INPUT` and the model can correct them.

mod artifacts;
mod json;
mod plain;
mod tagged;
mod vendor;
mod visible;

#[cfg(test)]
mod tests;

pub use json::normalize_arguments;
pub use visible::{VisibleText, strip_reasoning};

/// Tool calls recovered from an answer's text, and the text without them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// The text around the calls, without reasoning and artifacts, trimmed.
    pub text: String,
    /// The calls, in the order they were written.
    pub calls: Vec<RecoveredCall>,
}

/// One recovered call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveredCall {
    /// The tool's name, one of the known tools.
    pub name: String,
    /// JSON object text; if the model's arguments were not valid JSON, the raw text (the
    /// tool answers `INVALID_INPUT`).
    pub arguments: String,
}

/// Tool calls a model wrote into its text instead of the protocol's tool calls, recovered,
/// and the text without them. Only names in `tools` are recovered (anything else stays
/// text); reasoning blocks are never searched. `None` when the text holds no recoverable
/// call.
pub fn recover_tool_calls(text: &str, tools: &[&str]) -> Option<Recovered> {
    let text = visible::without_reasoning(text);
    let mut finds = Finds::default();
    vendor::find_deepseek(&text, tools, &mut finds);
    vendor::find_dsml(&text, tools, &mut finds);
    vendor::find_mistral(&text, tools, &mut finds);
    tagged::find_wrapped(&text, tools, &mut finds);
    tagged::find_functions(&text, tools, &mut finds);
    plain::find_fenced(&text, tools, &mut finds);
    plain::find_bare(&text, tools, &mut finds);
    if finds.0.is_empty() {
        return None;
    }
    finds.0.sort_by_key(|found| found.start);
    let rest = finds.outside(&text, 0, text.len());
    let calls = finds.0.into_iter().flat_map(|found| found.calls).collect();
    Some(Recovered {
        text: strip_reasoning(&rest).trim().to_owned(),
        calls,
    })
}

/// A stretch of the text that held calls.
#[derive(Debug)]
struct Found {
    start: usize,
    end: usize,
    calls: Vec<RecoveredCall>,
}

/// The stretches found so far; they never overlap.
#[derive(Debug, Default)]
struct Finds(Vec<Found>);

impl Finds {
    /// Records calls found in `start..end` unless that overlaps an earlier find.
    fn add(&mut self, start: usize, end: usize, calls: Vec<RecoveredCall>) {
        if !calls.is_empty() && self.covering(start, end).is_none() {
            self.0.push(Found { start, end, calls });
        }
    }

    /// The end of a find overlapping `start..end` (at least one byte of it).
    fn covering(&self, start: usize, end: usize) -> Option<usize> {
        let end = end.max(start + 1);
        self.0
            .iter()
            .find(|found| found.start < end && start < found.end)
            .map(|found| found.end)
    }

    /// The parts of `text[start..end]` outside every find.
    fn outside(&self, text: &str, start: usize, end: usize) -> String {
        let mut stretches: Vec<(usize, usize)> = self
            .0
            .iter()
            .map(|found| (found.start, found.end))
            .collect();
        stretches.sort_unstable();
        let mut rest = String::new();
        let mut at = start;
        for (from, to) in stretches {
            if to <= at || from >= end {
                continue;
            }
            rest.push_str(&text[at..from.max(at)]);
            at = to.min(end);
        }
        rest.push_str(&text[at.min(end)..end]);
        rest
    }
}
