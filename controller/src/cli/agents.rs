//! `vigil-controller agents [list] | revoke ID | hidden-paths AGENT`, through the
//! controller's HTTP API.

use std::io::Write;

use clap::{Args, Subcommand};
use reqwest::Method;
use serde_json::Value;

use super::client::{ApiClient, ClientArgs};
use crate::agents::AgentView;
use crate::clock::relative_rfc3339;
use crate::{Error, Result};

/// `vigil-controller agents …` (without a subcommand: `list`).
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct AgentsArgs {
    /// What to do (default: list).
    #[command(subcommand)]
    pub command: Option<AgentsCommand>,
    #[command(flatten)]
    pub list: ListArgs,
}

/// The `agents` subcommands.
#[derive(Debug, Subcommand)]
pub enum AgentsCommand {
    /// List enrolled agents: host name, connected, read-only, version, last seen, labels,
    /// and the id last (--json for the API's JSON).
    List(ListArgs),
    /// Revoke an agent: its certificate stops working and its live stream is cut.
    Revoke(RevokeArgs),
    /// Show or change the paths an agent's reads never see, besides the agent's own list
    /// (Vigil's state, its `[sandbox] hide`, the default credential stores), which
    /// nothing here can shorten. Without a change it shows both.
    HiddenPaths(HiddenPathsArgs),
}

/// Arguments of `agents list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// Print the API's JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `agents revoke`.
#[derive(Debug, Args)]
pub struct RevokeArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// The agent's id.
    pub id: String,
}

/// Arguments of `agents hidden-paths`.
#[derive(Debug, Args)]
pub struct HiddenPathsArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// The agent: its id, or its host name when one agent has it.
    pub agent: String,
    /// Hide this path too (an absolute path; `*` matches within one component;
    /// repeatable).
    #[arg(long, value_name = "PATH")]
    pub add: Vec<String>,
    /// Stop hiding this path (one set here before; repeatable).
    #[arg(long, value_name = "PATH")]
    pub remove: Vec<String>,
    /// Remove every path set here before the --add ones are added.
    #[arg(long)]
    pub clear: bool,
    /// Print the API's JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs an `agents` subcommand.
pub fn run(args: AgentsArgs) -> Result<()> {
    super::client_runtime()?.block_on(async {
        match args.command {
            None => list(args.list).await,
            Some(AgentsCommand::List(list_args)) => list(list_args).await,
            Some(AgentsCommand::Revoke(revoke_args)) => revoke(revoke_args).await,
            Some(AgentsCommand::HiddenPaths(hidden_args)) => hidden_paths(hidden_args).await,
        }
    })
}

async fn list(args: ListArgs) -> Result<()> {
    let client = ApiClient::new(&args.client)?;
    let agents: Vec<AgentView> = client
        .json(client.request(Method::GET, "/api/agents"))
        .await?;
    let text = if args.json {
        serde_json::to_string_pretty(&agents)? + "\n"
    } else {
        table(&agents)
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(Error::WriteOutput)
}

/// The agents as an aligned table.
pub fn table(agents: &[AgentView]) -> String {
    let now = crate::clock::unix_now();
    let header = [
        "HOSTNAME",
        "CONNECTED",
        "READ-ONLY",
        "VERSION",
        "LAST SEEN",
        "LABELS",
        "ID",
    ];
    let rows: Vec<Vec<String>> = agents
        .iter()
        .map(|a| {
            vec![
                a.hostname.clone(),
                if a.connected { "yes" } else { "no" }.to_owned(),
                if a.read_only { "yes" } else { "no" }.to_owned(),
                a.version.clone(),
                a.last_seen
                    .as_deref()
                    .map_or_else(|| "never".into(), |t| relative_rfc3339(t, now)),
                a.labels
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(","),
                a.id.clone(),
            ]
        })
        .collect();
    super::table::render(&header, &rows)
}

async fn revoke(args: RevokeArgs) -> Result<()> {
    let client = ApiClient::new(&args.client)?;
    let path = format!("/api/agents/{}/revoke", args.id.trim());
    let _: Value = client.json(client.request(Method::POST, &path)).await?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "revoked agent {}", args.id.trim()).map_err(Error::WriteOutput)
}

/// The id of the agent `name` names: an id as it is, else the one agent with that host
/// name.
async fn agent_id(client: &ApiClient, name: &str) -> Result<String> {
    let name = name.trim();
    if name.parse::<vigil_shared::ids::AgentId>().is_ok() {
        return Ok(name.to_owned());
    }
    let agents: Vec<AgentView> = client
        .json(client.request(Method::GET, "/api/agents"))
        .await?;
    let found: Vec<&AgentView> = agents.iter().filter(|a| a.hostname == name).collect();
    match found.as_slice() {
        [one] => Ok(one.id.clone()),
        [] => Err(Error::NotFound(format!(
            "no agent with id or host name {name:?} (see `vigil-controller agents`)"
        ))),
        many => Err(Error::InvalidInput(format!(
            "{} agents have the host name {name:?}; name one by id: {}",
            many.len(),
            many.iter()
                .map(|a| a.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

async fn hidden_paths(args: HiddenPathsArgs) -> Result<()> {
    let client = ApiClient::new(&args.client)?;
    let id = agent_id(&client, &args.agent).await?;
    let path = format!("/api/agents/{id}");
    let mut agent: Value = client.json(client.request(Method::GET, &path)).await?;
    let changing = args.clear || !args.add.is_empty() || !args.remove.is_empty();
    if changing {
        let current = strings(&agent["hidden_paths"]);
        let paths = edit_paths(current, &args.add, &args.remove, args.clear)?;
        let put = client
            .request(Method::PUT, &format!("{path}/hidden-paths"))
            .json(&serde_json::json!({ "paths": paths }));
        let _: Value = client.json(put).await?;
        agent = client.json(client.request(Method::GET, &path)).await?;
    }
    let text = if args.json {
        serde_json::to_string_pretty(&serde_json::json!({
            "id": id,
            "hidden_paths": agent["hidden_paths"],
            "sandbox": agent["facts"]["sandbox"],
        }))? + "\n"
    } else {
        describe_hidden(&agent)
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(Error::WriteOutput)
}

/// The strings of a JSON array (none when it is not one).
fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

/// `current` with `--clear`, `--remove` and `--add` applied; removing a path that is not
/// set is an error (a typo would otherwise change nothing, silently).
fn edit_paths(
    current: Vec<String>,
    add: &[String],
    remove: &[String],
    clear: bool,
) -> Result<Vec<String>> {
    let mut paths = if clear { Vec::new() } else { current };
    for gone in remove {
        let before = paths.len();
        paths.retain(|p| p != gone);
        if paths.len() == before && !clear {
            return Err(Error::InvalidInput(format!(
                "{gone:?} is not one of this agent's hidden paths set here"
            )));
        }
    }
    for path in add {
        if !paths.contains(path) {
            paths.push(path.clone());
        }
    }
    Ok(paths)
}

/// What `agents hidden-paths` prints: the paths set here, whether the agent applies them,
/// and everything it hides.
fn describe_hidden(agent: &Value) -> String {
    let set = strings(&agent["hidden_paths"]);
    let sandbox = &agent["facts"]["sandbox"];
    let applied = strings(&sandbox["controller_hidden_paths"]);
    let all = strings(&sandbox["hidden_paths"]);
    let refused = strings(&sandbox["refused_hidden_paths"]);
    let host = agent["hostname"].as_str().unwrap_or("?");
    let mut out = format!("agent {host} ({})\n", agent["id"].as_str().unwrap_or("?"));
    out.push_str("set here:\n");
    if set.is_empty() {
        out.push_str("  (none)\n");
    }
    for p in &set {
        let state = if applied.contains(p) {
            "applied"
        } else if agent["connected"].as_bool() == Some(true) {
            "not reported yet"
        } else {
            "applied when it connects"
        };
        out.push_str(&format!("  {p}  ({state})\n"));
    }
    for r in &refused {
        out.push_str(&format!("  refused by the agent: {r}\n"));
    }
    out.push_str(&format!(
        "hidden on the agent in all: {} patterns (--json lists them)\n",
        all.len()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_aligned() {
        let agent = AgentView {
            id: "0b6f3a52-0000-4000-8000-000000000001".into(),
            hostname: "node-1".into(),
            connected: true,
            read_only: false,
            labels: [("site".to_owned(), "home".to_owned())].into(),
            last_seen: None,
            version: "0.1.0".into(),
            sandbox: None,
        };
        let text = table(&[agent]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].find("HOSTNAME"), lines[1].find("node-1"));
        assert!(lines[1].starts_with("node-1"), "{text}");
        assert!(
            lines[1].ends_with("0b6f3a52-0000-4000-8000-000000000001"),
            "{text}"
        );
    }

    #[test]
    fn hidden_paths_are_edited_in_order_and_a_typo_in_remove_is_an_error() {
        let current = vec!["/a".to_owned(), "/b".to_owned()];
        let edited = edit_paths(
            current.clone(),
            &["/c".into(), "/a".into()],
            &["/b".into()],
            false,
        )
        .unwrap();
        assert_eq!(edited, vec!["/a".to_owned(), "/c".to_owned()]);
        assert!(edit_paths(current.clone(), &[], &["/x".into()], false).is_err());
        assert_eq!(
            edit_paths(current, &["/d".into()], &[], true).unwrap(),
            vec!["/d".to_owned()]
        );
    }
}
