//! Turns chat events into text, without doing any I/O: the streamed answer on one
//! channel, and compact notes (tool lines, approvals, errors) on another. In interactive
//! mode both go to standard output; in one-shot mode the notes go to standard error so
//! standard output holds only the answer.

use std::collections::HashMap;

use super::style::Style;
use super::summary::{WIDTH, approval_lines, shorten, tool_summary};
use crate::assistant::events::ChatEvent;

/// How many lines of a command's output are shown (the rest is counted).
pub const OUTPUT_LINES: usize = 3;

/// Where a piece of text goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// The model's answer.
    Answer,
    /// Everything else.
    Notes,
}

/// Text for one channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// Where it goes.
    pub channel: Channel,
    /// The text, newlines included.
    pub text: String,
}

#[derive(Debug, Default)]
struct ToolOutput {
    partial: String,
    shown: usize,
    hidden: usize,
}

/// The renderer of one conversation (state: the open answer line, tool output shown).
#[derive(Debug)]
pub struct Renderer {
    style: Style,
    merged: bool,
    answer_open: bool,
    /// `Some` while the answer is held back until the turn ends.
    held: Option<String>,
    outputs: HashMap<String, ToolOutput>,
    pieces: Vec<Piece>,
    /// A command's standard output is the answer (one-shot direct mode: `chat -m '/read
    /// @vm uname -s' > out.txt` captures it), whole and as it is.
    output_is_answer: bool,
}

impl Renderer {
    /// A renderer; `merged` when answer and notes share one stream (a note then starts on
    /// a new line).
    pub fn new(style: Style, merged: bool) -> Renderer {
        Renderer {
            style,
            merged,
            answer_open: false,
            held: None,
            outputs: HashMap::new(),
            pieces: Vec::new(),
            output_is_answer: false,
        }
    }

    /// Writes the standard output of the commands the turn runs as the answer, whole,
    /// instead of a few lines among the notes (one-shot direct mode: there is no model
    /// answer, the output is what was asked for). Their standard error stays a note.
    pub fn output_as_answer(mut self) -> Renderer {
        self.output_is_answer = true;
        self
    }

    /// Holds the answer back until `done`, so a withdrawn answer (`content_replaced`) never
    /// reaches the answer's stream (for a pipe, where nothing can be taken back).
    pub fn hold_answer(mut self) -> Renderer {
        self.held = Some(String::new());
        self
    }

    /// The style in use.
    pub fn style(&self) -> Style {
        self.style
    }

    /// The text rendered since the last call.
    pub fn take(&mut self) -> Vec<Piece> {
        std::mem::take(&mut self.pieces)
    }

    fn answer(&mut self, text: &str) {
        if let Some(held) = &mut self.held {
            held.push_str(text);
            return;
        }
        if text.is_empty() {
            return;
        }
        self.answer_open = !text.ends_with('\n');
        self.pieces.push(Piece {
            channel: Channel::Answer,
            text: text.to_owned(),
        });
    }

    /// A line of notes (started on a new line when the answer shares the stream).
    pub fn line(&mut self, text: &str) {
        if self.merged && self.answer_open {
            self.end_answer();
        }
        self.pieces.push(Piece {
            channel: Channel::Notes,
            text: format!("{text}\n"),
        });
    }

    /// Writes the held answer, if any.
    pub fn release(&mut self) {
        if let Some(held) = self.held.take() {
            self.answer(&held);
            self.held = Some(String::new());
        }
    }

    /// Ends the answer's open line, if any.
    pub fn end_answer(&mut self) {
        if std::mem::take(&mut self.answer_open) {
            self.pieces.push(Piece {
                channel: Channel::Answer,
                text: "\n".into(),
            });
        }
    }

    /// Renders one event.
    pub fn event(&mut self, event: &ChatEvent) {
        let style = self.style;
        match event {
            ChatEvent::Content { text } => self.answer(text),
            ChatEvent::ContentReplaced { text, reason } => {
                let note = if text.is_empty() {
                    format!("↺ answer withdrawn ({reason})")
                } else {
                    format!("↺ answer withdrawn ({reason}); instead:")
                };
                self.line(&style.yellow(&note));
                if let Some(held) = &mut self.held {
                    held.clear();
                }
                self.answer(text);
            }
            ChatEvent::ToolStart { name, input, .. } => {
                self.line(&style.bold(&format!("⚙ {}", tool_summary(name, input))));
            }
            ChatEvent::ToolOutput { text, stream, .. }
                if self.output_is_answer && stream == "stdout" =>
            {
                self.answer(text);
            }
            ChatEvent::ToolOutput {
                tool_call_id, text, ..
            } => self.tool_output(tool_call_id, text),
            ChatEvent::ToolEnd {
                tool_call_id,
                name,
                ok,
                error_code,
                duration_ms,
            } => {
                self.flush_output(tool_call_id);
                let line = if *ok {
                    style.green(&format!("✓ {name} ({duration_ms} ms)"))
                } else {
                    let code = error_code.as_deref().unwrap_or("FAILED");
                    style.red(&format!("✗ {name} {code} ({duration_ms} ms)"))
                };
                self.line(&line);
            }
            ChatEvent::ApprovalNeeded(needed) => {
                for line in approval_lines(needed, style) {
                    self.line(&line);
                }
            }
            ChatEvent::ApprovalResolved {
                decision, reason, ..
            } => {
                let reason = reason
                    .as_deref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default();
                let line = match decision.as_str() {
                    "approved" => style.green("✓ approved; running"),
                    "denied" => style.red(&format!("✗ denied{reason}")),
                    other => style.red(&format!("✗ approval {other}{reason}")),
                };
                self.line(&line);
            }
            ChatEvent::Error { code, message } => {
                self.line(&style.red(&format!("error: {code}: {message}")));
            }
            ChatEvent::Done { .. } => {
                self.release();
                self.end_answer();
            }
            ChatEvent::Session { .. } | ChatEvent::Unknown { .. } => {}
        }
    }

    fn tool_output(&mut self, id: &str, text: &str) {
        let output = self.outputs.entry(id.to_owned()).or_default();
        output.partial.push_str(text);
        let mut lines = Vec::new();
        while let Some(end) = output.partial.find('\n') {
            let line: String = output.partial.drain(..=end).collect();
            lines.push(line.trim_end().to_owned());
        }
        for line in lines {
            self.output_line(id, &line);
        }
    }

    fn output_line(&mut self, id: &str, line: &str) {
        let output = self.outputs.entry(id.to_owned()).or_default();
        if output.shown >= OUTPUT_LINES {
            output.hidden += 1;
            return;
        }
        output.shown += 1;
        let line = self.style.dim(&format!("  │ {}", shorten(line, WIDTH)));
        self.line(&line);
    }

    fn flush_output(&mut self, id: &str) {
        let partial = self
            .outputs
            .get_mut(id)
            .map(|o| std::mem::take(&mut o.partial))
            .unwrap_or_default();
        if !partial.trim().is_empty() {
            self.output_line(id, partial.trim_end());
        }
        if let Some(output) = self.outputs.remove(id)
            && output.hidden > 0
        {
            let more = self
                .style
                .dim(&format!("  │ … {} more lines", output.hidden));
            self.line(&more);
        }
    }
}

#[cfg(test)]
mod tests;
