use serde_json::{Value, json};

use super::super::{Recovered, RecoveredCall, normalize_arguments, recover_tool_calls};

const TOOLS: &[&str] = &[
    "query",
    "read",
    "control",
    "file_edit",
    "docker",
    "kubernetes",
    "metrics",
    "knowledge",
];

fn call(name: &str, arguments: Value) -> RecoveredCall {
    RecoveredCall {
        name: name.into(),
        arguments: arguments.to_string(),
    }
}

fn recover(text: &str) -> Option<Recovered> {
    recover_tool_calls(text, TOOLS)
}

fn logs() -> Value {
    json!({"action": "logs", "resource_id": "vm:pve1:101", "lines": 50})
}

const LOGS: &str = r#"{"action": "logs", "resource_id": "vm:pve1:101", "lines": 50}"#;

fn recovered(text: &str, expected_text: &str, calls: Vec<RecoveredCall>) {
    assert_eq!(
        recover(text),
        Some(Recovered {
            text: expected_text.into(),
            calls
        }),
        "recovering from {text:?}"
    );
}

#[test]
fn bare_json_shapes() {
    let shapes = [
        format!(r#"{{"name": "read", "arguments": {LOGS}}}"#),
        format!(r#"{{"tool": "read", "parameters": {LOGS}}}"#),
        format!(r#"{{"name": "read", "args": {LOGS}}}"#),
        format!(r#"{{"tool_name": "read", "input": {LOGS}}}"#),
        format!(r#"{{"type": "function", "function": {{"name": "read", "arguments": {LOGS}}}}}"#),
        format!(r#"{{"name": "functions.read", "arguments": {LOGS}}}"#),
        r#"{"name": "read", "action": "logs", "resource_id": "vm:pve1:101", "lines": 50}"#.into(),
        format!(
            r#"{{"name": "read", "arguments": {}}}"#,
            Value::String(LOGS.into())
        ),
        format!(
            r#"  {{"tool_calls": [{{"function": {{"name": "read", "arguments": {LOGS}}}}}]}}  "#
        ),
    ];
    for shape in shapes {
        recovered(&shape, "", vec![call("read", logs())]);
    }
}

#[test]
fn bare_json_array_and_text_before() {
    let text = format!(
        "I'll check both.\n[{{\"name\": \"read\", \"arguments\": {LOGS}}}, \
         {{\"name\": \"query\", \"arguments\": {{\"action\": \"health\"}}}}]"
    );
    let health = call("query", json!({"action": "health"}));
    recovered(
        &text,
        "I'll check both.",
        vec![call("read", logs()), health.clone()],
    );
    let two = format!(
        "{{\"name\": \"read\", \"arguments\": {LOGS}}}\n{{\"name\": \"query\", \"arguments\": {{\"action\": \"health\"}}}}<|eot_id|>"
    );
    recovered(&two, "", vec![call("read", logs()), health]);
}

#[test]
fn missing_arguments_are_an_empty_object() {
    recovered(
        r#"{"name": "query", "arguments": null}"#,
        "",
        vec![call("query", json!({}))],
    );
    recovered(
        r#"{"name": "query", "arguments": ""}"#,
        "",
        vec![call("query", json!({}))],
    );
}

#[test]
fn tagged_blocks() {
    let blocks = [
        format!("<tool_call>\n{{\"name\": \"read\", \"arguments\": {LOGS}}}\n</tool_call>"),
        format!("<tool_use>{{\"name\": \"read\", \"input\": {LOGS}}}</tool_use>"),
        format!("<function_call>{{\"name\": \"read\", \"arguments\": {LOGS}}}</function_call>"),
        format!("<|tool_call|>[{{\"name\": \"read\", \"arguments\": {LOGS}}}]<|/tool_call|>"),
        format!("<|python_tag|>{{\"name\": \"read\", \"parameters\": {LOGS}}}<|eom_id|>"),
        format!("<function=read>{LOGS}</function>"),
        format!("<function=read>{LOGS}"),
        format!("<tool_call>\n```json\n{{\"name\": \"read\", \"arguments\": {LOGS}}}\n```\n</tool_call>"),
        format!("<tool_call>{{\"name\": \"read\", \"arguments\": {LOGS}}}"),
        "<tool_call>\n<function=read>\n<parameter=action>\nlogs\n</parameter>\n<parameter=resource_id>\nvm:pve1:101\n</parameter>\n<parameter=lines>\n50\n</parameter>\n</function>\n</tool_call>".into(),
        "<function=read><parameter=action>logs</parameter><parameter=resource_id>vm:pve1:101</parameter><parameter=lines>50</parameter></function>".into(),
    ];
    for block in blocks {
        recovered(
            &format!("Checking the logs.\n{block}\n"),
            "Checking the logs.",
            vec![call("read", logs())],
        );
    }
}

#[test]
fn several_tagged_blocks_keep_their_order_and_the_text_between() {
    let text = format!(
        "First <tool_call>{{\"name\": \"query\", \"arguments\": {{\"action\": \"health\"}}}}</tool_call> then\n<tool_call>{{\"name\": \"read\", \"arguments\": {LOGS}}}</tool_call>"
    );
    let expected = vec![
        call("query", json!({"action": "health"})),
        call("read", logs()),
    ];
    recovered(&text, "First  then", expected);
}

#[test]
fn fenced_code() {
    for fence in ["```json", "```", "```tool_call", "```JSON"] {
        let text = format!(
            "Let me look.\n{fence}\n{{\"name\": \"read\", \"arguments\": {LOGS}}}\n```\nOne moment."
        );
        recovered(
            &text,
            "Let me look.\n\nOne moment.",
            vec![call("read", logs())],
        );
    }
}

#[test]
fn mistral() {
    let array = format!("[TOOL_CALLS] [{{\"name\": \"read\", \"arguments\": {LOGS}}}]</s>");
    recovered(&array, "", vec![call("read", logs())]);
    let named = format!("[TOOL_CALLS]read[ARGS]{LOGS}");
    recovered(&named, "", vec![call("read", logs())]);
    let with_id = format!(
        "[TOOL_CALLS]read[CALL_ID]a1b2c3d4e[ARGS]{LOGS}[TOOL_CALLS]query[ARGS]{{\"action\": \"health\"}}"
    );
    recovered(
        &with_id,
        "",
        vec![
            call("read", logs()),
            call("query", json!({"action": "health"})),
        ],
    );
}

#[test]
fn deepseek() {
    let classic = format!(
        "Checking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read\n```json\n{LOGS}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>"
    );
    recovered(&classic, "Checking.", vec![call("read", logs())]);
    let newer = format!(
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read<｜tool▁sep｜>{LOGS}<｜tool▁call▁end｜><｜tool▁call▁begin｜>query<｜tool▁sep｜>{{\"action\": \"health\"}}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    );
    recovered(
        &newer,
        "",
        vec![
            call("read", logs()),
            call("query", json!({"action": "health"})),
        ],
    );
    let ascii = format!("<|tool▁call▁begin|>read<|tool▁sep|>{LOGS}<|tool▁call▁end|>");
    recovered(&ascii, "", vec![call("read", logs())]);
}

#[test]
fn deepseek_dsml() {
    let text = "On it.\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"read\">\n<｜DSML｜parameter name=\"action\" string=\"true\">logs</｜DSML｜parameter>\n<｜DSML｜parameter name=\"resource_id\" string=\"true\">vm:pve1:101</｜DSML｜parameter>\n<｜DSML｜parameter name=\"lines\" string=\"false\">50</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>";
    recovered(text, "On it.", vec![call("read", logs())]);
}

#[test]
fn calls_inside_reasoning_are_not_recovered() {
    let text =
        format!("<think>maybe {{\"name\": \"read\", \"arguments\": {LOGS}}}</think>All good.");
    assert_eq!(recover(&text), None);
    let after = format!(
        "<think>plan</think>\n<tool_call>{{\"name\": \"read\", \"arguments\": {LOGS}}}</tool_call>"
    );
    recovered(&after, "", vec![call("read", logs())]);
}

#[test]
fn unknown_names_stay_text() {
    let texts = [
        r#"{"name": "restart_everything", "arguments": {"action": "now"}}"#.to_owned(),
        r#"<tool_call>{"name": "web_search", "arguments": {"q": "nginx"}}</tool_call>"#.into(),
        r#"<function=web_search>{"q": "nginx"}</function>"#.into(),
        "[TOOL_CALLS]web_search[ARGS]{\"q\": \"nginx\"}".into(),
        "```json\n{\"name\": \"web_search\", \"arguments\": {}}\n```".into(),
        r#"[{"name": "read", "arguments": {"action": "logs"}}, {"name": "web_search", "arguments": {}}]"#.into(),
    ];
    for text in texts {
        assert_eq!(recover(&text), None, "{text}");
    }
}

#[test]
fn prose_and_config_files_are_not_recovered() {
    let texts = [
        "No tool calls here, just an answer.",
        "The API answered {\"status\": \"ok\", \"items\": [1, 2]} which means the node is healthy.",
        "The read tool takes {\"name\": \"read\", \"arguments\": {\"action\": \"logs\"}} as input, and it answers with the last lines of the journal, which you can then filter by unit or by time.",
        "Here is the config:\n```json\n{\"name\": \"metrics\", \"version\": \"1.2\", \"port\": 9100}\n```\nRestart the exporter after editing it.",
        "```yaml\nname: read\narguments:\n  action: logs\n```",
        "Array [1, 2, 3] and an object {\"a\": 1}.",
    ];
    for text in texts {
        assert_eq!(recover(text), None, "{text}");
    }
}

#[test]
fn broken_arguments_are_passed_raw() {
    let broken = r#"{"action": "logs", "resource_id": vm:pve1:101}"#;
    let tagged = format!("<tool_call>{{\"name\": \"read\", \"arguments\": {broken}}}</tool_call>");
    recovered(
        &tagged,
        "",
        vec![RecoveredCall {
            name: "read".into(),
            arguments: broken.into(),
        }],
    );
    let function = "<function=read>{action: logs}</function>";
    recovered(
        function,
        "",
        vec![RecoveredCall {
            name: "read".into(),
            arguments: "{action: logs}".into(),
        }],
    );
    let stringly = r#"{"name": "read", "arguments": "{action: logs}"}"#;
    recovered(
        stringly,
        "",
        vec![RecoveredCall {
            name: "read".into(),
            arguments: "{action: logs}".into(),
        }],
    );
    let bare = format!("{{\"name\": \"read\", \"arguments\": {broken}}}\n");
    recovered(
        &bare,
        "",
        vec![RecoveredCall {
            name: "read".into(),
            arguments: broken.into(),
        }],
    );
    let missing_brace =
        format!("<tool_call>{{\"name\": \"read\", \"arguments\": {LOGS}</tool_call>");
    recovered(&missing_brace, "", vec![call("read", logs())]);
    let mistral = "[TOOL_CALLS]read[ARGS]{\"action\": logs";
    recovered(
        mistral,
        "",
        vec![RecoveredCall {
            name: "read".into(),
            arguments: "{\"action\": logs".into(),
        }],
    );
}

#[test]
fn arguments_are_normalized() {
    assert_eq!(normalize_arguments(""), "{}");
    assert_eq!(
        normalize_arguments(" { \"b\": 1 } "),
        json!({"b": 1}).to_string()
    );
    assert_eq!(
        normalize_arguments(&Value::String(LOGS.into()).to_string()),
        logs().to_string()
    );
    assert_eq!(normalize_arguments("{broken"), "{broken");
}

#[test]
fn any_mixture_of_fragments_is_handled_without_panic() {
    let fragments = [
        "<tool_call>",
        "</tool_call>",
        "{\"name\": \"read\", ",
        "\"arguments\": {",
        "}",
        "]",
        "[",
        "<function=read>",
        "</function>",
        "<parameter=action>",
        "```json\n",
        "```",
        "[TOOL_CALLS]",
        "[ARGS]",
        "<｜tool▁call▁begin｜>",
        "<｜tool▁sep｜>",
        "<｜tool▁call▁end｜>",
        "<think>",
        "</think>",
        "<|im_end|>",
        "日本",
        "ü",
        "\n",
        "<｜DSML｜invoke name=\"",
        "\">",
        "\"",
    ];
    let mut seed: u64 = 7;
    for _ in 0..3000 {
        let mut text = String::new();
        for _ in 0..8 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            text.push_str(fragments[(seed >> 33) as usize % fragments.len()]);
        }
        let _ = recover(&text);
        let _ = super::super::strip_reasoning(&text);
    }
}
