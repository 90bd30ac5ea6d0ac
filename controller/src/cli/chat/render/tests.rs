use serde_json::json;

use super::*;
use crate::assistant::events::ApprovalNeeded;
use crate::error::StreamErrorCode;

fn text_of(pieces: &[Piece]) -> String {
    pieces.iter().map(|p| p.text.as_str()).collect()
}

fn end(ok: bool, code: Option<&str>) -> ChatEvent {
    ChatEvent::ToolEnd {
        tool_call_id: "c1".into(),
        name: "read".into(),
        ok,
        error_code: code.map(str::to_owned),
        duration_ms: 12,
    }
}

#[test]
fn tool_lines_are_compact_and_show_the_outcome() {
    let mut r = Renderer::new(Style::plain(), true);
    r.event(&ChatEvent::Content {
        text: "Let me look".into(),
    });
    r.event(&ChatEvent::ToolStart {
        tool_call_id: "c1".into(),
        name: "read".into(),
        input: json!({"action": "exec", "resource_id": "host:abc", "command": "uptime"}),
    });
    r.event(&end(true, None));
    r.event(&end(false, Some("POLICY_BLOCKED")));
    assert_eq!(
        text_of(&r.take()),
        "Let me look\n⚙ read exec host:abc `uptime`\n✓ read (12 ms)\n✗ read POLICY_BLOCKED (12 ms)\n"
    );
}

#[test]
fn notes_stay_off_the_answer_when_not_merged() {
    let mut r = Renderer::new(Style::plain(), false);
    r.event(&ChatEvent::Content { text: "Hi".into() });
    r.event(&ChatEvent::Error {
        code: StreamErrorCode::ModelError,
        message: "boom".into(),
    });
    r.event(&ChatEvent::Done {
        session_id: "s".into(),
        turns: 1,
        tool_calls: 0,
        input_tokens: 0,
        output_tokens: 0,
    });
    let pieces = r.take();
    let answer: String = pieces
        .iter()
        .filter(|p| p.channel == Channel::Answer)
        .map(|p| p.text.as_str())
        .collect();
    assert_eq!(answer, "Hi\n");
    let notes: String = pieces
        .iter()
        .filter(|p| p.channel == Channel::Notes)
        .map(|p| p.text.as_str())
        .collect();
    assert_eq!(notes, "error: MODEL_ERROR: boom\n");
}

#[test]
fn tool_output_shows_the_first_lines_and_counts_the_rest() {
    let mut r = Renderer::new(Style::plain(), true);
    r.event(&ChatEvent::ToolOutput {
        tool_call_id: "c1".into(),
        stream: "stdout".into(),
        text: "one\ntw".into(),
    });
    r.event(&ChatEvent::ToolOutput {
        tool_call_id: "c1".into(),
        stream: "stdout".into(),
        text: "o\nthree\nfour\nfive".into(),
    });
    r.event(&end(true, None));
    assert_eq!(
        text_of(&r.take()),
        "  │ one\n  │ two\n  │ three\n  │ … 2 more lines\n✓ read (12 ms)\n"
    );
}

#[test]
fn a_replaced_answer_is_announced_and_replaced() {
    let mut r = Renderer::new(Style::plain(), true);
    r.event(&ChatEvent::Content {
        text: "I restarted it".into(),
    });
    r.event(&ChatEvent::ContentReplaced {
        text: "No change was made.".into(),
        reason: "phantom".into(),
    });
    assert_eq!(
        text_of(&r.take()),
        "I restarted it\n↺ answer withdrawn (phantom); instead:\nNo change was made."
    );
}

#[test]
fn approvals_show_command_target_risk_reasons_and_diff() {
    let needed = ApprovalNeeded {
        approval_id: "ap1".into(),
        command: "tee /etc/x".into(),
        target: "host:abc".into(),
        risk: "high".into(),
        reasons: vec!["writes a file".into()],
        diff: Some("--- a\n+++ b\n-old\n+new".into()),
        ..ApprovalNeeded::default()
    };
    let lines = approval_lines(&needed, Style::plain());
    assert_eq!(
        lines,
        [
            "⚠ approval needed: tee /etc/x",
            "  target: host:abc  risk: high",
            "  reason: writes a file",
            "  diff:",
            "    --- a",
            "    +++ b",
            "    -old",
            "    +new",
            "  approval ap1",
        ]
    );
    let mut r = Renderer::new(Style::plain(), true);
    r.event(&ChatEvent::ApprovalResolved {
        approval_id: "ap1".into(),
        decision: "denied".into(),
        reason: Some("not now".into()),
    });
    assert_eq!(text_of(&r.take()), "✗ denied: not now\n");
}

#[test]
fn summaries_name_the_main_argument_and_stay_short() {
    assert_eq!(
        tool_summary(
            "control",
            &json!({"action": "service", "resource_id": "host:a", "service": "nginx", "operation": "restart"})
        ),
        "control service host:a nginx restart"
    );
    assert_eq!(
        tool_summary("query", &json!({"action": "health"})),
        "query health"
    );
    let long = tool_summary("read", &json!({"command": "x".repeat(300)}));
    assert_eq!(long.chars().count(), 100);
    assert!(long.ends_with('…'));
    assert_eq!(shorten("a\nb", 10), "a b");
}

#[test]
fn a_held_answer_is_written_once_without_what_was_withdrawn() {
    let mut r = Renderer::new(Style::plain(), false).hold_answer();
    r.event(&ChatEvent::Content {
        text: "I restarted it".into(),
    });
    r.event(&ChatEvent::ContentReplaced {
        text: String::new(),
        reason: "not verified".into(),
    });
    r.event(&ChatEvent::Content {
        text: "It runs.".into(),
    });
    r.event(&ChatEvent::Done {
        session_id: "s".into(),
        turns: 1,
        tool_calls: 1,
        input_tokens: 0,
        output_tokens: 0,
    });
    let pieces = r.take();
    let answer: String = pieces
        .iter()
        .filter(|p| p.channel == Channel::Answer)
        .map(|p| p.text.as_str())
        .collect();
    assert_eq!(answer, "It runs.\n");
    assert!(
        pieces
            .iter()
            .any(|p| p.channel == Channel::Notes && p.text.contains("withdrawn (not verified)"))
    );
}

#[test]
fn in_one_shot_direct_mode_the_commands_output_is_the_answer() {
    let mut r = Renderer::new(Style::plain(), false).output_as_answer();
    r.event(&ChatEvent::ToolStart {
        tool_call_id: "c1".into(),
        name: "read".into(),
        input: json!({"action": "exec", "resource_id": "vm", "command": "seq 5"}),
    });
    for (stream, text) in [
        ("stdout", "1\n2\n3\n"),
        ("stderr", "warn\n"),
        ("stdout", "4\n5\n"),
    ] {
        r.event(&ChatEvent::ToolOutput {
            tool_call_id: "c1".into(),
            stream: stream.into(),
            text: text.into(),
        });
    }
    r.event(&end(true, None));
    let pieces = r.take();
    let answer: String = pieces
        .iter()
        .filter(|p| p.channel == Channel::Answer)
        .map(|p| p.text.as_str())
        .collect();
    // Whole (more than OUTPUT_LINES lines), unprefixed, and only standard output.
    assert_eq!(answer, "1\n2\n3\n4\n5\n");
    let notes: String = pieces
        .iter()
        .filter(|p| p.channel == Channel::Notes)
        .map(|p| p.text.as_str())
        .collect();
    assert!(
        notes.contains("warn") && notes.contains("✓ read"),
        "{notes}"
    );
}
