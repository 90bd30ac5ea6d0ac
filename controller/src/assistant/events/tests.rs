use super::*;

/// One of every event, with every optional field set.
fn one_of_each() -> Vec<ChatEvent> {
    vec![
        ChatEvent::Session {
            session_id: "s1".into(),
            control_level: "controlled".into(),
        },
        ChatEvent::Content { text: "hi".into() },
        ChatEvent::ContentReplaced {
            text: "x".into(),
            reason: "unverified".into(),
        },
        ChatEvent::ToolStart {
            tool_call_id: "c1".into(),
            name: "read".into(),
            input: json!({"command": "uptime"}),
        },
        ChatEvent::ToolOutput {
            tool_call_id: "c1".into(),
            stream: "stdout".into(),
            text: "up 1 day".into(),
        },
        ChatEvent::ToolEnd {
            tool_call_id: "c1".into(),
            name: "read".into(),
            ok: false,
            error_code: Some("POLICY_BLOCKED".into()),
            duration_ms: 12,
        },
        ChatEvent::ApprovalNeeded(ApprovalNeeded {
            approval_id: "a1".into(),
            tool_call_id: "c2".into(),
            command: "touch /x".into(),
            target: "vm (host)".into(),
            risk: "medium".into(),
            reasons: vec!["writes a file".into()],
            diff: Some("--- a\n+++ b\n".into()),
            expires_at: 1_795_678_826,
        }),
        ChatEvent::ApprovalResolved {
            approval_id: "a1".into(),
            decision: "denied".into(),
            reason: Some("not now".into()),
        },
        ChatEvent::Done {
            session_id: "s1".into(),
            turns: 2,
            tool_calls: 3,
            input_tokens: 1_000_000_000_000,
            output_tokens: 4,
        },
        ChatEvent::Error {
            code: StreamErrorCode::BudgetExceeded,
            message: "m".into(),
        },
    ]
}

/// The event table of `docs/assistant.md`: each name with its data's field names.
fn documented() -> Vec<(String, Vec<String>)> {
    let doc = include_str!("../../../../docs/assistant.md");
    let mut rows = Vec::new();
    for line in doc.lines() {
        let cells: Vec<&str> = line.split(" | ").collect();
        let (Some(name), Some(data)) = (cells.first(), cells.get(1)) else {
            continue;
        };
        let Some(name) = name.strip_prefix("| `").and_then(|n| n.strip_suffix('`')) else {
            continue;
        };
        let Some(fields) = data
            .trim()
            .strip_prefix("`{")
            .and_then(|d| d.split_once("}`"))
            .map(|(f, _)| f)
        else {
            continue;
        };
        let fields = fields
            .split(", ")
            .map(|f| f.split(':').next().unwrap_or(f).trim().to_owned())
            .collect();
        rows.push((name.to_owned(), fields));
    }
    rows
}

#[test]
fn every_event_round_trips_with_the_documented_name_and_fields() {
    let table = documented();
    let names: Vec<&str> = table.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, EVENT_NAMES, "the docs' table and EVENT_NAMES differ");
    let events = one_of_each();
    assert_eq!(events.len(), EVENT_NAMES.len(), "one of each event");
    for (event, (name, fields)) in events.iter().zip(&table) {
        assert_eq!(event.name(), name);
        let data = event.data();
        let mut keys: Vec<String> = data
            .as_object()
            .expect("an object")
            .keys()
            .cloned()
            .collect();
        let mut want = fields.clone();
        keys.sort();
        want.sort();
        assert_eq!(keys, want, "{name}: fields differ from docs/assistant.md");
        let text = data.to_string();
        let back = ChatEvent::decode(event.name(), &text).expect("decodes");
        assert_eq!(&back, event, "{name} does not round-trip");
    }
}

#[test]
fn unknown_events_are_kept_and_malformed_known_ones_are_errors() {
    let unknown = ChatEvent::decode("future_thing", r#"{"a":1}"#).unwrap();
    assert_eq!(
        unknown,
        ChatEvent::Unknown {
            event: "future_thing".into(),
            data: json!({"a": 1}),
        }
    );
    assert_eq!(unknown.name(), "future_thing");
    assert_eq!(unknown.data(), json!({"a": 1}));
    let text = ChatEvent::decode("future_thing", "plain").unwrap();
    assert_eq!(text.data(), json!("plain"));
    // A newer field is ignored; a missing or mistyped one is not the contract.
    let newer = ChatEvent::decode("content", r#"{"text":"a","lang":"en"}"#).unwrap();
    assert_eq!(newer, ChatEvent::Content { text: "a".into() });
    for (name, data) in [
        ("content", "not json"),
        ("content", "{}"),
        (
            "done",
            r#"{"session_id":"s","turns":-1,"tool_calls":0,"input_tokens":0,"output_tokens":0}"#,
        ),
        (
            "tool_end",
            r#"{"tool_call_id":"c","name":"read","ok":"yes","error_code":null,"duration_ms":1}"#,
        ),
    ] {
        assert!(ChatEvent::decode(name, data).is_err(), "{name} {data}");
    }
    // A stream error code from a newer controller is kept as it is.
    let error = ChatEvent::decode("error", r#"{"code":"NEW_CODE","message":"m"}"#).unwrap();
    assert_eq!(
        error,
        ChatEvent::Error {
            code: StreamErrorCode::Other("NEW_CODE".into()),
            message: "m".into(),
        }
    );
}
