//! One scan of a cluster: capped lists of nodes, namespaces, deployments, pods and warning
//! events, turned into sorted resources.

use super::convert::{
    cluster_resource, deployment_resource, namespace_resource, node_resource, pod_resource,
};
use super::events::warnings;
use crate::inventory::ScanError;
use crate::kube_api::types::{Deployment, Event, Namespace, Node, Pod};
use crate::kube_api::{Client, Error, ListParams};
use serde::de::DeserializeOwned;
use tracing::{debug, warn};
use vigil_shared::resource::{Resource, ResourceId};

/// What one list found: at most `cap` objects and, when there were more, the cap note.
#[derive(Debug)]
pub struct Listed<K> {
    pub items: Vec<K>,
    pub capped: Option<String>,
}

/// Whether an error is the API saying this account may not list the kind.
fn forbidden(e: &Error) -> bool {
    matches!(e, Error::Api(s) if s.code == 403)
}

/// List up to `cap` objects of the collection at `path` (`/api/v1/pods`), page by page;
/// `kind` names them in the cap note (`pod: 2000 of 7312`, or `event: 2000 of 2000+` when
/// the API does not say how many).
pub async fn list_capped<K: DeserializeOwned>(
    client: &Client,
    path: &str,
    field_selector: Option<&str>,
    cap: usize,
    kind: &str,
) -> Result<Listed<K>, Error> {
    let mut items: Vec<K> = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let room = cap.saturating_sub(items.len()).max(1);
        let params = ListParams {
            field_selector: field_selector.map(str::to_owned),
            limit: Some(u32::try_from(room).unwrap_or(u32::MAX)),
            continue_token: token.take(),
        };
        let page = client.list::<K>(path, &params).await?;
        let more = page.metadata.continue_.filter(|t| !t.is_empty());
        let remaining = page.metadata.remaining_item_count;
        let taken = page.items.len();
        items.extend(page.items);
        if items.len() > cap {
            // A server that ignores `limit`: cut here and count what it sent.
            let total = items.len() as u64 + u64::try_from(remaining.unwrap_or(0)).unwrap_or(0);
            items.truncate(cap);
            return Ok(Listed {
                capped: Some(format!("{kind}: {cap} of {total}")),
                items,
            });
        }
        match more {
            None => {
                return Ok(Listed {
                    items,
                    capped: None,
                });
            }
            // An empty page with a token would loop forever; treat it as the end.
            Some(_) if taken == 0 => {
                return Ok(Listed {
                    items,
                    capped: None,
                });
            }
            Some(next) if items.len() < cap => token = Some(next),
            Some(_) => {
                let capped = match remaining.and_then(|r| u64::try_from(r).ok()) {
                    Some(rest) if rest > 0 => format!("{kind}: {cap} of {}", cap as u64 + rest),
                    _ => format!("{kind}: {cap} of {cap}+"),
                };
                return Ok(Listed {
                    items,
                    capped: Some(capped),
                });
            }
        }
    }
}

/// Like [`list_capped`], but a kind this account may not list is logged and left empty.
async fn list_optional<K: DeserializeOwned>(
    client: &Client,
    path: &str,
    field_selector: Option<&str>,
    cap: usize,
    kind: &str,
) -> Result<Listed<K>, Error> {
    match list_capped(client, path, field_selector, cap, kind).await {
        Err(e) if forbidden(&e) => {
            warn!(kind, error = %e, "not allowed to list this kind; reporting none");
            Ok(Listed {
                items: Vec::new(),
                capped: None,
            })
        }
        other => other,
    }
}

/// Everything one scan found: the resources (sorted by id) and the cap notes.
pub async fn scan(
    client: &Client,
    cluster: &str,
    agent: &str,
    cap: usize,
) -> Result<(Vec<Resource>, Vec<String>), ScanError> {
    let (nodes, namespaces, deployments, pods, events, version) = tokio::join!(
        list_optional::<Node>(client, "/api/v1/nodes", None, cap, "kube_node"),
        list_capped::<Namespace>(client, "/api/v1/namespaces", None, cap, "namespace"),
        list_capped::<Deployment>(client, "/apis/apps/v1/deployments", None, cap, "deployment"),
        list_capped::<Pod>(client, "/api/v1/pods", None, cap, "pod"),
        list_optional::<Event>(client, "/api/v1/events", Some("type=Warning"), cap, "event"),
        client.apiserver_version(),
    );
    let failed =
        |what: &str, e: Error| ScanError::Unreachable(format!("listing {what} failed: {e}"));
    let nodes = nodes.map_err(|e| failed("nodes", e))?;
    let namespaces = namespaces.map_err(|e| failed("namespaces", e))?;
    let deployments = deployments.map_err(|e| failed("deployments", e))?;
    let pods = pods.map_err(|e| failed("pods", e))?;
    let events = events.map_err(|e| failed("warning events", e))?;
    let version = match version {
        Ok(info) => Some(info.git_version),
        Err(e) => {
            debug!(error = %e, "the API server did not say its version");
            None
        }
    };
    let capped: Vec<String> = [
        &nodes.capped,
        &namespaces.capped,
        &deployments.capped,
        &pods.capped,
        &events.capped,
    ]
    .into_iter()
    .flatten()
    .cloned()
    .collect();

    let warned = warnings(&events.items);
    let mut resources = vec![cluster_resource(cluster, nodes.items.len(), version)];
    resources.extend(nodes.items.iter().filter_map(|n| node_resource(cluster, n)));
    for ns in &namespaces.items {
        let Some(mut r) = namespace_resource(cluster, ns) else {
            continue;
        };
        if let Some(text) = warned.namespace(&r.name) {
            r.facts.details.insert("warning_events".to_owned(), text);
        }
        resources.push(r);
    }
    resources.extend(
        deployments
            .items
            .iter()
            .filter_map(|d| deployment_resource(cluster, d)),
    );
    for pod in &pods.items {
        let Some(mut r) = pod_resource(cluster, agent, pod) else {
            continue;
        };
        if let ResourceId::Pod {
            namespace, name, ..
        } = &r.id
            && let Some(text) = warned.pod(namespace, name)
        {
            r.facts.details.insert("warning_events".to_owned(), text);
        }
        resources.push(r);
    }
    resources.sort_by_cached_key(|r| r.id.to_string());
    resources.dedup_by(|a, b| a.id == b.id);
    Ok((resources, capped))
}
