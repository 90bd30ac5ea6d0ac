//! `docker ps --all --no-trunc --format '{{json .}}'`, run inside an LXC.

use super::text;
use serde_json::Value;
use std::collections::BTreeMap;
use tracing::debug;

/// One line of `docker ps --format '{{json .}}'`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DockerEntry {
    /// The full id, lower-case hex.
    pub id: String,
    pub name: String,
    pub image: String,
    pub state: String,
    pub status: String,
    pub ports: Vec<String>,
    pub labels: BTreeMap<String, String>,
    pub created: String,
    pub networks: String,
}

/// Docker's `Labels` column: `k=v,k2=v2`. A piece without `=` belongs to the value
/// before it (values may contain commas).
pub fn labels(text: &str) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::new();
    let mut last: Option<String> = None;
    for piece in text.split(',') {
        match piece.split_once('=') {
            Some((k, v)) if !k.is_empty() => {
                labels.insert(k.to_owned(), v.to_owned());
                last = Some(k.to_owned());
            }
            _ => {
                if let Some(value) = last.as_ref().and_then(|k| labels.get_mut(k)) {
                    value.push(',');
                    value.push_str(piece);
                }
            }
        }
    }
    labels
}

/// The state of a container from its `Status` text, when `State` is missing.
fn state_from_status(status: &str) -> &'static str {
    let status = status.to_ascii_lowercase();
    if status.starts_with("up") {
        if status.contains("(paused)") {
            "paused"
        } else {
            "running"
        }
    } else if status.starts_with("exited") {
        "exited"
    } else if status.starts_with("created") {
        "created"
    } else if status.starts_with("restarting") {
        "restarting"
    } else if status.starts_with("removal") {
        "removing"
    } else if status.starts_with("dead") {
        "dead"
    } else {
        "unknown"
    }
}

/// `docker ps --all --no-trunc --format '{{json .}}'`: one container per line; lines that
/// are not a container (warnings, junk) are skipped. Sorted by id.
pub fn docker_ps(output: &str) -> Vec<DockerEntry> {
    let mut containers: Vec<DockerEntry> = output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .filter_map(|line| {
            let Ok(Value::Object(map)) = serde_json::from_str::<Value>(line) else {
                debug!(line, "skipping a docker ps line that is not a JSON object");
                return None;
            };
            let field = |k: &str| text(&map, k).unwrap_or_default();
            let id = field("ID").to_ascii_lowercase();
            if id.len() < 12 || !id.chars().all(|c| c.is_ascii_hexdigit()) {
                debug!(id, "skipping a docker ps entry without a hex id");
                return None;
            }
            let status = field("Status");
            let state = text(&map, "State")
                .map(|s| s.to_ascii_lowercase())
                .unwrap_or_else(|| state_from_status(&status).to_owned());
            let mut ports: Vec<String> = field("Ports")
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_owned)
                .collect();
            ports.sort();
            ports.dedup();
            let name = field("Names");
            let name = name
                .split(',')
                .next()
                .unwrap_or_default()
                .trim_start_matches('/');
            Some(DockerEntry {
                name: name.to_owned(),
                image: field("Image"),
                labels: labels(&field("Labels")),
                created: field("CreatedAt"),
                networks: field("Networks"),
                ports,
                state,
                status,
                id,
            })
        })
        .collect();
    containers.sort_by(|a, b| a.id.cmp(&b.id));
    containers.dedup_by(|a, b| a.id == b.id);
    containers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docker_ps_lines_become_containers() {
        let out = concat!(
            r#"{"ID":"96D2065E0899ea797f86637089f4dde79465f7d00c9957ed458678d9b09b9216","Names":"/media-homepage-1,other","Image":"ghcr.io/gethomepage/homepage:v0.9.2","Labels":"com.docker.compose.service=homepage,homepage.widgets=search,clock,=odd","Ports":"0.0.0.0:3000->3000/tcp, :::3000->3000/tcp, 0.0.0.0:3000->3000/tcp","Status":"Up 3 days (Paused)"}"#,
            "\nWARNING: something\n\n",
            r#"{"ID":"xyz","Names":"bad"}"#,
            "\n",
            r#"{"ID":"689b21f1c3ca3433","Names":"jf","State":"Running","Status":"Exited (0) 2 hours ago","Labels":""}"#,
            "\n[1,2]\n"
        );
        let list = docker_ps(out);
        assert_eq!(list.len(), 2, "{list:?}");
        assert_eq!(list[0].id, "689b21f1c3ca3433");
        assert_eq!(list[0].state, "running");
        assert!(list[0].labels.is_empty());
        let home = &list[1];
        assert_eq!(home.name, "media-homepage-1");
        assert_eq!(home.state, "paused");
        assert_eq!(home.ports, ["0.0.0.0:3000->3000/tcp", ":::3000->3000/tcp"]);
        assert_eq!(home.labels["homepage.widgets"], "search,clock,=odd");
        assert_eq!(home.labels["com.docker.compose.service"], "homepage");
        for (status, state) in [
            ("Exited (137) 5 minutes ago", "exited"),
            ("Created", "created"),
            ("Restarting (1) 3 seconds ago", "restarting"),
            ("Dead", "dead"),
            ("Up 2 seconds", "running"),
            ("", "unknown"),
        ] {
            assert_eq!(state_from_status(status), state, "{status}");
        }
    }
}
