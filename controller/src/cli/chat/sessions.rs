//! `/sessions` and `/resume ID`: the session table and a session's recent messages, as
//! text (the fetching is in [`super::api`]).

use serde_json::Value;
use time::OffsetDateTime;

use crate::cli::table;

/// How many of a resumed session's last messages are shown.
pub const RECENT: usize = 10;

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_owned()
}

/// Unix seconds as `YYYY-MM-DD HH:MM` UTC.
pub fn timestamp(seconds: i64) -> String {
    match OffsetDateTime::from_unix_timestamp(seconds) {
        Ok(t) => format!(
            "{:04}-{:02}-{:02} {:02}:{:02}",
            t.year(),
            u8::from(t.month()),
            t.day(),
            t.hour(),
            t.minute()
        ),
        Err(_) => seconds.to_string(),
    }
}

/// The sessions as a table (`*` marks `current`), newest first as the API lists them.
pub fn session_table(rows: &[Value], current: Option<&str>) -> String {
    if rows.is_empty() {
        return "no sessions yet\n".into();
    }
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let id = text(&r["id"]);
            let mark = if current == Some(id.as_str()) {
                "*"
            } else {
                ""
            };
            let mut title = text(&r["title"]).replace('\n', " ");
            if title.chars().count() > 50 {
                title = title.chars().take(49).collect::<String>() + "…";
            }
            let running = if r["running"].as_bool() == Some(true) {
                "running"
            } else {
                ""
            };
            vec![
                format!("{mark}{id}"),
                title,
                timestamp(r["updated_at"].as_i64().unwrap_or_default()),
                running.to_owned(),
            ]
        })
        .collect();
    table::render(&["ID", "TITLE", "UPDATED (UTC)", ""], &rows)
}

/// The last [`RECENT`] user and assistant messages (and approval outcomes) of a session.
pub fn recent_messages(messages: &[Value]) -> Vec<String> {
    let shown: Vec<String> = messages
        .iter()
        .filter_map(|m| {
            let content = text(&m["content"]);
            let content = content.trim();
            match m["role"].as_str() {
                Some("user") => Some(format!("you> {content}")),
                Some("assistant") if !content.is_empty() => Some(content.to_owned()),
                Some("event") if !content.is_empty() => Some(format!("· {content}")),
                _ => None,
            }
        })
        .collect();
    let skip = shown.len().saturating_sub(RECENT);
    shown.into_iter().skip(skip).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn sessions_table_marks_the_current_one() {
        let rows = vec![
            json!({"id": "s1", "title": "disk usage", "updated_at": 0, "running": false}),
            json!({"id": "s2", "title": "nginx", "updated_at": 86_400 + 3_660, "running": true}),
        ];
        let text = session_table(&rows, Some("s2"));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "s1   disk usage  1970-01-01 00:00");
        assert_eq!(lines[2], "*s2  nginx       1970-01-02 01:01  running");
        assert_eq!(session_table(&[], None), "no sessions yet\n");
    }

    #[test]
    fn recent_messages_skip_tool_results_and_keep_the_last() {
        let mut messages = vec![
            json!({"role": "user", "content": "how is web?"}),
            json!({"role": "assistant", "content": "", "data": {"tool_calls": []}}),
            json!({"role": "tool", "content": "{\"ok\":true}"}),
            json!({"role": "assistant", "content": "Fine."}),
        ];
        assert_eq!(recent_messages(&messages), ["you> how is web?", "Fine."]);
        for i in 0..20 {
            messages.push(json!({"role": "user", "content": format!("q{i}")}));
        }
        let recent = recent_messages(&messages);
        assert_eq!(recent.len(), RECENT);
        assert_eq!(recent[RECENT - 1], "you> q19");
    }
}
