use super::super::{VisibleText, strip_reasoning};

/// What the filter shows for `deltas`, pushed one after the other.
fn stream(deltas: &[&str]) -> String {
    let mut filter = VisibleText::new();
    let mut shown: String = deltas.iter().map(|delta| filter.push(delta)).collect();
    shown.push_str(&filter.finish());
    shown
}

/// Checks `text` streamed whole, and split in two at every char boundary.
fn streams_as(text: &str, expected: &str) {
    assert_eq!(stream(&[text]), expected, "whole {text:?}");
    for (at, _) in text.char_indices().skip(1) {
        let (head, tail) = text.split_at(at);
        assert_eq!(stream(&[head, tail]), expected, "split {head:?} | {tail:?}");
    }
}

/// Checks `text` streamed one char at a time.
fn streams_per_char(text: &str, expected: &str) {
    let chars: Vec<String> = text.chars().map(String::from).collect();
    let deltas: Vec<&str> = chars.iter().map(String::as_str).collect();
    assert_eq!(stream(&deltas), expected, "per char {text:?}");
}

const CASES: &[(&str, &str)] = &[
    (
        "<think>Let me see.</think>\n\nThe node is up.",
        "The node is up.",
    ),
    ("<thinking>hmm</thinking>Answer", "Answer"),
    ("<reasoning>a < b</reasoning>Answer", "Answer"),
    ("Before <think>x</think> after", "Before  after"),
    ("<think>a<think>b</think>c</think>d", "d"),
    ("<think>never closed", ""),
    ("Answer<think>late, never closed", "Answer"),
    ("The node is up.<｜end▁of▁sentence｜>", "The node is up."),
    ("Done.<|im_end|>", "Done."),
    ("Done.<|eot_id|>", "Done."),
    ("Done.<|endoftext|>", "Done."),
    ("Done.[/INST]", "Done."),
    ("Done.</s>", "Done."),
    (
        "<|start_header_id|>assistant<|end_header_id|>\n\nHello",
        "Hello",
    ),
    (
        "<|channel|>analysis<|message|>thinking<|end|><|start|>assistant<|channel|>final<|message|>Hi",
        "Hi",
    ),
    (
        "Checking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        "Checking.",
    ),
    ("Ok<|tool▁calls▁begin|>x<|tool▁calls▁end|>", "Ok"),
    ("Ok<｜DSML｜function_calls>x</｜DSML｜function_calls>", "Ok"),
    ("Ok<end▁of▁thinking>", "Ok"),
    // Tool calls written into the text never show, split anywhere (the markup is held
    // back while it may be starting).
    (
        "Let me check.\n<tool_call>{\"name\": \"read\", \"arguments\": {\"command\": \"uptime\"}}</tool_call>",
        "Let me check.\n",
    ),
    ("Ok<tool_calls>[]</tool_calls>", "Ok"),
    ("Ok<function_call>{}</function_call> done", "Ok done"),
    ("Ok<|tool_call|>{}<|/tool_call|>", "Ok"),
    (
        "Ok\n<function=read>\n<parameter=action>\nlogs\n</parameter>\n</function>",
        "Ok\n",
    ),
    ("a <tool_call> never closed {\"name\": \"read\"", "a "),
    (
        "x < y and <tool is not a tag",
        "x < y and <tool is not a tag",
    ),
];

#[test]
fn reasoning_and_artifacts_are_removed_at_every_split() {
    for (text, expected) in CASES {
        streams_as(text, expected);
        streams_per_char(text, expected);
    }
}

#[test]
fn stored_text_is_stripped_and_trimmed() {
    for (text, expected) in CASES {
        assert_eq!(strip_reasoning(text), expected.trim(), "{text:?}");
    }
    assert_eq!(strip_reasoning("  plain text  "), "  plain text  ");
}

#[test]
fn a_close_without_its_open_drops_the_reasoning_before_it() {
    let text = "The user wants logs. I should call read.</think>\n\nHere are the logs.";
    assert_eq!(strip_reasoning(text), "Here are the logs.");
    assert_eq!(stream(&[text]), "Here are the logs.");
    let mut filter = VisibleText::new();
    assert_eq!(filter.push("The user wants logs."), "The user wants logs.");
    assert!(!filter.dropped_opening());
    assert_eq!(filter.push(" Done.</think>\n\nHere"), "Here");
    assert!(filter.dropped_opening());
}

#[test]
fn a_filter_opened_in_reasoning_holds_until_the_close() {
    let text = "The user wants logs.</think>\n\nHere are the logs.<|im_end|>";
    for (at, _) in text.char_indices().skip(1) {
        let (head, tail) = text.split_at(at);
        let mut filter = VisibleText::opened_reasoning();
        let mut shown = filter.push(head);
        shown.push_str(&filter.push(tail));
        shown.push_str(&filter.finish());
        assert_eq!(shown, "Here are the logs.", "split {head:?} | {tail:?}");
    }
    let mut filter = VisibleText::opened_reasoning();
    assert_eq!(filter.push("No reasoning <|im_end|>this time"), "");
    assert_eq!(filter.finish(), "No reasoning this time");
    assert_eq!(filter.push("<think>x</think>Next answer"), "Next answer");
    assert_eq!(filter.push(" goes on"), " goes on");
}

#[test]
fn plain_text_passes_through_unchanged_and_at_once() {
    let texts = [
        "Plain answer with no tags.",
        "Comparisons: a < b, b > c, x<y, [link](http://x), <div>html</div>, [1] [note]",
        "Unicode ｜ ▁ ü 日本語 <｜ not a token",
        "  leading and trailing whitespace  \n",
    ];
    for text in texts {
        streams_as(text, text);
        streams_per_char(text, text);
        assert_eq!(strip_reasoning(text), text);
    }
    let mut filter = VisibleText::new();
    assert_eq!(filter.push("Hello, world."), "Hello, world.");
    assert_eq!(
        filter.push(" The node <b>is</b> up"),
        " The node <b>is</b> up"
    );
    assert_eq!(filter.finish(), "");
}

#[test]
fn only_a_possible_partial_tag_is_held_back() {
    let mut filter = VisibleText::new();
    assert_eq!(filter.push("Hello <thi"), "Hello ");
    assert_eq!(filter.push("s is a tag? no"), "<this is a tag? no");
    assert_eq!(filter.push(" [/IN"), " ");
    assert_eq!(filter.push("ST]"), "");
    assert_eq!(filter.push(" end <|im_"), " end ");
    assert_eq!(filter.finish(), "<|im_");
}

#[test]
fn the_filter_starts_over_after_finish() {
    let mut filter = VisibleText::new();
    assert_eq!(filter.push("<think>a"), "");
    assert_eq!(filter.finish(), "");
    assert_eq!(filter.push("Fresh answer"), "Fresh answer");
    assert_eq!(filter.finish(), "");
}
