//! `vigil-controller exec --write …`: asks the controller for a write through an approval
//! (`POST /api/exec/write`), then waits for a person's decision and the outcome, polling
//! `GET /api/ai/approvals/{id}` once a second. Exits with the command's exit code, 2 when
//! it was denied, expired or withdrawn, 1 when its outcome is unknown.

use std::io::Write;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use super::client::ApiClient;
use super::exec::ExecArgs;
use crate::{Error, Result};

/// How often the decision is polled.
const POLL: Duration = Duration::from_secs(1);

/// Requests the write and waits; returns the exit code.
pub async fn request(args: &ExecArgs) -> Result<u8> {
    let client = ApiClient::new(&args.client)?;
    let body = json!({
        "agent": args.agent,
        "target": args.target.first(),
        "command": args.shell_command(),
        "timeout_s": args.timeout_s,
    });
    let row: Value = client
        .json(client.request(Method::POST, "/api/exec/write").json(&body))
        .await?;
    let id = row["id"].as_str().unwrap_or_default().to_owned();
    note(&format!(
        "approval {id} requested (risk {}); waiting for a decision: vigil-controller approvals approve {id}",
        row["risk"].as_str().unwrap_or("?")
    ));
    let path = format!("/api/ai/approvals/{id}");
    let mut announced = false;
    loop {
        let row: Value = client.json(client.request(Method::GET, &path)).await?;
        match (row["status"].as_str(), row["run_state"].as_str()) {
            (Some("pending"), _) => {}
            (Some("approved"), Some("done" | "unknown")) => return Ok(finished(&row)),
            (Some("approved"), _) => {
                if !announced {
                    note(&format!(
                        "approved by {}; running",
                        row["decided_by"].as_str().unwrap_or("?")
                    ));
                    announced = true;
                }
            }
            (Some(status), _) => {
                let reason = row["reason"]
                    .as_str()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default();
                note(&format!("approval {id} {status}{reason}; nothing ran"));
                return Ok(2);
            }
            (None, _) => {
                return Err(Error::Network(format!(
                    "unexpected answer for approval {id}"
                )));
            }
        }
        tokio::time::sleep(POLL).await;
    }
}

fn finished(row: &Value) -> u8 {
    let outcome = row["outcome"].as_str().unwrap_or_default();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{outcome}");
    if row["run_state"] == "unknown" {
        return 1;
    }
    match row["exit_code"].as_i64() {
        Some(code) => u8::try_from(code.clamp(0, 255)).unwrap_or(1),
        None => 1,
    }
}

fn note(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "vigil: {text}");
}
