#![allow(clippy::unwrap_used)]

use super::*;
use serde_json::json;

use crate::llm::{DEFAULT_MAX_TOKENS, Message, Provider, ToolSpec};

fn decode(payloads: &[&str]) -> Result<Vec<StreamEvent>, LlmError> {
    AnthropicDecoder::default().feed_all(payloads.iter().copied())
}

#[test]
fn text_tool_use_and_usage() {
    let events = decode(&[
        r#"{"type":"message_start","message":{"id":"m","usage":{"input_tokens":20,"cache_read_input_tokens":5,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"ping"}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Look"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"query","input":{}}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"action\":"}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"health\"}"}}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_2","name":"query","input":{}}}"#,
        r#"{"type":"content_block_stop","index":2}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}"#,
        r#"{"type":"message_stop"}"#,
    ])
    .unwrap();
    let call = |id: &str, arguments: &str| {
        StreamEvent::ToolCall(ToolCall {
            id: id.into(),
            name: "query".into(),
            arguments: arguments.into(),
        })
    };
    assert_eq!(
        events,
        [
            StreamEvent::TextDelta("Look".into()),
            call("toolu_1", r#"{"action":"health"}"#),
            call("toolu_2", "{}"),
            StreamEvent::Usage {
                input_tokens: 25,
                output_tokens: 42
            },
            StreamEvent::Finished {
                stop_reason: Some("tool_use".into())
            },
        ]
    );
}

#[test]
fn error_events_and_bad_json_are_errors() {
    let error =
        decode(&[r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#])
            .unwrap_err();
    assert_eq!(
        error,
        LlmError::Remote {
            kind: "overloaded_error".into(),
            message: "Overloaded".into()
        }
    );
    assert!(matches!(decode(&["{"]), Err(LlmError::Protocol(_))));
}

#[test]
fn messages_merge_roles_and_carry_tool_results() {
    let config = LlmConfig::new(Provider::Anthropic, "claude-test");
    let call = |id: &str| ToolCall {
        id: id.into(),
        name: "read".into(),
        arguments: r#"{"action":"exec"}"#.into(),
    };
    let result = |id: &str| Message::Tool {
        tool_call_id: id.into(),
        name: "read".into(),
        content: format!("out {id}"),
    };
    let request = ChatRequest {
        system: "sys".into(),
        messages: vec![
            Message::User { text: "hi".into() },
            Message::User {
                text: "again".into(),
            },
            Message::Assistant {
                text: "checking".into(),
                tool_calls: vec![call("t1"), call("t2")],
            },
            result("t1"),
            result("t2"),
            Message::User {
                text: "and?".into(),
            },
        ],
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "read".into(),
            parameters: json!({"type": "object"}),
        }],
        text_only: true,
        max_tokens: None,
    };
    let body = request_body(&config, &request);
    assert_eq!(body["system"], "sys");
    assert_eq!(body["max_tokens"], DEFAULT_MAX_TOKENS);
    assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
    assert_eq!(body["tool_choice"]["type"], "none");
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_eq!(messages[0]["content"].as_array().unwrap().len(), 2);
    assert_eq!(messages[1]["content"][1]["type"], "tool_use");
    assert_eq!(messages[1]["content"][1]["input"]["action"], "exec");
    assert_eq!(messages[2]["role"], "user");
    assert_eq!(
        messages[2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "t1", "content": "out t1"})
    );
    assert_eq!(messages[2]["content"][1]["tool_use_id"], "t2");
    assert_eq!(messages[2]["content"][2]["text"], "and?");
}
