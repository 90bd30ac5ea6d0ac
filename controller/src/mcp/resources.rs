//! The inventory as MCP resources: `vigil://resources` (every resource's summary, as
//! `GET /api/resources` lists them) and `vigil://resources/{id}` (one resource with its
//! facts, children and routing chain, as `GET /api/resources/{id}`). Listed in pages.

use rmcp::model::{Resource, ResourceContents};
use serde_json::Value;
use vigil_shared::resource::ResourceId;

use crate::agents::Agents;
use crate::api::resources::{detail, summary};

/// The URI of the whole inventory.
pub const INDEX_URI: &str = "vigil://resources";
/// Resources per page of `resources/list`.
pub const PAGE: usize = 500;
/// Most resources the index lists.
const INDEX_MAX: usize = 5000;

const JSON: &str = "application/json";

fn uri_of(id: &ResourceId) -> String {
    format!("{INDEX_URI}/{id}")
}

/// One page of the resource list from `offset` (the index first), and the next offset.
pub fn list(agents: &Agents, offset: usize) -> (Vec<Resource>, Option<usize>) {
    let all = agents.inventory().search("", None, usize::MAX);
    let mut page = Vec::new();
    if offset == 0 {
        page.push(
            Resource::new(INDEX_URI, "inventory")
                .with_title("Vigil inventory")
                .with_description(
                    "Every resource Vigil knows (hosts, nodes, guests, containers, clusters) \
                     with its id, kind, name, aliases, parent, status and agent",
                )
                .with_mime_type(JSON),
        );
    }
    for resource in all.iter().skip(offset).take(PAGE) {
        let name = if resource.name.is_empty() {
            resource.id.to_string()
        } else {
            resource.name.clone()
        };
        page.push(
            Resource::new(uri_of(&resource.id), name)
                .with_title(format!("{} {}", resource.kind.as_str(), resource.id))
                .with_description(crate::inventory::names::describe(resource))
                .with_mime_type(JSON),
        );
    }
    let next = offset + PAGE;
    (page, (next < all.len()).then_some(next))
}

/// The contents of `uri`, or `None` when it names nothing.
pub fn read(agents: &Agents, uri: &str) -> Option<ResourceContents> {
    let json: Value = if uri == INDEX_URI {
        let found = agents.inventory().search("", None, INDEX_MAX);
        Value::Array(found.iter().map(summary).collect())
    } else {
        let id: ResourceId = uri
            .strip_prefix(INDEX_URI)?
            .strip_prefix('/')?
            .parse()
            .ok()?;
        let view = agents.inventory().get(&id)?;
        detail(agents, &view)
    };
    let text = serde_json::to_string_pretty(&json).unwrap_or_default();
    Some(ResourceContents::text(text, uri).with_mime_type(JSON))
}
