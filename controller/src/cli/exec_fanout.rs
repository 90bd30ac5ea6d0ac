//! `vigil-controller exec --all | --label K=V … | --target A --target B … -- COMMAND`: one
//! read on many targets through `POST /api/exec/fanout`. Prints a table (host, target,
//! status, exit, time, the first line of output or the error) and a summary line; on a
//! terminal it shows progress on standard error while results arrive. `--json` prints the
//! API's answer as it is. Exits 0 when every target exited 0, 1 when any failed, was
//! refused by its agent or was offline (a refusal of the whole request exits 2).

use futures_util::StreamExt;
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};

use reqwest::Method;
use reqwest::header::ACCEPT;
use serde_json::{Value, json};

use super::client::ApiClient;
use super::exec::ExecArgs;
use super::table;
use crate::exec::fanout::{FanoutAnswer, Summary, TargetResult, TargetStatus};
use crate::{Error, Result};

/// Longest output line shown in the table, in characters.
const LINE_CHARS: usize = 80;

/// True when `args` ask for a fan-out rather than one command.
pub fn wanted(args: &ExecArgs) -> bool {
    args.all || !args.labels.is_empty() || args.target.len() > 1 || args.json
}

/// Parses `--label KEY=VALUE` flags.
pub fn parse_labels(labels: &[String]) -> Result<BTreeMap<String, String>> {
    labels
        .iter()
        .map(|pair| match pair.split_once('=') {
            Some((key, value)) if !key.trim().is_empty() => {
                Ok((key.trim().to_owned(), value.trim().to_owned()))
            }
            _ => Err(Error::InvalidInput(format!(
                "--label {pair:?} is not KEY=VALUE"
            ))),
        })
        .collect()
}

/// Runs the fan-out; returns the exit code.
pub async fn run(args: &ExecArgs) -> Result<u8> {
    let client = ApiClient::new(&args.client)?;
    let body = json!({
        "all": args.all,
        "targets": args.target,
        "labels": parse_labels(&args.labels)?,
        "command": args.shell_command(),
        "timeout_s": args.timeout_s,
    });
    let request = client.request(Method::POST, "/api/exec/fanout").json(&body);
    if args.json {
        let answer: Value = client
            .json(request.header(ACCEPT, "application/json"))
            .await?;
        let text = serde_json::to_string_pretty(&answer)?;
        let mut out = std::io::stdout().lock();
        writeln!(out, "{text}").map_err(Error::WriteOutput)?;
        let summary: Summary = serde_json::from_value(answer["summary"].clone())?;
        return Ok(exit_code(&summary));
    }
    let answer = stream(&client, request).await?;
    let mut out = std::io::stdout().lock();
    out.write_all(render(&answer).as_bytes())
        .and_then(|()| out.flush())
        .map_err(Error::WriteOutput)?;
    Ok(exit_code(&answer.summary))
}

/// 0 when every target exited 0, 1 otherwise.
pub fn exit_code(summary: &Summary) -> u8 {
    u8::from(!summary.all_ok())
}

/// Reads the event stream to its summary, showing progress on a terminal.
async fn stream(client: &ApiClient, request: reqwest::RequestBuilder) -> Result<FanoutAnswer> {
    let mut events = std::pin::pin!(client.events(request).await?);
    let progress = std::io::stderr().is_terminal();
    let (mut total, mut results) = (0, Vec::new());
    while let Some(event) = events.next().await {
        let event = event?;
        match event.event.as_str() {
            "start" => {
                let start: Value = serde_json::from_str(&event.data)?;
                total = start["targets"].as_u64().unwrap_or(0);
            }
            "result" => results.push(serde_json::from_str::<TargetResult>(&event.data)?),
            "summary" => {
                if progress {
                    eprint!("\r\x1b[K");
                }
                let summary = serde_json::from_str(&event.data)?;
                return Ok(FanoutAnswer { results, summary });
            }
            _ => continue,
        }
        if progress {
            eprint!("\r{}/{total} targets", results.len());
        }
    }
    Err(Error::Network(
        "the controller closed the stream before the fan-out ended".into(),
    ))
}

/// The table, sorted by host then target, and the summary line.
pub fn render(answer: &FanoutAnswer) -> String {
    let mut results: Vec<&TargetResult> = answer.results.iter().collect();
    results.sort_by(|a, b| (&a.host, &a.target).cmp(&(&b.host, &b.target)));
    let rows: Vec<Vec<String>> = results.iter().map(|r| row(r)).collect();
    let header = ["HOST", "TARGET", "STATUS", "EXIT", "TIME", "OUTPUT"];
    let s = &answer.summary;
    format!(
        "{}{} targets: {} ok, {} failed, {} refused, {} offline ({:.2} s)\n",
        table::render(&header, &rows),
        s.targets,
        s.ok,
        s.failed,
        s.refused,
        s.offline,
        s.duration_ms as f64 / 1000.0
    )
}

fn row(result: &TargetResult) -> Vec<String> {
    let host = if result.host.is_empty() {
        "-".to_owned()
    } else {
        result.host.clone()
    };
    let exit = match (result.exit_code, result.signal) {
        (Some(code), _) => code.to_string(),
        (None, Some(signal)) => format!("sig {signal}"),
        (None, None) => "-".to_owned(),
    };
    let time = if result.status == TargetStatus::Offline {
        "-".to_owned()
    } else {
        format!("{} ms", result.duration_ms)
    };
    let output = match &result.error {
        Some(error) => format!("{}: {}", error.code, error.message),
        None => first_line(&result.stdout)
            .or_else(|| first_line(&result.stderr))
            .unwrap_or_default()
            .to_owned(),
    };
    vec![
        host,
        result.target.clone(),
        result.status.as_str().to_owned(),
        exit,
        time,
        shorten(&output),
    ]
}

fn first_line(text: &str) -> Option<&str> {
    text.lines()
        .map(str::trim_end)
        .find(|l| !l.trim().is_empty())
}

fn shorten(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    if line.chars().count() <= LINE_CHARS {
        return line.to_owned();
    }
    let mut short: String = line.chars().take(LINE_CHARS - 1).collect();
    short.push('…');
    short
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::fanout::TargetError;

    fn result(host: &str, status: TargetStatus, exit: Option<i32>) -> TargetResult {
        TargetResult {
            target: format!("{host}-id"),
            agent: Some(format!("{host}-id")),
            host: host.into(),
            status,
            exit_code: exit,
            signal: None,
            stdout: "\n up 3 days\nsecond line\n".into(),
            stderr: String::new(),
            truncated: false,
            duration_ms: 12,
            error: None,
            index: 0,
        }
    }

    #[test]
    fn labels_are_key_value_pairs() {
        let labels = parse_labels(&["env=prod".into(), "role = db".into(), "x=".into()]).unwrap();
        assert_eq!(labels["env"], "prod");
        assert_eq!(labels["role"], "db");
        assert_eq!(labels["x"], "");
        assert!(parse_labels(&["env".into()]).is_err());
        assert!(parse_labels(&["=prod".into()]).is_err());
    }

    #[test]
    fn the_table_shows_each_host_and_the_summary() {
        let mut offline = result("b-dead", TargetStatus::Offline, None);
        offline.error = Some(TargetError {
            code: "AGENT_OFFLINE".into(),
            message: "agent b-dead-id is not connected".into(),
        });
        let answer = FanoutAnswer {
            results: vec![offline, result("a-web", TargetStatus::Ok, Some(0))],
            summary: Summary {
                targets: 2,
                ok: 1,
                offline: 1,
                duration_ms: 1500,
                ..Summary::default()
            },
        };
        let text = render(&answer);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(lines[0].starts_with("HOST"));
        let cells = |line: &str| -> Vec<String> {
            line.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect()
        };
        assert_eq!(
            cells(lines[1]),
            ["a-web", "a-web-id", "ok", "0", "12 ms", "up 3 days"],
            "{text}"
        );
        assert_eq!(
            cells(lines[2]),
            [
                "b-dead",
                "b-dead-id",
                "offline",
                "-",
                "-",
                "AGENT_OFFLINE: agent b-dead-id is not connected"
            ],
            "{text}"
        );
        assert_eq!(
            lines[3],
            "2 targets: 1 ok, 0 failed, 0 refused, 1 offline (1.50 s)"
        );
        assert_eq!(exit_code(&answer.summary), 1);
    }

    #[test]
    fn long_lines_are_shortened() {
        let long = "x".repeat(200);
        let short = shorten(&long);
        assert_eq!(short.chars().count(), LINE_CHARS);
        assert!(short.ends_with('…'));
    }
}
