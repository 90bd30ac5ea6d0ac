//! Pure parsing of what the Proxmox VE tools print: the JSON lists of `pvesh get` here,
//! the `key: value` text of `pct config`/`qm config` in [`guest_config`], and the JSON lines of
//! `docker ps` in [`docker_ps`]. Malformed entries are skipped (and logged), never a panic.

mod docker_ps;
mod guest_config;

pub use docker_ps::{DockerEntry, docker_ps};
pub use guest_config::{GuestConfig, config};

use crate::exec::ExecError;
use serde_json::{Map, Value};
use tracing::warn;

/// One entry of `pvesh get /nodes`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeEntry {
    pub name: String,
    pub status: String,
    pub maxcpu: Option<u64>,
    pub maxmem: Option<u64>,
    pub uptime: Option<u64>,
}

/// One entry of `pvesh get /nodes/<node>/lxc` or `…/qemu`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GuestEntry {
    pub vmid: u32,
    pub name: Option<String>,
    pub status: String,
    pub cpus: Option<String>,
    pub maxmem: Option<u64>,
    pub maxdisk: Option<u64>,
    pub uptime: Option<u64>,
    /// Sorted, once each.
    pub tags: Vec<String>,
    pub template: bool,
}

fn json_list(json: &[u8], what: &str) -> Result<Vec<Map<String, Value>>, ExecError> {
    let value: Value = serde_json::from_slice(json)
        .map_err(|e| ExecError::Unusable(format!("{what}: not JSON ({e})")))?;
    let Value::Array(items) = value else {
        return Err(ExecError::Unusable(format!("{what}: expected a JSON list")));
    };
    Ok(items
        .into_iter()
        .filter_map(|item| match item {
            Value::Object(map) => Some(map),
            other => {
                warn!(what, entry = %other, "skipping a list entry that is not an object");
                None
            }
        })
        .collect())
}

/// A number, or a string holding one (older Proxmox prints some numbers as strings).
fn number(map: &Map<String, Value>, key: &str) -> Option<f64> {
    match map.get(key)? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|n: &f64| n.is_finite())
}

fn unsigned(map: &Map<String, Value>, key: &str) -> Option<u64> {
    match map.get(key)? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn text(map: &Map<String, Value>, key: &str) -> Option<String> {
    match map.get(key)? {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        _ => None,
    }
}

/// `pvesh get /nodes --output-format json`.
pub fn nodes(json: &[u8]) -> Result<Vec<NodeEntry>, ExecError> {
    Ok(json_list(json, "pvesh get /nodes")?
        .into_iter()
        .filter_map(|map| {
            let Some(name) = text(&map, "node") else {
                warn!("skipping a node without a name");
                return None;
            };
            Some(NodeEntry {
                status: text(&map, "status").unwrap_or_else(|| "unknown".to_owned()),
                maxcpu: unsigned(&map, "maxcpu"),
                maxmem: unsigned(&map, "maxmem"),
                uptime: unsigned(&map, "uptime"),
                name,
            })
        })
        .collect())
}

/// `pvesh get /nodes/<node>/lxc` or `…/qemu`, sorted by vmid, once each.
pub fn guests(json: &[u8], what: &str) -> Result<Vec<GuestEntry>, ExecError> {
    let mut guests: Vec<GuestEntry> = json_list(json, what)?
        .into_iter()
        .filter_map(|map| {
            let Some(vmid) = unsigned(&map, "vmid").and_then(|v| u32::try_from(v).ok()) else {
                warn!(what, entry = ?map.get("vmid"), "skipping a guest without a valid vmid");
                return None;
            };
            let mut tags: Vec<String> = text(&map, "tags")
                .unwrap_or_default()
                .split([';', ',', ' '])
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
                .collect();
            tags.sort();
            tags.dedup();
            Some(GuestEntry {
                vmid,
                name: text(&map, "name"),
                status: text(&map, "status").unwrap_or_else(|| "unknown".to_owned()),
                cpus: number(&map, "cpus").map(|n| {
                    if n.fract() == 0.0 {
                        format!("{n:.0}")
                    } else {
                        n.to_string()
                    }
                }),
                maxmem: unsigned(&map, "maxmem"),
                maxdisk: unsigned(&map, "maxdisk"),
                uptime: unsigned(&map, "uptime"),
                tags,
                template: number(&map, "template").is_some_and(|t| t != 0.0),
            })
        })
        .collect();
    guests.sort_by_key(|g| g.vmid);
    guests.dedup_by_key(|g| g.vmid);
    Ok(guests)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_and_guest_lists_parse_leniently() {
        let list = nodes(
            br#"[{"node":"delly","status":"online","maxcpu":8,"maxmem":"1024","uptime":60,"cpu":0.1},
                {"status":"online"}, 7, {"node":"pve2"}]"#,
        )
        .unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(
            list[0],
            NodeEntry {
                name: "delly".into(),
                status: "online".into(),
                maxcpu: Some(8),
                maxmem: Some(1024),
                uptime: Some(60),
            }
        );
        assert_eq!(list[1].status, "unknown");
        assert!(
            nodes(b"{\"node\":\"x\"}")
                .unwrap_err()
                .to_string()
                .contains("list")
        );
        assert!(matches!(nodes(b"[{"), Err(ExecError::Unusable(t)) if t.contains("not JSON")));

        let list = guests(
            br#"[{"vmid":"142","name":"b","status":"stopped","cpus":0.5,"tags":"z;a,a"},
                {"vmid":141,"name":"a","status":"running","cpus":2,"maxmem":4096,"template":1},
                {"vmid":-3}, {"vmid":"x"}, {"name":"no-id"}, {"vmid":141,"name":"again"}]"#,
            "lxc",
        )
        .unwrap();
        assert_eq!(list.iter().map(|g| g.vmid).collect::<Vec<_>>(), [141, 142]);
        assert_eq!(list[0].name.as_deref(), Some("a"));
        assert_eq!(list[0].cpus.as_deref(), Some("2"));
        assert!(list[0].template);
        assert_eq!(list[1].cpus.as_deref(), Some("0.5"));
        assert_eq!(list[1].tags, ["a", "z"]);
        assert_eq!(list[1].maxmem, None);
    }
}
