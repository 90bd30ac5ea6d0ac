//! End to end: runs the built `vigil-controller` binary for `policy check` and checks the
//! shape of what it prints. The classifier's verdicts are tested in `vigil-shared`; here
//! only the contract of the command line is (line counts, keys, types, exit codes).

// Test code: a panic is a failed test. (Clippy's test allowance does not reach helpers.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// The built controller binary.
fn controller_bin() -> std::path::PathBuf {
    vigil_tests::bin("vigil-controller")
}

const KEYS: [&str; 7] = [
    "command", "intent", "risk", "bounded", "category", "rewrite", "reasons",
];

/// Runs `vigil-controller policy check <args>` with `stdin` as standard input.
fn policy_check(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(controller_bin())
        .args(["policy", "check"])
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn vigil-controller");
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().expect("stdin is piped");
        pipe.write_all(input.as_bytes()).expect("write stdin");
    }
    child.wait_with_output().expect("wait for vigil-controller")
}

fn stdout_of(output: &Output) -> String {
    assert_eq!(
        output.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

/// Parses one output line and checks it has exactly the documented keys and types.
fn parse_record(line: &str) -> Value {
    let value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    let object = value.as_object().expect("a JSON object");
    let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
    let mut expected = KEYS.to_vec();
    keys.sort_unstable();
    expected.sort_unstable();
    assert_eq!(keys, expected, "{line}");

    assert!(value["command"].is_string());
    let intent = value["intent"].as_str().expect("intent is a string");
    assert!(
        [
            "read_only_certain",
            "read_only_conditional",
            "write_or_unknown"
        ]
        .contains(&intent),
        "{intent}"
    );
    let risk = value["risk"].as_str().expect("risk is a string");
    assert!(
        ["read_only", "low", "medium", "high"].contains(&risk),
        "{risk}"
    );
    assert!(value["bounded"].is_boolean());
    assert!(value["category"].is_null() || value["category"].is_string());
    assert!(value["rewrite"].is_null() || value["rewrite"].is_string());
    let reasons = value["reasons"].as_array().expect("reasons is an array");
    assert!(reasons.iter().all(Value::is_string));
    value
}

#[test]
fn command_argument_prints_one_json_line() {
    let out = stdout_of(&policy_check(&["systemctl status nginx"], None));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    assert_eq!(parse_record(lines[0])["command"], "systemctl status nginx");
}

#[test]
fn stdin_prints_one_json_line_per_non_empty_line() {
    let input = "uptime\n\ndf -h\n   \ncat /etc/os-release\njournalctl -f\n";
    let out = stdout_of(&policy_check(&[], Some(input)));
    let commands: Vec<Value> = out
        .lines()
        .map(|line| parse_record(line)["command"].clone())
        .collect();
    assert_eq!(
        commands,
        ["uptime", "df -h", "cat /etc/os-release", "journalctl -f"]
    );
}

#[test]
fn backslash_n_in_stdin_makes_one_multi_line_command() {
    let out = stdout_of(&policy_check(&[], Some("uptime\\nrm -rf /tmp/x\n")));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    assert_eq!(parse_record(lines[0])["command"], "uptime\nrm -rf /tmp/x");
}

#[test]
fn command_argument_is_taken_literally() {
    let out = stdout_of(&policy_check(&[r"printf 'a\nb'"], None));
    assert_eq!(parse_record(out.trim_end())["command"], r"printf 'a\nb'");
}

#[test]
fn empty_stdin_prints_nothing_and_succeeds() {
    let out = stdout_of(&policy_check(&[], Some("")));
    assert_eq!(out, "");
}

#[test]
fn human_output_shows_verdict_and_reasons() {
    let command = "journalctl -u nginx -f";
    let json = stdout_of(&policy_check(&[command], None));
    let record = parse_record(json.trim_end());
    let human = stdout_of(&policy_check(&["--human", command], None));

    assert!(
        human.starts_with(&format!("command: {command}\n")),
        "{human}"
    );
    let verdict = human.lines().nth(1).expect("a verdict line");
    assert!(
        verdict.starts_with("READ (") || verdict.starts_with("WRITE/UNKNOWN ("),
        "{verdict}"
    );
    assert!(
        verdict.contains(record["risk"].as_str().unwrap()),
        "{verdict}"
    );
    for reason in record["reasons"].as_array().unwrap() {
        let line = format!("- {}", reason.as_str().unwrap());
        assert!(
            human.lines().any(|l| l == line),
            "missing {line:?} in {human}"
        );
    }
    if let Some(rewrite) = record["rewrite"].as_str() {
        assert!(human.contains(&format!("rewrite: {rewrite}\n")), "{human}");
    }
}

#[test]
fn human_stdin_prints_one_report_per_command() {
    let human = stdout_of(&policy_check(
        &["--human"],
        Some("uptime\ndf -h\\nfree -m\n"),
    ));
    let headers: Vec<&str> = human
        .lines()
        .filter(|line| line.starts_with("command: "))
        .collect();
    assert_eq!(headers, ["command: uptime", "command: df -h\\nfree -m"]);
}

#[test]
fn unreadable_input_exits_2() {
    let mut child = Command::new(controller_bin())
        .args(["policy", "check"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn vigil-controller");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(b"uptime\n\xff\xfe\n")
        .expect("write stdin");
    let output = child.wait_with_output().expect("wait for vigil-controller");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("line 2"), "{stderr}");
}

#[test]
fn help_explains_the_stdin_format() {
    let output = Command::new(controller_bin())
        .args(["policy", "check", "--help"])
        .stdin(Stdio::null())
        .output()
        .expect("run vigil-controller");
    let help = stdout_of(&output);
    assert!(help.contains("standard input"), "{help}");
    assert!(help.contains("backslash"), "{help}");
    for key in KEYS {
        assert!(help.contains(key), "help does not mention {key}");
    }
}
