//! The interactive chat: a `you>` prompt, one turn per message in the current session,
//! the chat commands (`/sessions`, `/resume`, `/new`, `/help`, `/quit`), Ctrl-C to cancel
//! a turn and, at the prompt, to quit.

use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::mpsc::UnboundedReceiver;

use super::api::ChatApi;
use super::input::{Line, parse_line, spawn_reader};
use super::screen::Screen;
use super::sessions::{recent_messages, session_table};
use super::style::Style;
use super::turn::{Outcome, Turn};
use super::{ChatArgs, EXIT_INTERRUPTED, chat_body, describe, mentions};
use crate::{Error, Result};

const HELP: &str = "\
Type a message and press Enter; `@name` mentions a resource.
  /sessions      list sessions
  /resume ID     continue a session
  /new           start a new session
  /help          this list
  /quit, Ctrl-D  leave
Other lines starting with / run one tool directly (for example /read @web uptime).
Ctrl-C cancels a running turn; at the prompt it quits.";

/// The state of an interactive chat.
#[derive(Debug)]
struct Chat<'a> {
    api: &'a ChatApi,
    args: &'a ChatArgs,
    screen: Screen,
    lines: UnboundedReceiver<String>,
    interrupts: Signal,
    session: Option<String>,
}

/// Runs the interactive chat until `/quit`, end of input or Ctrl-C at the prompt.
pub async fn run(api: &ChatApi, args: &ChatArgs) -> Result<u8> {
    let interrupts = signal(SignalKind::interrupt())
        .map_err(|e| Error::Network(format!("listening for Ctrl-C: {e}")))?;
    let mut chat = Chat {
        api,
        args,
        screen: Screen::new(Style::detect(), true),
        lines: spawn_reader(),
        interrupts,
        session: None,
    };
    let intro = "Vigil chat: /help for commands, Ctrl-D to leave.";
    chat.screen.line(&chat.screen.style().dim(intro))?;
    if let Some(id) = &args.session {
        chat.resume(id).await?;
    }
    loop {
        let prompt = chat.screen.style().bold("you> ");
        chat.screen.prompt(&prompt)?;
        let line = tokio::select! {
            line = chat.lines.recv() => line,
            _ = chat.interrupts.recv() => {
                chat.screen.prompt_answered();
                chat.screen.line("")?;
                return Ok(EXIT_INTERRUPTED);
            }
        };
        chat.screen.prompt_answered();
        let Some(line) = line else {
            chat.screen.line("")?;
            return Ok(0);
        };
        match parse_line(&line) {
            Line::Empty => {}
            Line::Quit => return Ok(0),
            Line::Help => chat.screen.lines(HELP)?,
            Line::New => {
                chat.session = None;
                chat.note("the next message starts a new session")?;
            }
            Line::Sessions => chat.sessions().await?,
            Line::Resume(Some(id)) => chat.resume(&id).await?,
            Line::Resume(None) => chat.note("usage: /resume ID (see /sessions)")?,
            Line::Message(text) => {
                if chat.send(&text).await? == Some(Outcome::Interrupted) {
                    return Ok(EXIT_INTERRUPTED);
                }
            }
        }
    }
}

impl Chat<'_> {
    fn note(&mut self, text: &str) -> Result<()> {
        let text = self.screen.style().dim(text);
        self.screen.line(&text)
    }

    /// Prints a failed request and goes on.
    fn report(&mut self, error: &Error) -> Result<()> {
        if error.is_broken_pipe() {
            return Err(Error::WriteOutput(std::io::ErrorKind::BrokenPipe.into()));
        }
        let (code, message) = describe(error);
        let text = self
            .screen
            .style()
            .red(&format!("error: {code}: {message}"));
        self.screen.line(&text)
    }

    /// Sends one message as a turn; the outcome, or `None` when the request was refused.
    async fn send(&mut self, text: &str) -> Result<Option<Outcome>> {
        let mentions = mentions::resolve(self.api, text).await;
        let body = chat_body(
            self.session.as_deref(),
            text,
            &mentions,
            self.args.control_level.as_deref(),
        );
        let turn = Turn {
            api: self.api,
            screen: &mut self.screen,
            lines: Some(&mut self.lines),
            interrupts: &mut self.interrupts,
        };
        let ended = match turn.run(&body).await {
            Ok(ended) => ended,
            Err(error) => {
                self.report(&error)?;
                return Ok(None);
            }
        };
        if let Some(id) = ended.session
            && self.session.as_deref() != Some(id.as_str())
        {
            self.note(&format!("(session {id})"))?;
            self.session = Some(id);
        }
        if ended.outcome == Outcome::Cancelled {
            let text = self.screen.style().yellow("turn cancelled");
            self.screen.line(&text)?;
        }
        Ok(Some(ended.outcome))
    }

    async fn sessions(&mut self) -> Result<()> {
        match self.api.sessions().await {
            Ok(rows) => {
                let table = session_table(&rows, self.session.as_deref());
                self.screen.lines(&table)
            }
            Err(error) => self.report(&error),
        }
    }

    async fn resume(&mut self, id: &str) -> Result<()> {
        let session = match self.api.session(id).await {
            Ok(session) => session,
            Err(error) => return self.report(&error),
        };
        let messages = match self.api.messages(id).await {
            Ok(messages) => messages,
            Err(error) => return self.report(&error),
        };
        self.session = Some(id.to_owned());
        let title = session["title"].as_str().unwrap_or_default();
        self.note(&format!("(resumed session {id}: {title})"))?;
        for message in recent_messages(&messages) {
            self.screen.lines(&message)?;
        }
        Ok(())
    }
}
