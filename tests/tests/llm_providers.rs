//! The model providers (`vigil_controller::llm`) against the scripted model server, for
//! both wire protocols: streaming, tool-call reassembly, usage, retries, errors, and the
//! shape of what the server receives.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::{Value, json};
use vigil_controller::llm::{
    self, ChatRequest, LlmConfig, LlmError, Message, ModelProvider, Provider, StreamEvent,
    ToolCall, ToolSpec,
};
use vigil_tests::{Protocol, Reply, ScriptedModel};

const BOTH: [Protocol; 2] = [Protocol::OpenAi, Protocol::Anthropic];
/// Hang guard only: every test here finishes in a few seconds.
const GUARD: Duration = Duration::from_secs(30);

fn provider(model: &ScriptedModel, protocol: Protocol, max_retries: u32) -> Arc<dyn ModelProvider> {
    let kind = match protocol {
        Protocol::OpenAi => Provider::OpenAi,
        Protocol::Anthropic => Provider::Anthropic,
    };
    let mut config = LlmConfig::new(kind, "test-model");
    config.base_url = model.base_url();
    config.api_key = Some("test-key".into());
    config.max_retries = max_retries;
    config.idle_timeout = Duration::from_secs(10);
    llm::build(&config).unwrap()
}

fn ask(text: &str) -> ChatRequest {
    ChatRequest {
        system: "You are Vigil.".into(),
        messages: vec![Message::User { text: text.into() }],
        tools: vec![tool("query"), tool("read")],
        ..ChatRequest::default()
    }
}

fn tool(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("the {name} tool"),
        parameters: json!({"type": "object", "properties": {"action": {"type": "string"}}}),
    }
}

/// Every event of one call, and the error that ended it, if any.
async fn run(
    provider: &dyn ModelProvider,
    request: &ChatRequest,
) -> (Vec<StreamEvent>, Option<LlmError>) {
    tokio::time::timeout(GUARD, async {
        let mut stream = match provider.stream(request).await {
            Ok(stream) => stream,
            Err(error) => return (Vec::new(), Some(error)),
        };
        let mut events = Vec::new();
        while let Some(item) = stream.next().await {
            match item {
                Ok(event) => events.push(event),
                Err(error) => return (events, Some(error)),
            }
        }
        (events, None)
    })
    .await
    .expect("the model call hung")
}

fn text_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn calls_of(events: &[StreamEvent]) -> Vec<ToolCall> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCall(call) => Some(call.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn text_streams_as_deltas_with_usage_then_finished() {
    for protocol in BOTH {
        let model = ScriptedModel::start(protocol).await;
        let answer = "Everything on delly looks healthy.";
        model.push(Reply::Text(answer.into()));
        let provider = provider(&model, protocol, 0);
        let (events, error) = run(provider.as_ref(), &ask("status?")).await;
        assert_eq!(error, None, "{protocol:?}");
        let deltas = events
            .iter()
            .filter(|e| matches!(e, StreamEvent::TextDelta(_)))
            .count();
        assert!(deltas > 3, "{protocol:?}: {events:?}");
        assert_eq!(text_of(&events), answer);
        assert!(
            events.iter().any(|e| matches!(e,
                StreamEvent::Usage { input_tokens, output_tokens } if *input_tokens > 0 && *output_tokens > 0)),
            "{protocol:?}: {events:?}"
        );
        assert!(matches!(
            events.last(),
            Some(StreamEvent::Finished {
                stop_reason: Some(_)
            })
        ));
        assert_eq!(provider.model(), "test-model");
    }
}

#[tokio::test]
async fn two_tool_calls_split_across_chunks_are_reassembled_exactly() {
    for protocol in BOTH {
        let model = ScriptedModel::start(protocol).await;
        let first = json!({"action": "search", "query": "nginx", "kind": "container"});
        let second = json!({"action": "exec", "resource_id": "host:delly", "command": "uptime"});
        model.push(Reply::TextThenToolCalls(
            "Let me look.".into(),
            vec![
                ("query".into(), first.clone()),
                ("read".into(), second.clone()),
            ],
        ));
        let (events, error) = run(provider(&model, protocol, 0).as_ref(), &ask("nginx?")).await;
        assert_eq!(error, None, "{protocol:?}");
        assert_eq!(text_of(&events), "Let me look.");
        let calls = calls_of(&events);
        assert_eq!(calls.len(), 2, "{protocol:?}: {events:?}");
        assert_eq!(calls[0].name, "query");
        assert_eq!(calls[0].arguments, first.to_string());
        assert_eq!(calls[1].name, "read");
        assert_eq!(calls[1].arguments, second.to_string());
        assert_ne!(calls[0].id, calls[1].id);
        assert!(calls.iter().all(|c| !c.id.is_empty()));
    }
}

#[tokio::test]
async fn broken_tool_call_arguments_pass_through_verbatim() {
    for protocol in BOTH {
        let model = ScriptedModel::start(protocol).await;
        let broken = r#"{"action": "exec", "command": "df -h"#;
        model.push(Reply::RawToolCall {
            name: "read".into(),
            arguments: broken.into(),
        });
        let (events, error) = run(provider(&model, protocol, 0).as_ref(), &ask("disk?")).await;
        assert_eq!(error, None, "{protocol:?}");
        let calls = calls_of(&events);
        assert_eq!(calls.len(), 1, "{protocol:?}");
        assert_eq!(calls[0].arguments, broken);
    }
}

#[tokio::test]
async fn a_429_with_retry_after_is_retried_then_succeeds() {
    for protocol in BOTH {
        let model = ScriptedModel::start(protocol).await;
        model.push(Reply::Status {
            code: 429,
            retry_after: Some(1),
            body: "slow down".into(),
        });
        model.push(Reply::Text("ok".into()));
        let started = Instant::now();
        let (events, error) = run(provider(&model, protocol, 3).as_ref(), &ask("hi")).await;
        assert_eq!(error, None, "{protocol:?}");
        assert_eq!(text_of(&events), "ok");
        assert_eq!(model.request_count(), 2);
        assert!(
            started.elapsed() >= Duration::from_millis(900),
            "Retry-After honoured"
        );
    }
}

#[tokio::test]
async fn server_errors_beyond_max_retries_are_http_errors() {
    for protocol in BOTH {
        let model = ScriptedModel::start(protocol).await;
        for _ in 0..3 {
            model.push(Reply::Status {
                code: 500,
                retry_after: None,
                body: "upstream exploded".into(),
            });
        }
        model.push(Reply::Text("never asked for".into()));
        let (events, error) = run(provider(&model, protocol, 2).as_ref(), &ask("hi")).await;
        assert!(events.is_empty());
        let Some(LlmError::Http { status, message }) = error else {
            panic!("{protocol:?}: {error:?}");
        };
        assert_eq!(status, 500);
        assert!(message.contains("upstream exploded"), "{message}");
        assert_eq!(model.request_count(), 3, "one attempt and two retries");

        // A client error is not retried; an empty queue answers a clear 500.
        let model = ScriptedModel::start(protocol).await;
        model.push(Reply::Status {
            code: 400,
            retry_after: None,
            body: "bad model name".into(),
        });
        let provider = provider(&model, protocol, 3);
        let (_, error) = run(provider.as_ref(), &ask("hi")).await;
        assert!(
            matches!(error, Some(LlmError::Http { status: 400, .. })),
            "{error:?}"
        );
        assert_eq!(model.request_count(), 1);
        let provider = self::provider(&model, protocol, 0);
        let (_, error) = run(provider.as_ref(), &ask("hi")).await;
        let message = error.unwrap().to_string();
        assert!(
            message.contains("scripted model: no reply queued"),
            "{message}"
        );
    }
}

#[tokio::test]
async fn a_server_dying_mid_stream_is_an_error_not_a_hang() {
    for protocol in BOTH {
        let model = ScriptedModel::start(protocol).await;
        model.push(Reply::DieMidStream(
            "I was about to say something impor".into(),
        ));
        let (events, error) = run(provider(&model, protocol, 3).as_ref(), &ask("hi")).await;
        assert!(
            !text_of(&events).is_empty(),
            "{protocol:?}: some text arrived first"
        );
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, StreamEvent::Finished { .. })),
            "{events:?}"
        );
        let error = error.expect("an error ends the stream");
        assert!(
            matches!(error, LlmError::Network(_) | LlmError::Protocol(_)),
            "{protocol:?}: {error}"
        );
        assert_eq!(
            model.request_count(),
            1,
            "no retry once the answer streamed"
        );
    }
}

#[tokio::test]
async fn a_slow_server_times_out() {
    for protocol in BOTH {
        let model = ScriptedModel::start(protocol).await;
        model.push(Reply::Delay(
            Duration::from_secs(5),
            Box::new(Reply::Text("late".into())),
        ));
        let kind = match protocol {
            Protocol::OpenAi => Provider::OpenAi,
            Protocol::Anthropic => Provider::Anthropic,
        };
        let config = LlmConfig {
            base_url: model.base_url(),
            request_timeout: Duration::from_millis(300),
            max_retries: 0,
            ..LlmConfig::new(kind, "test-model")
        };
        let provider = llm::build(&config).unwrap();
        let (_, error) = run(provider.as_ref(), &ask("hi")).await;
        assert!(matches!(error, Some(LlmError::Timeout(_))), "{error:?}");
    }
}

/// Whether the request already carries a tool result (the two protocols' shapes).
fn has_tool_result(request: &Value) -> bool {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|m| {
            m["role"] == "tool"
                || m["content"]
                    .as_array()
                    .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == "tool_result"))
        })
}

#[tokio::test]
async fn the_server_receives_tools_system_and_tool_results() {
    for protocol in BOTH {
        let model = ScriptedModel::start_with(protocol, |request| {
            if has_tool_result(request) {
                Reply::Text("delly is up 12 days".into())
            } else {
                Reply::ToolCalls(vec![
                    (
                        "read".into(),
                        json!({"action": "exec", "command": "uptime"}),
                    ),
                    ("query".into(), json!({"action": "health"})),
                ])
            }
        })
        .await;
        let provider = provider(&model, protocol, 0);
        let mut request = ask("how long has delly been up?");
        let (events, error) = run(provider.as_ref(), &request).await;
        assert_eq!(error, None);
        let calls = calls_of(&events);
        assert_eq!(calls.len(), 2);
        request.messages.push(Message::Assistant {
            text: String::new(),
            tool_calls: calls.clone(),
        });
        for call in &calls {
            request.messages.push(Message::Tool {
                tool_call_id: call.id.clone(),
                name: call.name.clone(),
                content: format!("result of {}", call.name),
            });
        }
        let (events, error) = run(provider.as_ref(), &request).await;
        assert_eq!(error, None);
        assert_eq!(text_of(&events), "delly is up 12 days");

        let requests = model.requests();
        assert_eq!(requests.len(), 2);
        let first = &requests[0];
        assert_eq!(first["model"], "test-model");
        assert_eq!(first["stream"], true);
        let second = &requests[1];
        let messages = second["messages"].as_array().unwrap();
        match protocol {
            Protocol::OpenAi => {
                assert_eq!(first["tools"][0]["type"], "function");
                assert_eq!(first["tools"][1]["function"]["name"], "read");
                assert_eq!(
                    first["messages"][0],
                    json!({"role": "system", "content": "You are Vigil."})
                );
                assert_eq!(first["stream_options"]["include_usage"], true);
                assert_eq!(messages.len(), 5, "{messages:?}");
                assert_eq!(messages[2]["role"], "assistant");
                assert_eq!(messages[2]["tool_calls"][0]["id"], calls[0].id.as_str());
                assert_eq!(
                    messages[2]["tool_calls"][0]["function"]["arguments"],
                    calls[0].arguments.as_str()
                );
                assert_eq!(
                    messages[3],
                    json!({"role": "tool", "tool_call_id": calls[0].id, "content": "result of read"})
                );
                assert_eq!(messages[4]["tool_call_id"], calls[1].id.as_str());
            }
            Protocol::Anthropic => {
                assert_eq!(first["system"], "You are Vigil.");
                assert_eq!(first["tools"][1]["name"], "read");
                assert_eq!(first["tools"][1]["input_schema"]["type"], "object");
                assert!(first["max_tokens"].as_u64().unwrap() > 0);
                assert_eq!(messages.len(), 3, "{messages:?}");
                assert_eq!(messages[1]["role"], "assistant");
                assert_eq!(messages[1]["content"][0]["type"], "tool_use");
                assert_eq!(messages[1]["content"][0]["input"]["command"], "uptime");
                assert_eq!(messages[2]["role"], "user");
                assert_eq!(
                    messages[2]["content"][0],
                    json!({"type": "tool_result", "tool_use_id": calls[0].id, "content": "result of read"})
                );
                assert_eq!(
                    messages[2]["content"][1]["tool_use_id"],
                    calls[1].id.as_str()
                );
            }
        }
    }
}
