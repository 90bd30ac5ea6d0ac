//! Writes what [`Renderer`] produced: the answer to standard output, notes to standard
//! output too (interactive) or to standard error (one-shot), flushed at once so text
//! streams as it arrives. Remembers an open prompt so the next line starts below it.

use std::io::Write;

use super::render::{Channel, Renderer};
use super::style::Style;
use crate::assistant::events::ChatEvent;
use crate::{Error, Result};

/// The terminal (or the pipes) the chat writes to.
#[derive(Debug)]
pub struct Screen {
    renderer: Renderer,
    merged: bool,
    prompt_open: bool,
}

impl Screen {
    /// `merged`: notes go to standard output with the answer; otherwise to standard error.
    pub fn new(style: Style, merged: bool) -> Screen {
        Screen {
            renderer: Renderer::new(style, merged),
            merged,
            prompt_open: false,
        }
    }

    /// Writes the answer only when its turn ends ([`Renderer::hold_answer`]).
    pub fn hold_answer(self) -> Screen {
        Screen {
            renderer: self.renderer.hold_answer(),
            ..self
        }
    }

    /// Writes the commands' standard output as the answer ([`Renderer::output_as_answer`]).
    pub fn output_as_answer(self) -> Screen {
        Screen {
            renderer: self.renderer.output_as_answer(),
            ..self
        }
    }

    /// Writes the held answer now (a turn that ended without `done`).
    pub fn release_answer(&mut self) -> Result<()> {
        self.renderer.release();
        self.flush()
    }

    /// The style in use.
    pub fn style(&self) -> Style {
        self.renderer.style()
    }

    /// Renders and writes one event.
    pub fn event(&mut self, event: &ChatEvent) -> Result<()> {
        self.renderer.event(event);
        self.flush()
    }

    /// Writes a line of notes.
    pub fn line(&mut self, text: &str) -> Result<()> {
        self.renderer.line(text);
        self.flush()
    }

    /// Writes several lines of notes.
    pub fn lines(&mut self, text: &str) -> Result<()> {
        for line in text.lines() {
            self.renderer.line(line);
        }
        self.flush()
    }

    /// Ends the answer's open line, if any.
    pub fn end_answer(&mut self) -> Result<()> {
        self.renderer.end_answer();
        self.flush()
    }

    /// Writes a prompt (no newline) on the notes' stream.
    pub fn prompt(&mut self, text: &str) -> Result<()> {
        self.renderer.end_answer();
        self.flush()?;
        self.write(Channel::Notes, text)?;
        self.prompt_open = true;
        Ok(())
    }

    /// The person answered the prompt: the terminal's echo ended its line.
    pub fn prompt_answered(&mut self) {
        self.prompt_open = false;
    }

    fn flush(&mut self) -> Result<()> {
        for piece in self.renderer.take() {
            if std::mem::take(&mut self.prompt_open) {
                self.write(Channel::Notes, "\n")?;
            }
            self.write(piece.channel, &piece.text)?;
        }
        Ok(())
    }

    fn write(&self, channel: Channel, text: &str) -> Result<()> {
        let result = if channel == Channel::Answer || self.merged {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes()).and_then(|()| out.flush())
        } else {
            let mut err = std::io::stderr().lock();
            err.write_all(text.as_bytes()).and_then(|()| err.flush())
        };
        result.map_err(Error::WriteOutput)
    }
}
