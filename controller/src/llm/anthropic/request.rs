//! The body of a `messages` call: content blocks, tool results in user messages, roles
//! alternating.

use serde_json::{Value, json};

use crate::llm::{ChatRequest, DEFAULT_MAX_TOKENS, LlmConfig, Message};

/// The JSON body of a `messages` call for `request`.
pub fn request_body(config: &LlmConfig, request: &ChatRequest) -> Value {
    let mut body = json!({
        "model": config.model,
        "max_tokens": request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        "stream": true,
        "messages": messages(&request.messages),
    });
    if !request.system.is_empty() {
        body["system"] = json!(request.system);
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|tool| {
                json!({"name": tool.name, "description": tool.description,
                       "input_schema": tool.parameters})
            })
            .collect();
        // The tools stay declared on a text-only call: a history with tool_use blocks
        // needs them.
        if request.text_only {
            body["tool_choice"] = json!({"type": "none"});
        }
    }
    body
}

/// The conversation as Anthropic messages: content blocks, roles alternating.
pub fn messages(messages: &[Message]) -> Vec<Value> {
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in messages {
        let (role, blocks) = match message {
            Message::User { text } => ("user", text_block(text).into_iter().collect()),
            Message::Assistant { text, tool_calls } => {
                let mut blocks: Vec<Value> = text_block(text).into_iter().collect();
                blocks.extend(tool_calls.iter().map(|call| {
                    json!({"type": "tool_use", "id": call.id, "name": call.name,
                           "input": tool_input(&call.arguments)})
                }));
                ("assistant", blocks)
            }
            Message::Tool {
                tool_call_id,
                content,
                ..
            } => (
                "user",
                vec![
                    json!({"type": "tool_result", "tool_use_id": tool_call_id, "content": content}),
                ],
            ),
        };
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some((last, content)) if *last == role => content.extend(blocks),
            _ => out.push((role, blocks)),
        }
    }
    out.into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

fn text_block(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({"type": "text", "text": text}))
}

/// A tool call's arguments as the `input` object Anthropic requires (`{}` when they are
/// not a JSON object: the model sees its broken call answered with an error anyway).
fn tool_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => json!({}),
    }
}
