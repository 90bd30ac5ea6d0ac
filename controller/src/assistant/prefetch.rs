//! Context prefetch: before the first model call, the resources the user means are
//! resolved from the message, so the model starts from facts instead of searching.
//!
//! - `@mentions` (structured from the API, or typed as `@name` in the text) match by id,
//!   name or alias exactly, then by a prefix of at least 4 characters, then by a whole
//!   `-`/`_`/`.` separated part ("jellyfin" → `jellyfin-server`). The best tier must hold one
//!   resource; several are reported as ambiguous.
//! - Plain words of the message (4 characters or more) match only exactly or by a whole
//!   part, and only when that names one resource, so ordinary words rarely match.
//! - The block gives each match's full routing chain (a container in an LXC on a node, and
//!   which agent runs its commands how) and its bind mounts (host path → container path),
//!   and says plainly which mentions match nothing, so the model does not look for them.
//!
//! Pure: the inventory is passed in as two functions.

use std::collections::BTreeSet;

use vigil_shared::resource::{Resource, ResourceId};

pub use crate::inventory::names::MIN_PREFIX;
use crate::inventory::names::{lower_names, match_token};
/// Most resources a prefetch registers.
pub const MAX_MATCHES: usize = 8;

/// What the prefetch found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prefetch {
    /// Resources the user means, to register as explicitly accessed.
    pub matched: Vec<Resource>,
    /// Mentions that match nothing.
    pub unmatched: Vec<String>,
    /// Mentions that match several resources, with their ids.
    pub ambiguous: Vec<(String, Vec<String>)>,
    /// The authoritative block for the prompt (empty when there is nothing to say).
    pub block: String,
}

/// `@name` mentions typed in the text.
fn typed_mentions(message: &str) -> Vec<String> {
    message
        .split_whitespace()
        .filter_map(|w| w.strip_prefix('@'))
        .map(|w| w.trim_end_matches(|c: char| !(c.is_alphanumeric() || "-_.:".contains(c))))
        .map(|w| w.trim_end_matches(['.', ':']))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Generic words that never match a name by a part when they appear as plain words
/// ("the server" is not `jellyfin-server`); as `@mentions` they still do.
const GENERIC: &[&str] = &[
    "server",
    "servers",
    "docker",
    "host",
    "hosts",
    "node",
    "nodes",
    "container",
    "containers",
    "service",
    "services",
    "app",
    "apps",
    "data",
    "media",
    "backup",
    "backups",
    "proxy",
    "config",
    "logs",
    "test",
    "prod",
    "production",
    "staging",
    "main",
    "master",
    "worker",
    "web",
    "api",
    "db",
    "database",
    "cache",
    "home",
    "local",
    "disk",
    "storage",
    "network",
];

/// Plain words worth looking up (the text without its `@mentions`).
fn plain_words(message: &str) -> Vec<String> {
    let text: Vec<&str> = message
        .split_whitespace()
        .filter(|w| !w.starts_with('@'))
        .collect();
    let words: BTreeSet<String> = text
        .join(" ")
        .split(|c: char| !(c.is_alphanumeric() || "-_.".contains(c)))
        .map(|w| w.trim_matches(['.', '-', '_']).to_lowercase())
        .filter(|w| w.chars().count() >= MIN_PREFIX && !w.starts_with('@'))
        .collect();
    words.into_iter().collect()
}

/// Resolves the message's mentions and names. `search(text)` returns candidate resources
/// for a text (the inventory's search), `get(id)` one resource.
pub fn prefetch(
    message: &str,
    mentions: &[String],
    search: impl Fn(&str) -> Vec<Resource>,
    get: impl Fn(&ResourceId) -> Option<Resource>,
) -> Prefetch {
    let mut out = Prefetch::default();
    let mut seen = BTreeSet::new();
    let mut named: Vec<String> = mentions
        .iter()
        .map(|m| m.trim().trim_start_matches('@').to_owned())
        .collect();
    named.extend(typed_mentions(message));
    named.dedup();
    for mention in named.iter().filter(|m| !m.is_empty()) {
        let found = match_token(mention, &search(mention), true);
        match found.as_slice() {
            [] => out.unmatched.push(mention.clone()),
            [one] => {
                if seen.insert(one.id.clone()) {
                    out.matched.push(one.clone());
                }
            }
            many => out.ambiguous.push((
                mention.clone(),
                many.iter().map(|r| r.id.to_string()).collect(),
            )),
        }
    }
    for word in plain_words(message) {
        if named.iter().any(|m| m.eq_ignore_ascii_case(&word)) {
            continue;
        }
        let found = match_token(&word, &search(&word), false);
        let generic_part = GENERIC.contains(&word.as_str())
            && found.iter().all(|r| !lower_names(r).any(|n| n == word));
        if let [one] = found.as_slice()
            && !generic_part
            && seen.insert(one.id.clone())
        {
            out.matched.push(one.clone());
        }
    }
    out.matched.truncate(MAX_MATCHES);
    out.block = block(&out, get);
    out
}

fn chain(resource: &Resource, get: &impl Fn(&ResourceId) -> Option<Resource>) -> String {
    let mut text = format!(
        "{} ({} \"{}\", {})",
        resource.id,
        resource.kind.as_str(),
        resource.name,
        resource.status
    );
    let mut parent = resource.parent.clone();
    let mut depth = 0;
    while let Some(id) = parent.take() {
        depth += 1;
        match get(&id) {
            Some(p) => {
                text.push_str(&format!(
                    " on {} ({} \"{}\")",
                    p.id,
                    p.kind.as_str(),
                    p.name
                ));
                parent = p.parent.clone();
            }
            None => text.push_str(&format!(" on {id}")),
        }
        if depth >= 6 {
            break;
        }
    }
    match resource.paths.first() {
        Some(path) => text.push_str(&format!(
            "; commands run there via {} (agent {}, target {}): use resource_id {}",
            path.via.as_str(),
            path.agent,
            path.target,
            resource.id
        )),
        None => text.push_str("; no agent can run commands in it"),
    }
    for mount in &resource.facts.mounts {
        text.push_str(&format!(
            "; mount {} → {}{}",
            mount.host_path,
            mount.path,
            if mount.read_only { " (ro)" } else { "" }
        ));
    }
    text
}

fn block(out: &Prefetch, get: impl Fn(&ResourceId) -> Option<Resource>) -> String {
    let mut lines = Vec::new();
    for resource in &out.matched {
        lines.push(format!("- {}", chain(resource, &get)));
    }
    for (mention, ids) in &out.ambiguous {
        lines.push(format!(
            "- @{mention} matches several resources: {}; ask which one, or use an id",
            ids.join(", ")
        ));
    }
    for mention in &out.unmatched {
        lines.push(format!(
            "- @{mention} matches no known resource: do not search for it; say so"
        ));
    }
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "What the user refers to (from the inventory, authoritative):\n{}",
        lines.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assistant::gates::test_resource as resource;
    use vigil_shared::ids::ExecTarget;
    use vigil_shared::resource::{ExecPath, Mount, Via};

    fn inventory() -> Vec<Resource> {
        let mut homepage = resource(
            "docker_container:hp:3f2a9c0b1d2e",
            "homepage",
            Some("lxc:delly:141"),
        );
        homepage.paths.push(ExecPath {
            agent: "a1".into(),
            target: ExecTarget::LxcDocker {
                vmid: 141,
                container: "homepage".into(),
            },
            via: Via::PctExec,
        });
        homepage.facts.mounts.push(Mount {
            host_path: "/opt/homepage/config".into(),
            path: "/app/config".into(),
            read_only: false,
        });
        vec![
            resource("node:delly", "delly", None),
            resource("lxc:delly:141", "homepage-docker", Some("node:delly")),
            homepage,
            resource("lxc:delly:150", "jellyfin-server", Some("node:delly")),
            resource("vm:delly:200", "web-1", Some("node:delly")),
            resource("vm:delly:201", "web-2", Some("node:delly")),
        ]
    }

    fn run(message: &str, mentions: &[&str]) -> Prefetch {
        let all = inventory();
        let mentions: Vec<String> = mentions.iter().map(|m| m.to_string()).collect();
        prefetch(
            message,
            &mentions,
            |_| all.clone(),
            |id| all.iter().find(|r| &r.id == id).cloned(),
        )
    }

    fn ids(p: &Prefetch) -> Vec<String> {
        p.matched.iter().map(|r| r.id.to_string()).collect()
    }

    #[test]
    fn mentions_match_exactly_by_prefix_and_by_part() {
        assert_eq!(
            ids(&run("fix @homepage please", &[])),
            ["docker_container:hp:3f2a9c0b1d2e"]
        );
        assert_eq!(
            ids(&run("why is it slow?", &["jell"])),
            ["lxc:delly:150"],
            "prefix of 4"
        );
        assert_eq!(
            ids(&run("@jellyfin is slow", &[])),
            ["lxc:delly:150"],
            "a whole part"
        );
        assert!(
            run("@jel is slow", &[])
                .unmatched
                .contains(&"jel".to_owned()),
            "3 is too short"
        );
        assert_eq!(ids(&run("look at @lxc:delly:141.", &[])), ["lxc:delly:141"]);
    }

    #[test]
    fn unknown_and_ambiguous_mentions_are_said_plainly() {
        let p = run("restart @plex and @web", &[]);
        assert_eq!(p.unmatched, ["plex"]);
        assert_eq!(p.ambiguous[0].0, "web");
        assert!(
            p.block
                .contains("@plex matches no known resource: do not search for it"),
            "{}",
            p.block
        );
        assert!(p.block.contains("vm:delly:200, vm:delly:201"));
        assert!(p.matched.is_empty());
    }

    #[test]
    fn plain_names_match_only_exactly_or_by_part() {
        assert_eq!(
            ids(&run("why is jellyfin slow on delly", &[])),
            ["node:delly", "lxc:delly:150"]
        );
        assert!(
            run("check the logs of the server please", &[])
                .matched
                .is_empty(),
            "ordinary words"
        );
        assert!(
            run("jell is slow", &[]).matched.is_empty(),
            "no prefixes for plain words"
        );
    }

    #[test]
    fn the_block_gives_the_chain_and_mounts() {
        let p = run("@homepage", &[]);
        assert!(p.block.contains("docker_container:hp:3f2a9c0b1d2e (docker_container \"homepage\", running) on lxc:delly:141 (lxc \"homepage-docker\") on node:delly (node \"delly\")"), "{}", p.block);
        assert!(
            p.block
                .contains("via pct_exec (agent a1, target lxc:141/docker:homepage)"),
            "{}",
            p.block
        );
        assert!(
            p.block.contains("mount /opt/homepage/config → /app/config"),
            "{}",
            p.block
        );
        assert_eq!(run("hello there", &[]).block, "");
    }
}
