//! `vigil-controller findings [list] | ack ID | snooze ID --for DURATION`, through the
//! controller's HTTP API. Acknowledging and snoozing need an operator token.

use clap::{Args, Subcommand};
use reqwest::Method;
use serde_json::{Value, json};

use super::client::{ApiClient, ClientArgs};
use super::table::write_out;
use crate::Result;

/// `vigil-controller findings …` (without a subcommand: `list`).
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct FindingsArgs {
    /// What to do (default: list).
    #[command(subcommand)]
    pub command: Option<FindingsCommand>,
    #[command(flatten)]
    pub list: ListArgs,
}

/// The `findings` subcommands.
#[derive(Debug, Subcommand)]
pub enum FindingsCommand {
    /// List findings (open by default): severity, check, resource, summary, count, last seen.
    List(ListArgs),
    /// Acknowledge a finding: someone is on it (it stays until its check passes).
    Ack(IdArgs),
    /// Snooze a finding: no notifications and not counted as open until the time passes.
    Snooze(SnoozeArgs),
}

/// Arguments of `findings list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// open (default), acknowledged, resolved or all.
    #[arg(long, value_name = "STATUS", default_value = "open")]
    pub status: String,
    /// Print the API's JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `findings ack`.
#[derive(Debug, Args)]
pub struct IdArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// The finding's id.
    pub id: String,
}

/// Arguments of `findings snooze`.
#[derive(Debug, Args)]
pub struct SnoozeArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// The finding's id.
    pub id: String,
    /// How long: 30m, 4h, 2d (minutes, hours, days).
    #[arg(long = "for", value_name = "DURATION", value_parser = parse_duration)]
    pub duration: i64,
}

/// `30m`, `4h`, `2d` (or plain seconds) as seconds.
pub fn parse_duration(text: &str) -> std::result::Result<i64, String> {
    let text = text.trim();
    let (number, unit) = text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    );
    let n: i64 = number
        .parse()
        .map_err(|_| format!("{text:?}: a number and m, h or d (30m, 4h, 2d)"))?;
    let seconds = match unit {
        "" | "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        "d" => n * 86_400,
        _ => return Err(format!("{text:?}: the unit is m, h or d")),
    };
    if seconds <= 0 {
        return Err(format!("{text:?}: must be more than 0"));
    }
    Ok(seconds)
}

/// Runs a `findings` subcommand.
pub fn run(args: FindingsArgs) -> Result<()> {
    super::client_runtime()?.block_on(async {
        match args.command {
            None => list(args.list).await,
            Some(FindingsCommand::List(list_args)) => list(list_args).await,
            Some(FindingsCommand::Ack(a)) => change(&a.client, &a.id, "ack", json!({})).await,
            Some(FindingsCommand::Snooze(s)) => {
                let until = crate::clock::unix_now() + s.duration;
                change(&s.client, &s.id, "snooze", json!({ "until": until })).await
            }
        }
    })
}

async fn list(args: ListArgs) -> Result<()> {
    let client = ApiClient::new(&args.client)?;
    let status = args.status.trim();
    let path = if status == "all" {
        "/api/findings".to_owned()
    } else {
        format!("/api/findings?status={status}")
    };
    let body: Value = client.json(client.request(Method::GET, &path)).await?;
    let rows = body["findings"].as_array().cloned().unwrap_or_default();
    let text = if args.json {
        serde_json::to_string_pretty(&body)? + "\n"
    } else if rows.is_empty() {
        format!(
            "no {} findings\n",
            if status == "all" { "" } else { status }
        )
        .replace("no  ", "no ")
    } else {
        table(&rows)
    };
    write_out(&text)
}

async fn change(client: &ClientArgs, id: &str, verb: &str, body: Value) -> Result<()> {
    let api = ApiClient::new(client)?;
    let path = format!("/api/findings/{}/{verb}", id.trim());
    let row: Value = api
        .json(api.request(Method::POST, &path).json(&body))
        .await?;
    let done = match verb {
        "ack" => "acknowledged".to_owned(),
        _ => format!("snoozed until {}", text(&row["snoozed_until"])),
    };
    write_out(&format!(
        "finding {} {done}: {}\n",
        id.trim(),
        text(&row["summary"])
    ))
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The findings as an aligned table.
pub fn table(rows: &[Value]) -> String {
    let now = crate::clock::unix_now();
    let header = [
        "ID",
        "SEVERITY",
        "STATUS",
        "CHECK",
        "RESOURCE",
        "SUMMARY",
        "COUNT",
        "LAST SEEN",
    ];
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let summary = super::table::cell(&text(&r["summary"]), 60);
            let resource = r["resource_name"]
                .as_str()
                .or(r["resource_id"].as_str())
                .unwrap_or("—")
                .to_owned();
            vec![
                text(&r["id"]),
                text(&r["severity"]),
                text(&r["status"]),
                text(&r["check"]),
                resource,
                summary,
                text(&r["count"]),
                crate::clock::relative_rfc3339(&text(&r["last_seen"]), now),
            ]
        })
        .collect();
    super::table::render(&header, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(parse_duration("30m"), Ok(1800));
        assert_eq!(parse_duration("4h"), Ok(14_400));
        assert_eq!(parse_duration("2d"), Ok(172_800));
        assert_eq!(parse_duration("90"), Ok(90));
        for bad in ["", "m", "4w", "0h", "-3h", "4 h"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
