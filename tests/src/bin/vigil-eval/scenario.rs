//! What a scenario is: a user message, files it plants on the host, what the scripted model
//! answers (tool calls with `{host}`, `{dir}` and `{url}` filled in), what a person decides
//! when an approval comes, and the outcomes that judge it.

use serde_json::{Value, json};
use vigil_tests::model_server::Reply;

/// What the person does with approvals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Person {
    Approve,
    Deny,
    /// Never decides (the scenario cancels the turn once the approval shows).
    Ignore,
}

/// A step of the scripted model.
#[derive(Debug, Clone)]
pub enum Step {
    Call(&'static str, Value),
    Calls(Vec<(&'static str, Value)>),
    Text(&'static str),
    /// A tool call whose arguments text is sent as it is (broken JSON).
    Broken(&'static str, &'static str),
}

/// One scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: &'static str,
    /// A prompt-injection scenario (judged by the host's state only).
    pub injection: bool,
    pub level: &'static str,
    pub message: String,
    /// Files (relative to the scenario's directory) and their content.
    pub files: Vec<(&'static str, String)>,
    /// What an HTTP server on 127.0.0.1 answers at `{url}` (for planted HTTP bodies).
    pub http_body: Option<String>,
    /// A Docker container to start first, `(name prefix, label)`; its resource id is
    /// `{container}` (for instructions planted in labels and names).
    pub container: Option<(&'static str, Option<String>)>,
    /// Text the external MCP server's `lookup` tool returns (`{dir}` filled in): an
    /// instruction planted in an MCP tool's result.
    pub mcp_planted: Option<String>,
    pub steps: Vec<Step>,
    pub person: Person,
    pub expect: Expect,
}

/// The outcomes.
#[derive(Debug, Clone, Default)]
pub struct Expect {
    /// Each tool call's `(tool, error code)` in order (None: ok); empty to skip.
    pub calls: Vec<(&'static str, Option<&'static str>)>,
    /// Files that must exist afterwards.
    pub present: Vec<&'static str>,
    /// Files that must not exist afterwards.
    pub absent: Vec<&'static str>,
    /// `(file, text)`: the file must contain the text.
    pub contains: Vec<(&'static str, &'static str)>,
    /// Text the final answer must contain.
    pub answer: Option<&'static str>,
    /// Text the final answer must not contain.
    pub answer_lacks: Option<&'static str>,
    /// Text no event, request or answer may contain.
    pub never_seen: Vec<&'static str>,
}

impl Scenario {
    /// A scenario with defaults (controlled, no files, a person who denies).
    pub fn new(name: &'static str, message: impl Into<String>, steps: Vec<Step>) -> Scenario {
        Scenario {
            name,
            injection: false,
            level: "controlled",
            message: message.into(),
            files: Vec::new(),
            http_body: None,
            container: None,
            mcp_planted: None,
            steps,
            person: Person::Deny,
            expect: Expect::default(),
        }
    }
}

/// Fills `{host}`, `{dir}` and `{url}` in every string of `value`.
pub fn fill(value: &Value, vars: &[(&str, &str)]) -> Value {
    match value {
        Value::String(text) => {
            let mut text = text.clone();
            for (name, with) in vars {
                text = text.replace(&format!("{{{name}}}"), with);
            }
            Value::String(text)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| fill(v, vars)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), fill(v, vars)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The scripted replies of `steps` with variables filled in.
pub fn replies(steps: &[Step], vars: &[(&str, &str)]) -> Vec<Reply> {
    let text = |t: &str| {
        fill(&json!(t), vars)
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    steps
        .iter()
        .map(|step| match step {
            Step::Call(tool, args) => {
                Reply::ToolCalls(vec![((*tool).to_owned(), fill(args, vars))])
            }
            Step::Calls(calls) => Reply::ToolCalls(
                calls
                    .iter()
                    .map(|(t, a)| ((*t).to_owned(), fill(a, vars)))
                    .collect(),
            ),
            Step::Text(t) => Reply::Text(text(t)),
            Step::Broken(tool, args) => Reply::RawToolCall {
                name: (*tool).to_owned(),
                arguments: (*args).to_owned(),
            },
        })
        .collect()
}
