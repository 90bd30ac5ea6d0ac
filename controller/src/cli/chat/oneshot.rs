//! `chat -m TEXT`: one message, the answer on standard output (in direct mode, `/read …`,
//! the command's standard output), notes on standard error,
//! and an exit code for scripts (see `chat --help`). When standard output is not a
//! terminal the answer is written when the turn ends, so an answer the server withdrew
//! never reaches a pipe.

use std::io::IsTerminal;

use tokio::signal::unix::{SignalKind, signal};

use super::api::ChatApi;
use super::input::spawn_reader;
use super::screen::Screen;
use super::style::Style;
use super::turn::{Outcome, Turn};
use super::{ChatArgs, EXIT_INTERRUPTED, chat_body, mentions};
use crate::{Error, Result};

/// Sends `message` and streams its turn; returns the exit code.
pub async fn run(api: &ChatApi, args: &ChatArgs, message: &str) -> Result<u8> {
    let mut interrupts = signal(SignalKind::interrupt())
        .map_err(|e| Error::Network(format!("listening for Ctrl-C: {e}")))?;
    // Approvals are asked only when a person is at the terminal.
    let mut lines = std::io::stdin().is_terminal().then(spawn_reader);
    let style = Style::detect_for(std::io::stderr().is_terminal());
    let mut screen = Screen::new(style, false);
    if !std::io::stdout().is_terminal() {
        screen = screen.hold_answer();
    }
    // Direct mode (`/read @vm uname -s`) has no model answer: the command's output is it.
    if message.trim_start().starts_with('/') {
        screen = screen.output_as_answer();
    }
    let mentions = mentions::resolve(api, message).await;
    let body = chat_body(
        args.session.as_deref(),
        message,
        &mentions,
        args.control_level.as_deref(),
    );
    let turn = Turn {
        api,
        screen: &mut screen,
        lines: lines.as_mut(),
        interrupts: &mut interrupts,
    };
    let ended = turn.run(&body).await?;
    screen.release_answer()?;
    screen.end_answer()?;
    Ok(match ended.outcome {
        Outcome::Done { errors: false } => 0,
        Outcome::Done { errors: true } | Outcome::Lost => 1,
        Outcome::Cancelled | Outcome::Interrupted => {
            screen.line("turn cancelled")?;
            EXIT_INTERRUPTED
        }
    })
}
