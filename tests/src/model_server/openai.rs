//! `chat/completions` stream frames: `data: {chunk}` lines, usage in a last chunk with no
//! choices, then `data: [DONE]`.

use serde_json::{Value, json};

use super::{Script, deltas, split};

const MODEL: &str = "scripted";

fn data(value: &Value) -> String {
    format!("data: {value}\n\n")
}

fn chunk(delta: Value, finish_reason: Option<&str>) -> String {
    data(&json!({
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}],
    }))
}

/// The frames of `script`; without the finish, usage and `[DONE]` when it dies.
pub(super) fn frames(
    script: &Script,
    input_tokens: u64,
    mut id: impl FnMut() -> String,
) -> Vec<String> {
    let mut frames = vec![chunk(json!({"role": "assistant", "content": null}), None)];
    for piece in deltas(&script.text) {
        frames.push(chunk(json!({"content": piece}), None));
    }
    if script.die {
        return frames;
    }
    // Each call's id and name first, then its argument pieces interleaved by index.
    let mut pieces = Vec::new();
    for (index, (name, arguments)) in script.calls.iter().enumerate() {
        frames.push(chunk(
            json!({"tool_calls": [{"index": index, "id": format!("call_{}", id()), "type": "function",
                                   "function": {"name": name, "arguments": ""}}]}),
            None,
        ));
        pieces.push(split(arguments, 3));
    }
    let rounds = pieces.iter().map(Vec::len).max().unwrap_or(0);
    for round in 0..rounds {
        for (index, parts) in pieces.iter().enumerate() {
            if let Some(part) = parts.get(round) {
                frames.push(chunk(
                    json!({"tool_calls": [{"index": index, "function": {"arguments": part}}]}),
                    None,
                ));
            }
        }
    }
    let finish = if script.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    frames.push(chunk(json!({}), Some(finish)));
    let output_tokens = script.output_tokens();
    frames.push(data(&json!({
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "model": MODEL,
        "choices": [],
        "usage": {"prompt_tokens": input_tokens, "completion_tokens": output_tokens,
                  "total_tokens": input_tokens + output_tokens},
    })));
    frames.push("data: [DONE]\n\n".to_owned());
    frames
}
