//! `vigil-controller resources [QUERY] [--kind K] [--limit N] [--json]` and
//! `vigil-controller resources --id ID`: what the agents report, through the controller's
//! HTTP API (`GET /api/resources`, `GET /api/resources/{id}`).

use std::io::Write;

use clap::Args;
use reqwest::Method;
use serde_json::Value;

use super::client::{ApiClient, ClientArgs};
use super::table;
use crate::{Error, Result};

/// Arguments of `resources`.
#[derive(Debug, Args)]
pub struct ResourcesArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// Search text: an id, a name or alias, a prefix, or a part of a hyphenated name
    /// (`jellyfin` finds `media-jellyfin-1`). Without it, every resource is listed.
    #[arg(value_name = "QUERY", conflicts_with = "id")]
    pub query: Option<String>,
    /// Only this kind: node, host, lxc, vm, docker_container, pod, cluster, namespace,
    /// kube_node or deployment.
    #[arg(long, value_name = "KIND", conflicts_with = "id")]
    pub kind: Option<String>,
    /// At most this many (default 200, at most 5000).
    #[arg(long, value_name = "N", conflicts_with = "id")]
    pub limit: Option<usize>,
    /// Show one resource with its facts, children and routing chain.
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
    /// Print the API's JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `resources`.
pub fn run(args: ResourcesArgs) -> Result<()> {
    super::client_runtime()?.block_on(async {
        let client = ApiClient::new(&args.client)?;
        let path = match &args.id {
            Some(id) => format!("/api/resources/{}", encode(id.trim())),
            None => {
                let mut path = format!(
                    "/api/resources?q={}",
                    encode(args.query.as_deref().unwrap_or(""))
                );
                if let Some(kind) = &args.kind {
                    path += &format!("&kind={}", encode(kind));
                }
                if let Some(limit) = args.limit {
                    path += &format!("&limit={limit}");
                }
                path
            }
        };
        let value: Value = client.json(client.request(Method::GET, &path)).await?;
        let text = if args.json {
            serde_json::to_string_pretty(&value)? + "\n"
        } else if args.id.is_some() {
            detail(&value)
        } else {
            list(&value)
        };
        std::io::stdout()
            .lock()
            .write_all(text.as_bytes())
            .map_err(Error::WriteOutput)
    })
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "-".to_owned(),
        Value::Array(items) => items.iter().map(text).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

/// The list as a table: id, kind, name, status, parent, agent.
pub fn list(value: &Value) -> String {
    let rows: Vec<Vec<String>> = value
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|r| {
            ["id", "kind", "name", "status", "parent", "agent"]
                .iter()
                .map(|k| text(&r[*k]))
                .collect()
        })
        .collect();
    table::render(&["ID", "KIND", "NAME", "STATUS", "PARENT", "AGENT"], &rows)
}

/// One resource: its fields, then the chain (best first) and children.
pub fn detail(r: &Value) -> String {
    let mut out = String::new();
    for key in ["id", "kind", "name", "aliases", "status", "parent"] {
        out += &format!("{key}: {}\n", text(&r[key]));
    }
    if let Some(facts) = r["facts"].as_object() {
        for (key, value) in facts {
            out += &format!("facts.{key}: {}\n", compact(value));
        }
    }
    let chain: Vec<Vec<String>> = r["chain"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|p| {
            vec![
                text(&p["via"]),
                text(&p["target"]),
                text(&p["agent"]),
                if p["connected"] == true { "yes" } else { "no" }.to_owned(),
            ]
        })
        .collect();
    out += "\nrouting chain (best first):\n";
    out += &table::render(&["VIA", "TARGET", "AGENT", "CONNECTED"], &chain);
    let children = text(&r["children"]);
    if !children.is_empty() && children != "-" {
        out += &format!("\nchildren: {children}\n");
    }
    out
}

fn compact(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Percent-encode for a URL path segment or query value.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b':' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lists_and_details_render() {
        let listed = list(&json!([
            {"id": "lxc:delly:141", "kind": "lxc", "name": "media", "aliases": [],
             "parent": "node:delly", "status": "running", "agent": "a1"},
            {"id": "vm:delly:204", "kind": "vm", "name": "win", "aliases": [],
             "parent": "node:delly", "status": "stopped", "agent": null},
        ]));
        let lines: Vec<&str> = listed.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(
            lines[0].find("KIND"),
            lines[1].find("  lxc  ").map(|i| i + 2)
        );
        assert!(lines[2].ends_with('-'), "{listed}");
        let shown = detail(&json!({
            "id": "lxc:delly:141", "kind": "lxc", "name": "media", "aliases": ["141"],
            "parent": "node:delly", "status": "running",
            "facts": {"ips": ["192.168.1.41"]},
            "children": ["docker_container:media:689b21f1c3ca"],
            "chain": [{"agent": "a1", "target": "host", "via": "direct", "connected": true},
                      {"agent": "a2", "target": "lxc:141", "via": "pct_exec", "connected": false}],
        }));
        assert!(shown.contains("facts.ips: [\"192.168.1.41\"]"), "{shown}");
        let direct = shown.find("direct").expect("direct");
        assert!(direct < shown.find("pct_exec").expect("pct"), "{shown}");
        assert!(shown.contains("children: docker_container:media:689b21f1c3ca"));
        assert_eq!(encode("a b/c:d"), "a%20b%2Fc:d");
    }
}
