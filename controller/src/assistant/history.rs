//! A session's stored messages as the model's conversation: user and assistant messages,
//! assistant tool calls with their results, and notes Vigil added (an approval's outcome
//! after its turn ended) as user messages marked as coming from Vigil.

use serde_json::{Value, json};

use super::compaction::rolling_summary;
use crate::Result;
use crate::llm::{Message, ToolCall};
use crate::store::Store;
use crate::store::chat::MessageRow;

/// Most stored messages replayed to the model.
pub const MAX_HISTORY: usize = 80;

/// The stored form of a tool call.
pub fn call_json(call: &ToolCall) -> Value {
    json!({ "id": call.id, "name": call.name, "arguments": call.arguments })
}

fn call_from_json(value: &Value) -> Option<ToolCall> {
    Some(ToolCall {
        id: value["id"].as_str()?.to_owned(),
        name: value["name"].as_str()?.to_owned(),
        arguments: value["arguments"].as_str().unwrap_or("{}").to_owned(),
    })
}

/// The conversation of `session_id` so far (the newest [`MAX_HISTORY`] messages).
pub async fn load(store: &Store, session_id: &str) -> Result<Vec<Message>> {
    let rows = store.list_messages(session_id).await?;
    Ok(to_messages(&rows))
}

/// Converts stored rows; a tool result whose call is missing is dropped, and so is a call
/// whose result is missing (a turn that was cut off). Past [`MAX_HISTORY`] messages, the
/// older ones become one rolling summary.
pub fn to_messages(rows: &[MessageRow]) -> Vec<Message> {
    let all = convert(rows);
    if all.len() <= MAX_HISTORY {
        return all;
    }
    let split = all.len() - MAX_HISTORY;
    let (dropped, kept) = all.split_at(split);
    let mut out: Vec<Message> = rolling_summary(dropped)
        .map(|text| Message::User { text })
        .into_iter()
        .collect();
    let kept = kept
        .iter()
        .skip_while(|m| matches!(m, Message::Tool { .. }))
        .cloned();
    out.extend(kept);
    drop_unanswered_calls(out)
}

fn convert(rows: &[MessageRow]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    let mut open: Vec<String> = Vec::new();
    for row in rows {
        let data = row.data.as_ref();
        match row.role.as_str() {
            "user" => out.push(Message::User {
                text: row.content.clone(),
            }),
            "assistant" => {
                let calls: Vec<ToolCall> = data
                    .and_then(|d| d["tool_calls"].as_array())
                    .map(|calls| calls.iter().filter_map(call_from_json).collect())
                    .unwrap_or_default();
                open = calls.iter().map(|c| c.id.clone()).collect();
                if row.content.is_empty() && calls.is_empty() {
                    continue;
                }
                out.push(Message::Assistant {
                    text: row.content.clone(),
                    tool_calls: calls,
                });
            }
            "tool" => {
                let id = data
                    .and_then(|d| d["tool_call_id"].as_str())
                    .unwrap_or_default();
                if let Some(at) = open.iter().position(|o| o == id) {
                    open.remove(at);
                    out.push(Message::Tool {
                        tool_call_id: id.to_owned(),
                        name: data
                            .and_then(|d| d["name"].as_str())
                            .unwrap_or_default()
                            .to_owned(),
                        content: row.content.clone(),
                    });
                }
            }
            _ => out.push(Message::User {
                text: format!("(Vigil note) {}", row.content),
            }),
        }
    }
    drop_unanswered_calls(out)
}

/// Removes tool calls that got no result, so every provider accepts the conversation.
fn drop_unanswered_calls(messages: Vec<Message>) -> Vec<Message> {
    let answered: std::collections::HashSet<String> = messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool { tool_call_id, .. } => Some(tool_call_id.clone()),
            _ => None,
        })
        .collect();
    messages
        .into_iter()
        .filter_map(|m| match m {
            Message::Assistant { text, tool_calls } => {
                let tool_calls: Vec<ToolCall> = tool_calls
                    .into_iter()
                    .filter(|c| answered.contains(&c.id))
                    .collect();
                (!text.is_empty() || !tool_calls.is_empty())
                    .then_some(Message::Assistant { text, tool_calls })
            }
            other => Some(other),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(role: &str, content: &str, data: Option<Value>) -> MessageRow {
        MessageRow {
            id: String::new(),
            session_id: "s".into(),
            seq: 0,
            role: role.into(),
            content: content.into(),
            data,
            created_at: 0,
        }
    }

    #[test]
    fn calls_pair_with_results_and_orphans_are_dropped() {
        let rows = vec![
            row("user", "why is jellyfin slow?", None),
            row(
                "assistant",
                "",
                Some(
                    json!({"tool_calls": [{"id": "c1", "name": "read", "arguments": "{}"}, {"id": "c2", "name": "read", "arguments": "{}"}]}),
                ),
            ),
            row(
                "tool",
                "{\"ok\":true}",
                Some(json!({"tool_call_id": "c1", "name": "read"})),
            ),
            row(
                "tool",
                "stray",
                Some(json!({"tool_call_id": "zz", "name": "read"})),
            ),
            row("event", "Approved write `x`: ran; exit code 0", None),
            row("assistant", "It is the transcoder.", None),
        ];
        let messages = to_messages(&rows);
        assert_eq!(messages.len(), 5, "{messages:?}");
        let Message::Assistant { tool_calls, .. } = &messages[1] else {
            panic!()
        };
        assert_eq!(tool_calls.len(), 1, "c2 had no result");
        assert!(matches!(&messages[3], Message::User { text } if text.starts_with("(Vigil note)")));
    }

    #[test]
    fn a_long_session_keeps_a_rolling_summary() {
        let mut rows = Vec::new();
        for i in 0..60 {
            rows.push(row("user", &format!("question {i}"), None));
            rows.push(row("assistant", &format!("answer {i}"), None));
        }
        let messages = to_messages(&rows);
        assert_eq!(messages.len(), MAX_HISTORY + 1);
        let Message::User { text } = &messages[0] else {
            panic!()
        };
        assert!(
            text.contains("asked: question 19") && text.contains("answered: answer 19"),
            "{text}"
        );
        assert!(text.lines().count() <= 31, "the summary is bounded: {text}");
        assert!(matches!(&messages[1], Message::User { text } if text == "question 20"));
    }
}
