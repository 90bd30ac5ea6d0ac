//! Strict resolution and the routing check.
//!
//! - **Strict resolution:** a write needs a resource this session resolved (found by a
//!   query or named by the user), never a name the model made up.
//! - **Routing (failure mode 5, docs/design.md §9):** a command or file operation aimed at
//!   a node or host, while the session explicitly accessed a guest or container on it, most
//!   likely meant the guest: the same path often exists on both. It is refused with
//!   `ROUTING_MISMATCH`, auto-recoverable, naming the right target. Resources merely listed
//!   by bulk discovery do not count, and a host the user named is not second-guessed. It
//!   applies to `read` (every action), `control command`/`service` and `file_edit`; not to
//!   queries, metrics, Docker, Kubernetes or guest power operations, which legitimately
//!   aim at the parent.

use std::time::Instant;

use serde_json::json;
use vigil_shared::resource::{Resource, ResourceKind};

use super::GateBlock;
use super::context::ResolvedContext;
use crate::tools::call::ToolCall;
use crate::tools::envelope::ErrorCode;

/// A write's resource must be in the session's resolved context.
pub fn check_strict(
    context: &mut ResolvedContext,
    call: &ToolCall,
    now: Instant,
) -> Result<(), GateBlock> {
    let Some(name) = call.resource_id() else {
        return Ok(());
    };
    if context.resolve(name, now).is_some() {
        return Ok(());
    }
    let mut block = GateBlock::new(
        "strict_resolution",
        ErrorCode::StrictResolution,
        format!("{name:?} was not resolved in this session: a write needs a resource found first"),
        "find it with query search or query get, then use the id it returns",
    );
    block.details = json!({ "resource_id": name });
    Err(block)
}

/// True for calls the routing check applies to.
pub fn routed(call: &ToolCall) -> bool {
    matches!(
        (call.name(), call.action()),
        ("read", _) | ("control", "command" | "service") | ("file_edit", _)
    )
}

/// Refuses a call aimed at a host when the session explicitly accessed a guest on it.
pub fn check_routing(
    context: &ResolvedContext,
    call: &ToolCall,
    target: &Resource,
) -> Result<(), GateBlock> {
    if !routed(call) || !matches!(target.kind, ResourceKind::Node | ResourceKind::Host) {
        return Ok(());
    }
    if context.is_mentioned(&target.id) {
        return Ok(());
    }
    let children = context.explicit_children(&target.id);
    let Some(first) = children.first() else {
        return Ok(());
    };
    let mut block = GateBlock::new(
        "routing_mismatch",
        ErrorCode::RoutingMismatch,
        format!(
            "{} is the host of {}, which this session is working on: this {} {} would run on the host, \
             not inside {first}",
            target.id,
            children
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            call.name(),
            call.action()
        ),
        format!("use resource_id {first} to run it inside the guest"),
    );
    block.auto_recoverable = children.len() == 1;
    block.details = json!({
        "suggested_target": first.to_string(),
        "candidates": children.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "requested_target": target.id.to_string(),
    });
    Err(block)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assistant::gates::test_resource as resource;
    use crate::tools::call::parse_call;

    fn edit_on(target: &str) -> ToolCall {
        parse_call("file_edit", &json!({"action": "write", "resource_id": target, "path": "/opt/homepage/config/services.yaml", "content": "x"}).to_string()).unwrap()
    }

    #[test]
    fn regression_homepage_scenario_edit_on_the_node_is_routed_to_the_guest() {
        let now = Instant::now();
        let mut ctx = ResolvedContext::default();
        let node = resource("node:delly", "delly", None);
        ctx.register(node.clone(), now);
        ctx.register(
            resource("lxc:delly:141", "homepage-docker", Some("node:delly")),
            now,
        );
        ctx.register(
            resource("lxc:delly:142", "jellyfin", Some("node:delly")),
            now,
        );
        // Bulk discovery alone does not poison routing.
        check_routing(&ctx, &edit_on("delly"), &node).unwrap();
        // The user mentions the container: an edit on the node is a mismatch.
        ctx.mark_mentioned(&"lxc:delly:141".parse().unwrap(), now);
        let block = check_routing(&ctx, &edit_on("delly"), &node).unwrap_err();
        assert_eq!(block.code, ErrorCode::RoutingMismatch);
        assert!(block.auto_recoverable);
        assert_eq!(block.details["suggested_target"], "lxc:delly:141");
        // Queries and guest power operations on the node are fine.
        let reboot = parse_call(
            "control",
            r#"{"action":"guest","resource_id":"delly","operation":"reboot"}"#,
        )
        .unwrap();
        check_routing(&ctx, &reboot, &node).unwrap();
        // The user named the node too: no second-guessing.
        ctx.mark_mentioned(&"node:delly".parse().unwrap(), now);
        check_routing(&ctx, &edit_on("delly"), &node).unwrap();
    }

    #[test]
    fn writes_need_a_resolved_resource() {
        let now = Instant::now();
        let mut ctx = ResolvedContext::default();
        let block = check_strict(&mut ctx, &edit_on("lxc:delly:141"), now).unwrap_err();
        assert_eq!(block.code, ErrorCode::StrictResolution);
        ctx.register(
            resource("lxc:delly:141", "homepage-docker", Some("node:delly")),
            now,
        );
        check_strict(&mut ctx, &edit_on("lxc:delly:141"), now).unwrap();
        check_strict(&mut ctx, &edit_on("homepage-docker"), now).unwrap();
    }
}
