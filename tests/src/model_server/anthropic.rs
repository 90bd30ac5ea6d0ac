//! Anthropic `messages` stream frames: named events (`event: NAME` + `data: {json}`), a text
//! block, then one `tool_use` block per call with `input_json_delta` pieces.

use serde_json::{Value, json};

use super::{Script, deltas, split};

fn event(name: &str, value: &Value) -> String {
    format!("event: {name}\ndata: {value}\n\n")
}

/// The frames of `script`; it stops inside the text block when it dies.
pub(super) fn frames(
    script: &Script,
    input_tokens: u64,
    mut id: impl FnMut() -> String,
) -> Vec<String> {
    let mut frames = vec![
        event(
            "message_start",
            &json!({"type": "message_start", "message": {
                "id": format!("msg_{}", id()), "type": "message", "role": "assistant",
                "model": "scripted", "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": input_tokens, "output_tokens": 1},
            }}),
        ),
        event("ping", &json!({"type": "ping"})),
    ];
    let mut index = 0;
    if !script.text.is_empty() || script.calls.is_empty() {
        frames.push(event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "text", "text": ""}}),
        ));
        for piece in deltas(&script.text) {
            frames.push(event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index,
                        "delta": {"type": "text_delta", "text": piece}}),
            ));
        }
        if script.die {
            return frames;
        }
        frames.push(stop(index));
        index += 1;
    }
    for (name, arguments) in &script.calls {
        frames.push(event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": format!("toolu_{}", id()), "name": name, "input": {}}}),
        ));
        for piece in split(arguments, 3) {
            frames.push(event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece}}),
            ));
        }
        frames.push(stop(index));
        index += 1;
    }
    let stop_reason = if script.calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    frames.push(event(
        "message_delta",
        &json!({"type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                "usage": {"output_tokens": script.output_tokens()}}),
    ));
    frames.push(event("message_stop", &json!({"type": "message_stop"})));
    frames
}

fn stop(index: u32) -> String {
    event(
        "content_block_stop",
        &json!({"type": "content_block_stop", "index": index}),
    )
}
