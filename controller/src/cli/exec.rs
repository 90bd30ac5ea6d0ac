//! `vigil-controller exec (--agent ID [--target T] | --target RESOURCE-ID) [--timeout-s N]
//! -- COMMAND...`: runs a
//! read-only command through the controller's API and streams its output to this
//! terminal's stdout and stderr as it arrives. The exit code is the command's (128+N for
//! signal N); a refusal prints its reasons and rewrite and exits 2. With `--write` the
//! command is requested through an approval instead ([`super::exec_write`]). With `--all`,
//! `--label K=V` or several `--target`s it fans out ([`super::exec_fanout`]).

use futures_util::StreamExt;
use std::io::Write;

use clap::Args;
use reqwest::Method;
use reqwest::header::ACCEPT;
use serde_json::{Value, json};

use super::client::{ApiClient, ClientArgs};
use crate::api::ExecExit;
use crate::{Error, Result};

/// Arguments of `exec`.
#[derive(Debug, Args)]
pub struct ExecArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// The agent's id. Without it, --target names a resource and the controller routes
    /// the command along the resource's chain.
    #[arg(long, value_name = "ID", required_unless_present_any = ["target", "all", "labels"],
          conflicts_with_all = ["all", "labels", "json"])]
    pub agent: Option<String>,
    /// With --agent: host (default), lxc:ID, vm:ID, docker:NAME, lxc:ID/docker:NAME,
    /// pod:NS/NAME[/CONTAINER]. Without: a resource's name or alias (`jellyfin`, as chat's
    /// @NAME finds it; a name several resources share is an error that lists them), its id
    /// from `vigil-controller resources` (lxc:delly:141, docker_container:media:3f2a9c0b1d2e),
    /// or an agent id (its host). Without --agent it may be repeated: the command then fans
    /// out to every target.
    #[arg(long, value_name = "TARGET")]
    pub target: Vec<String>,
    /// Fan out to every enrolled agent's host (POST /api/exec/fanout): prints a table of
    /// the results and a summary; exits 1 when any target failed, was refused or offline.
    #[arg(long, conflicts_with = "write")]
    pub all: bool,
    /// Fan out to the agents whose join-token labels include KEY=VALUE (repeatable: every
    /// pair must match; with --target or --all it narrows them).
    #[arg(
        long = "label",
        id = "labels",
        value_name = "KEY=VALUE",
        conflicts_with = "write"
    )]
    pub labels: Vec<String>,
    /// Fan-out: print the API's JSON answer ({results, summary}) instead of the table.
    #[arg(long, conflicts_with = "write")]
    pub json: bool,
    /// Timeout in seconds (default 30, at most 300).
    #[arg(long, value_name = "N")]
    pub timeout_s: Option<u32>,
    /// Request a write: the controller raises an approval, this command waits until a
    /// person approves or denies it (`vigil-controller approvals approve ID`) or it
    /// expires, then prints the outcome. Needs an operator token.
    #[arg(long)]
    pub write: bool,
    /// The command; its words are joined with spaces into one shell string.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

impl ExecArgs {
    /// The shell string sent to the controller.
    pub fn shell_command(&self) -> String {
        self.command.join(" ")
    }
}

/// Runs `exec`; returns the exit code.
pub fn run(args: ExecArgs) -> Result<u8> {
    super::client_runtime()?.block_on(async {
        if args.target.len() > 1 && (args.agent.is_some() || args.write) {
            return Err(Error::InvalidInput(
                "several --target flags fan out a read: not with --agent or --write".into(),
            ));
        }
        let result = if args.write {
            super::exec_write::request(&args).await
        } else if super::exec_fanout::wanted(&args) {
            super::exec_fanout::run(&args).await
        } else {
            stream(&args).await
        };
        match result {
            Err(Error::Api {
                code,
                message,
                details,
                ..
            }) => {
                report_refusal(&code, &message, &details);
                Ok(2)
            }
            other => other,
        }
    })
}

async fn stream(args: &ExecArgs) -> Result<u8> {
    let client = ApiClient::new(&args.client)?;
    // A lone --target that is an agent id means that agent's host.
    let (agent, target) = match (&args.agent, args.target.first()) {
        (None, Some(id)) if id.trim().parse::<vigil_shared::ids::AgentId>().is_ok() => {
            (Some(id.trim()), None)
        }
        (agent, target) => (agent.as_deref(), target.map(String::as_str)),
    };
    let body = json!({
        "agent": agent,
        "target": target,
        "command": args.shell_command(),
        "timeout_s": args.timeout_s,
    });
    let request = client
        .request(Method::POST, "/api/exec")
        .header(ACCEPT, "text/event-stream")
        .json(&body);
    let mut events = std::pin::pin!(client.events(request).await?);
    while let Some(event) = events.next().await {
        if let Some(code) = handle(event?)? {
            return Ok(code);
        }
    }
    Err(Error::Network(
        "the controller closed the stream before the command ended".into(),
    ))
}

/// Writes an event to the terminal; returns the exit code once the command ended.
fn handle(event: eventsource_stream::Event) -> Result<Option<u8>> {
    match event.event.as_str() {
        "stdout" => {
            let mut out = std::io::stdout().lock();
            out.write_all(event.data.as_bytes())
                .and_then(|()| out.flush())
                .map_err(Error::WriteOutput)?;
        }
        "stderr" => {
            let mut err = std::io::stderr().lock();
            let _ = err
                .write_all(event.data.as_bytes())
                .and_then(|()| err.flush());
        }
        "exit" => {
            let exit: ExecExit = serde_json::from_str(&event.data)?;
            return Ok(Some(exit_code(&exit)));
        }
        "error" => {
            let value: Value = serde_json::from_str(&event.data).unwrap_or(Value::Null);
            return Err(Error::Api {
                status: 0,
                code: value["code"]
                    .as_str()
                    .unwrap_or("EXECUTION_FAILED")
                    .to_owned(),
                message: value["message"].as_str().unwrap_or(&event.data).to_owned(),
                details: Value::Null,
            });
        }
        _ => {}
    }
    Ok(None)
}

/// The process exit code for how the remote command ended.
pub fn exit_code(exit: &ExecExit) -> u8 {
    match (exit.exit_code, exit.signal) {
        (Some(code), _) => u8::try_from(code).unwrap_or(1),
        (None, Some(signal)) => u8::try_from(128 + signal.clamp(0, 127)).unwrap_or(255),
        (None, None) => 1,
    }
}

fn report_refusal(code: &str, message: &str, details: &Value) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "vigil-controller: {code}: {message}");
    if let Some(reasons) = details.get("reasons").and_then(Value::as_array) {
        for reason in reasons.iter().filter_map(Value::as_str) {
            let _ = writeln!(err, "  reason: {reason}");
        }
    }
    if let Some(rewrite) = details.get("rewrite").and_then(Value::as_str) {
        let _ = writeln!(err, "  try instead: {rewrite}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_shell_convention() {
        let exit = |code, signal| ExecExit {
            exit_code: code,
            signal,
            truncated: false,
            duration_ms: 1,
            queued_ms: 0,
        };
        assert_eq!(exit_code(&exit(Some(0), None)), 0);
        assert_eq!(exit_code(&exit(Some(3), None)), 3);
        assert_eq!(exit_code(&exit(None, Some(9))), 137);
        assert_eq!(exit_code(&exit(None, None)), 1);
    }
}
