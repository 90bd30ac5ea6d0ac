//! `vigil-controller policy check`: classify shell commands with the shared classifier and
//! print the decision, as JSON lines or as a readable explanation.

use std::io::{self, BufRead, Write};

use clap::{Args, Subcommand};
use tracing::{debug, info_span};
use vigil_shared::policy::classify;

use crate::policy_cli::{human_report, json_line, unescape_line};
use crate::{Error, Result};

const CHECK_LONG_ABOUT: &str = "\
Classify shell commands the way the controller and the agents do before anything runs, and
print the decision. Nothing is executed.

With COMMAND, that one string is classified exactly as given. Without it, commands are read
from standard input, one per line: empty lines are skipped, and every literal two-character
sequence \\n (backslash, n) in a line stands for a newline, so a multi-line command fits on
one line. There is no escape for a literal backslash-n; pass such a command as COMMAND.

Default output is one JSON object per command, one per line, with the keys
  command   the command as classified
  intent    read_only_certain | read_only_conditional | write_or_unknown
  risk      read_only | low | medium | high
  bounded   true when the command ends by itself
  category  tty | pager | stream | repl when unbounded, else null
  rewrite   a bounded alternative, or null
  reasons   the classifier's reasons, most important first

The exit code is 0 whenever the commands were classified, whatever the verdict (read it from
the output); 2 on bad usage or when reading input or writing output fails.";

const CHECK_AFTER_HELP: &str = "\
Examples:
  vigil-controller policy check 'systemctl status nginx'
  vigil-controller policy check --human 'journalctl -f'
  printf '%s\\n' 'df -h' 'uptime\\nfree -m' | vigil-controller policy check";

/// `vigil-controller policy …`
#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Classify shell commands as read-only or write (nothing is executed).
    #[command(long_about = CHECK_LONG_ABOUT, after_help = CHECK_AFTER_HELP)]
    Check(CheckArgs),
}

/// Arguments of `policy check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// One shell command, quoted as one argument. Without it, read commands from stdin.
    pub command: Option<String>,
    /// Print a readable explanation (verdict, reasons, rewrite) instead of JSON lines.
    #[arg(long)]
    pub human: bool,
}

/// How to print each decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// One JSON object per line.
    JsonLines,
    /// The `--human` explanation, a blank line between commands.
    Human,
}

/// Runs a `policy` subcommand against the process's stdin and stdout.
pub fn run(command: PolicyCommand) -> Result<()> {
    match command {
        PolicyCommand::Check(args) => {
            let format = if args.human {
                OutputFormat::Human
            } else {
                OutputFormat::JsonLines
            };
            let mut out = io::stdout().lock();
            match args.command {
                Some(command) => check_one(&command, format, &mut out)?,
                None => {
                    check_lines(io::stdin().lock(), format, &mut out)?;
                }
            }
            out.flush().map_err(Error::WriteOutput)
        }
    }
}

/// Classifies `command` and writes its decision to `out`.
pub fn check_one(command: &str, format: OutputFormat, out: &mut impl Write) -> Result<()> {
    let classification = classify(command);
    debug!(
        intent = %classification.intent,
        risk = %classification.risk,
        bounded = classification.boundedness.is_bounded(),
        "classified"
    );
    let text = match format {
        OutputFormat::JsonLines => json_line(command, &classification)? + "\n",
        OutputFormat::Human => human_report(command, &classification),
    };
    out.write_all(text.as_bytes()).map_err(Error::WriteOutput)
}

/// Classifies every non-empty line of `input` (after [`unescape_line`]) and writes one
/// decision per line to `out`. Returns how many commands were classified.
pub fn check_lines(
    input: impl BufRead,
    format: OutputFormat,
    out: &mut impl Write,
) -> Result<usize> {
    let mut checked = 0;
    for (index, line) in input.lines().enumerate() {
        let line = line.map_err(|source| Error::ReadInput {
            line: index + 1,
            source,
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let _span = info_span!("policy_check", line = index + 1).entered();
        if format == OutputFormat::Human && checked > 0 {
            out.write_all(b"\n").map_err(Error::WriteOutput)?;
        }
        check_one(&unescape_line(&line), format, out)?;
        checked += 1;
    }
    debug!(checked, "end of input");
    Ok(checked)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_lines(input: &str, format: OutputFormat) -> (usize, String) {
        let mut out = Vec::new();
        let checked = check_lines(input.as_bytes(), format, &mut out).unwrap();
        (checked, String::from_utf8(out).unwrap())
    }

    #[test]
    fn one_json_line_per_non_empty_input_line() {
        let (checked, out) = run_lines("uptime\n\n   \ndf -h\r\nfree -m", OutputFormat::JsonLines);
        assert_eq!(checked, 3);
        let commands: Vec<String> = out
            .lines()
            .map(|line| {
                let value: serde_json::Value = serde_json::from_str(line).unwrap();
                value["command"].as_str().unwrap().to_owned()
            })
            .collect();
        assert_eq!(commands, ["uptime", "df -h", "free -m"]);
    }

    #[test]
    fn backslash_n_joins_a_multi_line_command() {
        let (checked, out) = run_lines("uptime\\ndf -h\n", OutputFormat::JsonLines);
        assert_eq!(checked, 1);
        let value: serde_json::Value = serde_json::from_str(out.trim_end()).unwrap();
        assert_eq!(value["command"], "uptime\ndf -h");
    }

    #[test]
    fn human_reports_are_separated_by_a_blank_line() {
        let (checked, out) = run_lines("uptime\ndf -h\n", OutputFormat::Human);
        assert_eq!(checked, 2);
        assert_eq!(out.matches("command: ").count(), 2);
        assert!(out.contains("\n\ncommand: df -h\n"), "{out}");
    }

    #[test]
    fn invalid_utf8_is_a_read_error_with_its_line_number() {
        let input: &[u8] = b"uptime\n\xff\xfe\n";
        let err = check_lines(input, OutputFormat::JsonLines, &mut Vec::new()).unwrap_err();
        assert!(matches!(err, Error::ReadInput { line: 2, .. }), "{err:?}");
        assert_eq!(err.exit_code(), 2);
    }
}
