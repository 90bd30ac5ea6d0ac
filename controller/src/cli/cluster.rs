//! `vigil-controller cluster`: the controller's replicas, through `GET /api/cluster`
//! (admin token).

use std::io::Write;

use clap::Args;
use reqwest::Method;

use super::client::{ApiClient, ClientArgs};
use crate::api::cluster::ClusterView;
use crate::clock::relative_rfc3339;
use crate::{Error, Result};

/// Arguments of `vigil-controller cluster`.
#[derive(Debug, Args)]
pub struct ClusterArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// Print the API's JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Lists the replicas.
pub fn run(args: &ClusterArgs) -> Result<()> {
    super::client_runtime()?.block_on(async {
        let client = ApiClient::new(&args.client)?;
        let view: ClusterView = client
            .json(client.request(Method::GET, "/api/cluster"))
            .await?;
        let text = if args.json {
            serde_json::to_string_pretty(&view)? + "\n"
        } else {
            table(&view)
        };
        std::io::stdout()
            .lock()
            .write_all(text.as_bytes())
            .map_err(Error::WriteOutput)
    })
}

/// The replicas as an aligned table; the one that answered is marked `*`.
pub fn table(view: &ClusterView) -> String {
    let now = crate::clock::unix_now();
    let header = [
        "REPLICA",
        "STATE",
        "AGENTS",
        "ADVERTISE",
        "GATEWAY",
        "LEASE",
        "STARTED",
        "VERSION",
    ];
    let rows: Vec<Vec<String>> = view
        .replicas
        .iter()
        .map(|r| {
            let me = if r.id == view.replica { " *" } else { "" };
            vec![
                format!("{}{me}", r.id),
                r.state.clone(),
                r.agents_held.to_string(),
                if r.advertise_address.is_empty() {
                    "-".into()
                } else {
                    r.advertise_address.clone()
                },
                r.gateway_address.clone(),
                relative_rfc3339(&r.lease_expires_at, now),
                relative_rfc3339(&r.started_at, now),
                r.version.clone(),
            ]
        })
        .collect();
    let mut text = super::table::render(&header, &rows);
    if view.fenced {
        text.push_str("the replica that answered is fenced: it lost its database lease\n");
    }
    text
}
