//! Resolve tools (`query`), finding the resource a call names, and `knowledge`.

use std::time::Instant;

use serde_json::{Value, json};
use vigil_shared::resource::{Resource, ResourceId, ResourceKind};

use super::{Effects, Prepared, ToolRunner};
use crate::assistant::service::Assistant;
use crate::assistant::state::SessionState;
use crate::clock::unix_now;
use crate::tools::envelope::{Envelope, ErrorCode};

/// Most resources a search or list answers.
const MAX_RESULTS: usize = 50;

/// The resource `name` means: one this session resolved (id, name or alias), or a
/// canonical id or an exact name or alias in the inventory.
pub(in crate::assistant) fn find(
    assistant: &Assistant,
    state: &mut SessionState,
    name: &str,
) -> Result<Resource, Envelope> {
    let name = name.trim().trim_start_matches('@');
    if let Some(resource) = state.context.resolve(name, Instant::now()) {
        return Ok(resource);
    }
    let inventory = assistant.exec().agents().inventory();
    if let Ok(id) = name.parse::<ResourceId>()
        && let Some(view) = inventory.get(&id)
    {
        return Ok(view.resource);
    }
    let wanted = name.to_lowercase();
    let exact: Vec<Resource> = inventory
        .search(name, None, 20)
        .into_iter()
        .filter(|r| {
            r.name.to_lowercase() == wanted || r.aliases.iter().any(|a| a.to_lowercase() == wanted)
        })
        .collect();
    match exact.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(Envelope::failed(
            ErrorCode::NotFound,
            format!("no resource is named {name:?}"),
            false,
            json!({ "recovery_hint": "use query search to find the resource and its id" }),
        )),
        many => Err(Envelope::failed(
            ErrorCode::InvalidInput,
            format!(
                "{name:?} names {} resources; use one of their ids",
                many.len()
            ),
            false,
            json!({ "candidates": many.iter().map(|r| r.id.to_string()).collect::<Vec<_>>() }),
        )),
    }
}

fn summary(resource: &Resource) -> Value {
    json!({
        "id": resource.id.to_string(),
        "kind": resource.kind.as_str(),
        "name": resource.name,
        "aliases": resource.aliases,
        "parent": resource.parent.as_ref().map(ToString::to_string),
        "status": resource.status,
    })
}

fn kind_of(args: &Value) -> Option<ResourceKind> {
    args.get("kind").and_then(Value::as_str).and_then(|k| {
        ResourceKind::ALL
            .iter()
            .copied()
            .find(|kind| kind.as_str() == k)
    })
}

/// `query`: search, get, list, topology, health.
pub(super) fn query(runner: &ToolRunner, prepared: &Prepared) -> (Envelope, Effects) {
    let agents = runner.assistant.exec().agents();
    let inventory = agents.inventory();
    let args = &prepared.args;
    let mut effects = Effects::default();
    let envelope = match prepared.action.as_str() {
        "search" | "list" => {
            let query = args
                .get("query")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let parent = args.get("parent").and_then(Value::as_str);
            let found: Vec<Resource> = inventory
                .search(query, kind_of(args), MAX_RESULTS * 4)
                .into_iter()
                .filter(|r| {
                    parent.is_none_or(|p| r.parent.as_ref().is_some_and(|rp| rp.to_string() == p))
                })
                .take(MAX_RESULTS)
                .collect();
            let data = json!({ "count": found.len(), "resources": found.iter().map(summary).collect::<Vec<_>>() });
            effects.registered = found;
            if data["count"] == 0 {
                Envelope::failed(
                    ErrorCode::NotFound,
                    format!("nothing matches {query:?}"),
                    false,
                    json!({ "recovery_hint": "try a shorter name, or query list" }),
                )
            } else {
                Envelope::success(data)
            }
        }
        "get" | "topology" => match &prepared.target {
            Some(resource) => {
                let view = inventory.get(&resource.id);
                let children = view
                    .as_ref()
                    .map(|v| v.children.clone())
                    .unwrap_or_default();
                let mut data = serde_json::to_value(resource).unwrap_or_default();
                data["children"] =
                    json!(children.iter().map(ToString::to_string).collect::<Vec<_>>());
                if prepared.action == "topology" {
                    let mut chain = Vec::new();
                    let mut parent = resource.parent.clone();
                    while let Some(id) = parent.take() {
                        chain.push(id.to_string());
                        parent = inventory.get(&id).and_then(|v| v.resource.parent);
                        if chain.len() > 8 {
                            break;
                        }
                    }
                    data["parents"] = json!(chain);
                }
                effects.registered.push(resource.clone());
                if prepared.action == "get" {
                    effects.explicit.push(resource.id.clone());
                }
                Envelope::success(data)
            }
            None => {
                let top: Vec<Resource> = inventory
                    .search("", None, 500)
                    .into_iter()
                    .filter(|r| r.parent.is_none())
                    .take(MAX_RESULTS)
                    .collect();
                let data = json!({ "resources": top.iter().map(summary).collect::<Vec<_>>() });
                effects.registered = top;
                Envelope::success(data)
            }
        },
        "health" => {
            let sessions = agents.sessions();
            let connected = sessions.all().len();
            Envelope::success(
                json!({ "agents_connected": connected, "resources": inventory.len() }),
            )
        }
        other => Envelope::blocked(
            ErrorCode::InvalidInput,
            format!("unknown query action {other:?}"),
            json!({}),
        ),
    };
    (envelope, effects)
}

/// `knowledge`: recall or remember notes in Vigil's own store.
pub(super) async fn knowledge(runner: &ToolRunner, prepared: &Prepared) -> Envelope {
    let store = runner.assistant.store();
    let text = |key: &str| {
        prepared
            .args
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let result = match prepared.action.as_str() {
        "remember" => store
            .remember_note("global", &text("key"), &text("text"), unix_now())
            .await
            .map(|()| json!({ "remembered": text("key") })),
        _ => store
            .recall_notes("global", &text("query"))
            .await
            .map(|notes| json!({ "notes": notes })),
    };
    match result {
        Ok(data) => Envelope::success(data),
        Err(error) => Envelope::failed(
            ErrorCode::ExecutionFailed,
            error.to_string(),
            true,
            json!({}),
        ),
    }
}
