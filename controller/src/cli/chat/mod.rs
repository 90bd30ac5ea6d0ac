//! `vigil-controller chat`: the assistant in a terminal, through the running controller's
//! HTTP API (`POST /api/ai/chat` and the session, approval and resource endpoints).
//!
//! Interactive by default ([`interactive`]): a prompt, the answer streamed as it arrives,
//! a compact line per tool call, an inline question per approval, Ctrl-C to cancel a turn.
//! With `-m TEXT` it sends one message and exits ([`oneshot`]). The stream's events are
//! decoded in [`event`], rendered without I/O in [`render`] and written by [`screen`];
//! [`turn`] runs one turn.

pub mod api;
pub mod input;
pub mod interactive;
pub mod mentions;
pub mod oneshot;
pub mod render;
pub mod screen;
pub mod sessions;
pub mod style;
pub mod summary;
pub mod turn;

use std::error::Error as _;
use std::io::Write;

use clap::Args;
use serde_json::{Value, json};

use super::client::{ApiClient, ClientArgs};
use crate::{Error, Result};

/// Exit code when Ctrl-C ended the chat (128 + SIGINT).
pub const EXIT_INTERRUPTED: u8 = 130;

const CHAT_HELP: &str = "\
Interactive mode (without -m): type a message at `you>`; the answer streams as it arrives.
Each tool call shows as one line (`⚙ read exec host:abc `uptime``) and its outcome
(`✓ read (12 ms)` or `✗ read POLICY_BLOCKED (3 ms)`), with up to 3 lines of its output.
A write that needs approval shows its command, target, risk, reasons and diff, then asks
`approve? [y/N/reason]`: y or yes approves; Enter, n or no denies (reason \"denied in the
terminal\"); any other text denies with that text as the reason.
  /sessions      list sessions          /resume ID   continue a session (shows its last messages)
  /new           start a new session    /help        this list
  /quit, Ctrl-D  leave
Other lines starting with / are direct-mode commands run without the model (for example
`/read @web uptime`, `/control @web restart nginx`). `@name` words are resolved through
GET /api/resources and sent as mentions when they name a resource exactly.
Ctrl-C during a turn cancels it (POST /api/ai/sessions/ID/cancel) and returns to the
prompt; Ctrl-C at the prompt, or a second one during a turn, quits with exit code 130.

One-shot mode (-m TEXT): the answer goes to standard output, tool lines, approvals and
errors to standard error. When standard output is not a terminal the answer is written
once the turn ends, so an answer the server withdrew (content_replaced) never reaches it. An approval is asked on the terminal when standard input is one;
otherwise its id is printed with the command that decides it
(`vigil-controller approvals approve ID`) and the turn waits for the decision or expiry.

Exit codes: 0 the turn ended without an error; 1 an `error` event (for example
MODEL_NOT_CONFIGURED or MODEL_ERROR), a lost stream, or a failure of network or files;
2 the controller refused the request (4xx: a wrong token, an unknown session, a session
busy with another turn) or bad usage; 130 Ctrl-C.

Colours only when standard output is a terminal and NO_COLOR is unset.";

/// Arguments of `chat`.
#[derive(Debug, Args)]
#[command(after_help = CHAT_HELP)]
pub struct ChatArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// Send this one message, print the answer and exit (one-shot mode).
    #[arg(short, long, value_name = "TEXT")]
    pub message: Option<String>,
    /// Continue this session (default: a new one).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Narrow the session's control level (the controller's is the ceiling).
    #[arg(long, value_name = "LEVEL", value_parser = ["read_only", "controlled", "autonomous"])]
    pub control_level: Option<String>,
}

/// Runs `chat`; returns the exit code.
pub fn run(args: ChatArgs) -> Result<u8> {
    super::client_runtime()?.block_on(async {
        let api = api::ChatApi::new(ApiClient::new(&args.client)?);
        let result = match args.message.clone() {
            Some(message) => oneshot::run(&api, &args, &message).await,
            None => interactive::run(&api, &args).await,
        };
        result.or_else(|error| {
            if error.is_broken_pipe() {
                return Err(error);
            }
            let (code, message) = describe(&error);
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "error: {code}: {message}");
            Ok(exit_code(&error))
        })
    })
}

/// The request body of one message.
pub fn chat_body(
    session: Option<&str>,
    message: &str,
    mentions: &[String],
    control_level: Option<&str>,
) -> Value {
    let mut body = json!({ "message": message });
    if let Some(session) = session {
        body["session_id"] = json!(session);
    }
    if !mentions.is_empty() {
        body["mentions"] = json!(mentions);
    }
    if let Some(level) = control_level {
        body["control_level"] = json!(level);
    }
    body
}

/// An error as `(CODE, message)`: the API's code, or a code for the CLI's own failures.
pub fn describe(error: &Error) -> (String, String) {
    match error {
        Error::Api { code, message, .. } => (code.clone(), message.clone()),
        Error::Http { url, source } => {
            let mut text = if url.is_empty() {
                "the connection to the controller failed".to_owned()
            } else {
                format!("cannot reach the controller at {url}")
            };
            let mut cause: Option<&dyn std::error::Error> = source.source();
            while let Some(inner) = cause {
                text = format!("{text}: {inner}");
                cause = inner.source();
            }
            ("NETWORK".into(), text)
        }
        Error::Config(_) => ("CONFIG".into(), error.to_string()),
        other => ("FAILED".into(), other.to_string()),
    }
}

/// The exit code of an error: 2 for a refusal (4xx) or bad usage, 1 for failures.
pub fn exit_code(error: &Error) -> u8 {
    match error {
        Error::Api { status, .. } if *status >= 500 => 1,
        other => other.exit_code(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_carry_only_what_is_set() {
        assert_eq!(chat_body(None, "hi", &[], None), json!({"message": "hi"}));
        assert_eq!(
            chat_body(Some("s1"), "hi @web", &["host:a".into()], Some("read_only")),
            json!({"session_id": "s1", "message": "hi @web", "mentions": ["host:a"],
                   "control_level": "read_only"})
        );
    }

    #[test]
    fn refusals_exit_2_and_failures_exit_1() {
        let api = |status| Error::Api {
            status,
            code: "X".into(),
            message: "m".into(),
            details: Value::Null,
        };
        assert_eq!(exit_code(&api(401)), 2);
        assert_eq!(exit_code(&api(409)), 2);
        assert_eq!(exit_code(&api(503)), 1);
        assert_eq!(exit_code(&Error::Network("n".into())), 1);
        assert_eq!(describe(&api(401)), ("X".into(), "m".into()));
    }
}
