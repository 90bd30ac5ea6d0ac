#![allow(clippy::unwrap_used)]

use super::*;
use serde_json::json;

use crate::llm::{Message, Provider, ToolSpec};

fn decode(payloads: &[&str]) -> Result<Vec<StreamEvent>, LlmError> {
    OpenAiDecoder::default().feed_all(payloads.iter().copied())
}

fn call(id: &str, name: &str, arguments: &str) -> StreamEvent {
    StreamEvent::ToolCall(ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    })
}

#[test]
fn text_and_usage_then_finished() {
    let events = decode(&[
        r#"{"id":"x","choices":[{"index":0,"delta":{"role":"assistant","content":null}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"lo"},"logprobs":null}],"extra":1}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}"#,
        "[DONE]",
    ])
    .unwrap();
    assert_eq!(
        events,
        [
            StreamEvent::TextDelta("Hel".into()),
            StreamEvent::TextDelta("lo".into()),
            StreamEvent::Usage {
                input_tokens: 12,
                output_tokens: 3
            },
            StreamEvent::Finished {
                stop_reason: Some("stop".into())
            },
        ]
    );
}

#[test]
fn interleaved_tool_calls_are_reassembled_in_index_order() {
    let events = decode(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"query","arguments":""}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"read","arguments":"{\"act"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"action\":"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"ion\":\"exec\"}"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"health\"}"}}]}}]}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
        "[DONE]",
    ])
    .unwrap();
    assert_eq!(
        events,
        [
            call("a", "query", r#"{"action":"health"}"#),
            call("b", "read", r#"{"action":"exec"}"#),
            StreamEvent::Finished {
                stop_reason: Some("tool_calls".into())
            },
        ]
    );
}

#[test]
fn missing_ids_indexes_and_finish_reason_are_tolerated() {
    let events = decode(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"query","arguments":{"action":"health"}}}]}}]}"#,
        "[DONE]",
    ])
    .unwrap();
    let [
        StreamEvent::ToolCall(call),
        StreamEvent::Finished { stop_reason: None },
    ] = events.as_slice()
    else {
        panic!("{events:?}");
    };
    assert!(call.id.starts_with("call_"), "{call:?}");
    assert_eq!(call.arguments, r#"{"action":"health"}"#);
}

#[test]
fn broken_arguments_pass_through_verbatim() {
    let events = decode(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"read","arguments":"{\"action\": \"exec\", "}}]},"finish_reason":"tool_calls"}]}"#,
        "[DONE]",
    ])
    .unwrap();
    assert_eq!(events[0], call("a", "read", r#"{"action": "exec", "#));
}

#[test]
fn bad_json_and_error_chunks_are_errors() {
    let error = decode(&["{not json"]).unwrap_err();
    assert!(matches!(error, LlmError::Protocol(_)), "{error}");
    let error =
        decode(&[r#"{"error":{"message":"rate limited upstream","code":429}}"#]).unwrap_err();
    assert_eq!(
        error,
        LlmError::Remote {
            kind: "error".into(),
            message: "rate limited upstream".into()
        }
    );
}

#[test]
fn request_body_has_tools_system_and_tool_messages() {
    let config = LlmConfig::new(Provider::OpenAi, "gpt-test");
    let request = ChatRequest {
        system: "be careful".into(),
        messages: vec![
            Message::User { text: "hi".into() },
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "c1".into(),
                    name: "query".into(),
                    arguments: "{}".into(),
                }],
            },
            Message::Tool {
                tool_call_id: "c1".into(),
                name: "query".into(),
                content: "ok".into(),
            },
        ],
        tools: vec![ToolSpec {
            name: "query".into(),
            description: "look up".into(),
            parameters: json!({"type": "object"}),
        }],
        text_only: false,
        max_tokens: Some(100),
    };
    let body = request_body(&config, &request);
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "be careful"})
    );
    assert_eq!(body["messages"][2]["content"], Value::Null);
    assert_eq!(
        body["messages"][2]["tool_calls"][0]["function"]["name"],
        "query"
    );
    assert_eq!(
        body["messages"][3],
        json!({"role": "tool", "tool_call_id": "c1", "content": "ok"})
    );
    assert_eq!(body["tools"][0]["function"]["parameters"]["type"], "object");
    assert_eq!(body["max_completion_tokens"], 100);
    let text_only = request_body(
        &config,
        &ChatRequest {
            text_only: true,
            ..request
        },
    );
    assert!(text_only.get("tools").is_none());
}
