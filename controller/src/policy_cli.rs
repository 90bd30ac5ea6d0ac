//! The shapes `vigil-controller policy check` prints: the stdin line convention, the JSON
//! record (one per command) and the human-readable explanation. Pure functions, no I/O;
//! the loop that reads and writes is in [`crate::cli::policy`].

use serde::Serialize;
use vigil_shared::policy::Classification;

/// Turns one line of standard input into the command it stands for: every literal
/// two-character sequence backslash-`n` becomes a newline, so a multi-line command fits
/// on one input line. There is no escape for a literal backslash-`n`; a command that needs
/// one (`printf 'a\nb'`) must be passed as the COMMAND argument, which is taken as is.
pub fn unescape_line(line: &str) -> String {
    line.replace("\\n", "\n")
}

/// The JSON record printed for one command. Field order is the output's key order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckRecord<'a> {
    /// The command exactly as classified (after [`unescape_line`] for stdin input).
    pub command: &'a str,
    /// `read_only_certain`, `read_only_conditional` or `write_or_unknown`.
    pub intent: &'static str,
    /// `read_only`, `low`, `medium` or `high`.
    pub risk: &'static str,
    /// True when the command ends by itself.
    pub bounded: bool,
    /// `tty`, `pager`, `stream` or `repl` for an unbounded command, else `null`.
    pub category: Option<&'static str>,
    /// A bounded command with the same purpose, where the classifier has one.
    pub rewrite: Option<&'a str>,
    /// The classifier's reasons, most important first.
    pub reasons: &'a [String],
}

impl<'a> CheckRecord<'a> {
    /// The record for `command` classified as `classification`.
    pub fn new(command: &'a str, classification: &'a Classification) -> Self {
        CheckRecord {
            command,
            intent: classification.intent.as_str(),
            risk: classification.risk.as_str(),
            bounded: classification.boundedness.is_bounded(),
            category: classification.category().map(|c| c.as_str()),
            rewrite: classification.rewrite(),
            reasons: &classification.reasons,
        }
    }
}

/// One line of JSON (no trailing newline) describing `classification` of `command`.
pub fn json_line(command: &str, classification: &Classification) -> serde_json::Result<String> {
    serde_json::to_string(&CheckRecord::new(command, classification))
}

/// The one-line verdict: `READ (read_only_certain, risk read_only, bounded)`,
/// `WRITE/UNKNOWN (risk high)`, with the unbounded category when there is one.
pub fn verdict_line(classification: &Classification) -> String {
    let risk = classification.risk.as_str();
    let unbounded = classification
        .category()
        .map(|category| format!(", unbounded: {}", category.as_str()));
    if classification.intent.is_read_only() {
        let boundedness = unbounded.unwrap_or_else(|| ", bounded".to_owned());
        format!(
            "READ ({}, risk {risk}{boundedness})",
            classification.intent.as_str()
        )
    } else {
        format!(
            "WRITE/UNKNOWN (risk {risk}{})",
            unbounded.unwrap_or_default()
        )
    }
}

/// The `--human` explanation of one command: the command (newlines shown as `\n`), the
/// verdict, one `- reason` line per reason and the suggested rewrite, if any. Ends with a
/// newline.
pub fn human_report(command: &str, classification: &Classification) -> String {
    let mut out = format!("command: {}\n", command.replace('\n', "\\n"));
    out.push_str(&verdict_line(classification));
    out.push('\n');
    for reason in &classification.reasons {
        out.push_str("- ");
        out.push_str(reason);
        out.push('\n');
    }
    if let Some(rewrite) = classification.rewrite() {
        out.push_str("rewrite: ");
        out.push_str(rewrite);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_shared::policy::{Boundedness, Intent, Risk, UnboundedCategory};

    fn follow_logs() -> Classification {
        Classification {
            intent: Intent::ReadOnlyCertain,
            risk: Risk::ReadOnly,
            reasons: vec![
                "journalctl only reads the journal".into(),
                "-f follows".into(),
            ],
            boundedness: Boundedness::Unbounded {
                category: UnboundedCategory::Stream,
                rewrite: Some("journalctl -n 200 --since \"10 min ago\"".into()),
            },
        }
    }

    fn delete_everything() -> Classification {
        Classification {
            intent: Intent::WriteOrUnknown,
            risk: Risk::High,
            reasons: vec!["rm deletes files".into()],
            boundedness: Boundedness::Bounded,
        }
    }

    #[test]
    fn unescape_turns_backslash_n_into_newlines() {
        assert_eq!(unescape_line("uptime"), "uptime");
        assert_eq!(unescape_line(r"uptime\ndf -h"), "uptime\ndf -h");
        assert_eq!(unescape_line(r"a\nb\nc"), "a\nb\nc");
        assert_eq!(unescape_line(r"\n"), "\n");
    }

    #[test]
    fn unescape_leaves_other_backslashes_alone() {
        assert_eq!(unescape_line(r"grep 'a\tb' f"), r"grep 'a\tb' f");
        assert_eq!(unescape_line(r"echo \\"), r"echo \\");
        // Every backslash-n goes, even after another backslash: there is no escape.
        assert_eq!(unescape_line(r"a\\nb"), "a\\\nb");
    }

    #[test]
    fn json_has_exactly_the_documented_keys_in_order() {
        let line = json_line("journalctl -f", &follow_logs()).unwrap();
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        let keys: Vec<&str> = value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut expected = [
            "command", "intent", "risk", "bounded", "category", "rewrite", "reasons",
        ];
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        expected.sort_unstable();
        assert_eq!(sorted, expected);
        assert!(
            line.starts_with(r#"{"command":"journalctl -f","intent":"read_only_certain","#),
            "{line}"
        );
        assert!(!line.contains('\n'));
    }

    #[test]
    fn json_values_for_an_unbounded_read() {
        let value: serde_json::Value =
            serde_json::from_str(&json_line("journalctl -f", &follow_logs()).unwrap()).unwrap();
        assert_eq!(value["intent"], "read_only_certain");
        assert_eq!(value["risk"], "read_only");
        assert_eq!(value["bounded"], false);
        assert_eq!(value["category"], "stream");
        assert_eq!(value["rewrite"], "journalctl -n 200 --since \"10 min ago\"");
        assert_eq!(value["reasons"][1], "-f follows");
    }

    #[test]
    fn json_uses_null_for_a_bounded_command() {
        let value: serde_json::Value =
            serde_json::from_str(&json_line("rm -rf /", &delete_everything()).unwrap()).unwrap();
        assert_eq!(value["intent"], "write_or_unknown");
        assert_eq!(value["bounded"], true);
        assert!(value["category"].is_null());
        assert!(value["rewrite"].is_null());
    }

    #[test]
    fn json_keeps_newlines_of_multi_line_commands_escaped() {
        let line = json_line("uptime\ndf -h", &delete_everything()).unwrap();
        assert!(!line.contains('\n'));
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(value["command"], "uptime\ndf -h");
    }

    #[test]
    fn verdict_lines() {
        let mut read = follow_logs();
        read.boundedness = Boundedness::Bounded;
        assert_eq!(
            verdict_line(&read),
            "READ (read_only_certain, risk read_only, bounded)"
        );
        assert_eq!(
            verdict_line(&follow_logs()),
            "READ (read_only_certain, risk read_only, unbounded: stream)"
        );
        assert_eq!(
            verdict_line(&delete_everything()),
            "WRITE/UNKNOWN (risk high)"
        );
    }

    #[test]
    fn human_report_lists_reasons_and_rewrite() {
        let report = human_report("journalctl -f\nuptime", &follow_logs());
        assert_eq!(
            report,
            "command: journalctl -f\\nuptime\n\
             READ (read_only_certain, risk read_only, unbounded: stream)\n\
             - journalctl only reads the journal\n\
             - -f follows\n\
             rewrite: journalctl -n 200 --since \"10 min ago\"\n"
        );
    }
}
