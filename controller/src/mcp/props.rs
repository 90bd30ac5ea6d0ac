//! Properties of what an MCP client sends, over arbitrary input: a tool call's name and
//! arguments (any JSON) never panic the validation, and what validates is offered to a
//! role exactly when its class allows; a client's name never carries control characters
//! or more than 64 characters into the audit trail, and its actor always names the
//! token (the self-approval check); origins normalize to a fixed point.

use proptest::prelude::*;
use serde_json::{Map, Value};

use super::calls::Caller;
use super::catalog::offers;
use super::http::normalize_origin;
use crate::access::Principal;
use crate::access::requested_through_mcp_by;
use crate::roles::Role;
use crate::tools::call::parse_call;
use crate::tools::schema::tool_specs_where;
use crate::tools::table;

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        ".{0,40}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((".{0,12}", inner), 0..6)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Arguments that often come close to valid: a known action and known argument names.
fn near_valid() -> impl Strategy<Value = (String, Value)> {
    let names = table::names();
    (0..names.len(), json(), 0usize..8).prop_map(move |(n, extra, action)| {
        let tool = names[n];
        let actions = table::tool(tool).map(|t| t.actions).unwrap_or_default();
        let mut args = match extra {
            Value::Object(map) => map,
            other => Map::from_iter([("resource_id".to_owned(), other)]),
        };
        if let Some(a) = actions.get(action % actions.len().max(1)) {
            args.insert("action".into(), Value::String(a.name.into()));
            for arg in a.args {
                args.entry(arg.name)
                    .or_insert_with(|| Value::String("x".into()));
            }
        }
        (tool.to_owned(), Value::Object(args))
    })
}

fn offered_to(role: Role, tool: &str, action: &str) -> bool {
    tool_specs_where(|class| offers(role, class))
        .iter()
        .any(|spec| {
            spec.name == tool
                && spec.schema["properties"]["action"]["enum"]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|v| v == action))
        })
}

proptest! {
    #[test]
    fn any_call_validates_or_is_refused_and_offers_follow_the_class(
        (name, args) in prop_oneof![near_valid(), (".{0,20}", json())],
        raw in ".{0,60}",
    ) {
        let _ = parse_call(&name, &raw);
        if let Ok(call) = parse_call(&name, &args.to_string()) {
            let action = table::action(call.name(), call.action());
            prop_assert!(action.is_some());
            let class = action.map(|a| a.class).unwrap_or(crate::tools::class::ToolClass::Write);
            for role in [Role::Viewer, Role::Operator] {
                prop_assert_eq!(
                    offered_to(role, call.name(), call.action()),
                    offers(role, class)
                );
            }
        }
    }

    #[test]
    fn client_names_stay_clean_and_the_actor_names_the_token(
        token in "[a-z][a-z0-9-]{0,20}",
        client in proptest::option::of(".{0,200}"),
    ) {
        let caller = Caller::new(
            Principal { name: token.clone(), role: Role::Operator },
            client.as_deref(),
        );
        prop_assert!(!caller.client.is_empty());
        prop_assert!(caller.client.chars().count() <= 64);
        prop_assert!(!caller.client.chars().any(char::is_control));
        prop_assert!(requested_through_mcp_by(&caller.actor(), &token));
    }

    #[test]
    fn origins_normalize_to_a_fixed_point(
        origin in prop_oneof![
            ".{0,60}",
            "(HTTP|http|https)://(\\[::1\\]|[a-z.]{1,8})(:(80|443|[0-9]{1,4})){0,3}/{0,2}",
        ],
    ) {
        let once = normalize_origin(&origin);
        prop_assert_eq!(normalize_origin(&once), once);
    }
}
