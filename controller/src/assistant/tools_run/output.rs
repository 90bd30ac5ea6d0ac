//! Host output on its way to the model, the chat stream and the store: secrets redacted
//! ([`vigil_shared::redact`]), streamed output redacted chunk by chunk, and the model's copy
//! cut to its tail.

use serde_json::{Value, json};
use vigil_shared::redact::{StreamRedactor, redact};

use super::ToolRunner;
use crate::assistant::events::ChatEvent;
use crate::exec::{ExecOutcome, OutputStream};

/// Characters of each output stream the model gets (the end is kept).
pub const MODEL_OUTPUT_CHARS: usize = 16 * 1024;

/// The last `n` characters of `text`, and whether it was cut.
pub fn tail_for_model(text: &str, n: usize) -> (String, bool) {
    let count = text.chars().count();
    if count <= n {
        return (text.to_owned(), false);
    }
    (text.chars().skip(count - n).collect(), true)
}

/// Streams one call's output as `tool_output` events, redacted.
#[derive(Debug)]
pub struct OutputEvents<'a> {
    runner: &'a ToolRunner,
    call_id: String,
    stdout: StreamRedactor,
    stderr: StreamRedactor,
}

impl<'a> OutputEvents<'a> {
    /// The events of call `call_id`.
    pub fn new(runner: &'a ToolRunner, call_id: &str) -> Self {
        OutputEvents {
            runner,
            call_id: call_id.to_owned(),
            stdout: StreamRedactor::new(),
            stderr: StreamRedactor::new(),
        }
    }

    fn send(&self, stream: OutputStream, text: String) {
        if !text.is_empty() {
            self.runner.emit(ChatEvent::ToolOutput {
                tool_call_id: self.call_id.clone(),
                stream: stream.as_str().to_owned(),
                text,
            });
        }
    }

    /// A chunk of output.
    pub fn push(&mut self, stream: OutputStream, text: &str) {
        let redacted = match stream {
            OutputStream::Stdout => self.stdout.push(text),
            OutputStream::Stderr => self.stderr.push(text),
        };
        self.send(stream, redacted);
    }

    /// The end of the output: what the redactors held back.
    pub fn finish(mut self) {
        let (out, err) = (self.stdout.finish(), self.stderr.finish());
        self.send(OutputStream::Stdout, out);
        self.send(OutputStream::Stderr, err);
    }
}

/// The envelope data of a finished command: output redacted and cut for the model.
pub fn outcome_data(outcome: &ExecOutcome, mut data: Value) -> Value {
    let stdout = redact(&outcome.stdout);
    let stderr = redact(&outcome.stderr);
    let (out, cut_out) = tail_for_model(&stdout.text, MODEL_OUTPUT_CHARS);
    let (err, cut_err) = tail_for_model(&stderr.text, MODEL_OUTPUT_CHARS / 4);
    data["exit_code"] = json!(outcome.exit_code);
    data["signal"] = json!(outcome.signal);
    data["stdout"] = json!(out);
    data["stderr"] = json!(err);
    data["truncated"] = json!(outcome.truncated || cut_out || cut_err);
    data["duration_ms"] = json!(outcome.duration_ms);
    let redacted = stdout.count + stderr.count;
    if redacted > 0 {
        data["redacted"] = json!(redacted);
    }
    data
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::ExecExit;

    #[test]
    fn outcome_data_redacts_and_cuts() {
        let outcome = ExecOutcome {
            stdout: format!(
                "DB_PASSWORD=hunter2-very-secret\n{}",
                "x".repeat(MODEL_OUTPUT_CHARS)
            ),
            stderr: String::new(),
            exit: ExecExit {
                exit_code: Some(0),
                signal: None,
                truncated: false,
                duration_ms: 3,
                queued_ms: 0,
            },
        };
        let data = outcome_data(&outcome, json!({ "command": "cat .env" }));
        let stdout = data["stdout"].as_str().unwrap();
        assert!(!stdout.contains("hunter2"));
        assert_eq!(data["truncated"], true);
        let short = ExecOutcome {
            stdout: "DB_PASSWORD=hunter2-very-secret\n".into(),
            ..outcome
        };
        let data = outcome_data(&short, json!({}));
        assert_eq!(data["stdout"], "DB_PASSWORD=[REDACTED]\n");
        assert_eq!(data["redacted"], 1);
    }
}
