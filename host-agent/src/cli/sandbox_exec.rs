//! `vigil-agent sandbox-exec` (hidden): the launcher the agent starts for every host read.
//! It confines itself and execs the command (`crate::exec::sandbox::launcher`); with
//! `--probe` it prints what it could enforce as JSON and exits.
//!
//! Every host read pays for this process, so [`crate::cli::main`] dispatches it before
//! anything else runs: its few flags are parsed here by hand ([`SandboxExecArgs::parse`])
//! instead of by clap, which would build the whole command line's definition first.

use crate::exec::sandbox::launcher::{self, LAUNCH_FAILED};
use std::ffi::OsString;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// The launcher's flags: `[--scratch DIR] [--allow-unsandboxed] (--probe | -- COMMAND…)`.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SandboxExecArgs {
    /// The one directory the command may write in (its TMPDIR).
    scratch: Option<PathBuf>,
    /// Run the command even when the kernel has no Landlock.
    allow_unsandboxed: bool,
    /// Confine this process, print what was enforced as JSON, and exit.
    probe: bool,
    /// The program and its arguments, after `--`.
    command: Vec<String>,
}

impl SandboxExecArgs {
    /// Parse the arguments that follow `sandbox-exec`.
    pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Self, String> {
        let mut parsed = SandboxExecArgs::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            match arg.to_str() {
                Some("--") => {
                    parsed.command = args
                        .map(|a| a.into_string().map_err(|a| format!("{a:?} is not UTF-8")))
                        .collect::<Result<_, _>>()?;
                    break;
                }
                Some("--scratch") => {
                    let dir = args.next().ok_or("--scratch needs a directory")?;
                    parsed.scratch = Some(PathBuf::from(dir));
                }
                Some(flag) if flag.starts_with("--scratch=") => {
                    parsed.scratch = Some(PathBuf::from(&flag["--scratch=".len()..]));
                }
                Some("--allow-unsandboxed") => parsed.allow_unsandboxed = true,
                Some("--probe") => parsed.probe = true,
                _ => return Err(format!("unexpected argument {arg:?}")),
            }
        }
        if parsed.probe && !parsed.command.is_empty() {
            return Err("--probe takes no command".to_owned());
        }
        Ok(parsed)
    }
}

/// Parse the arguments after `sandbox-exec` and run the launcher; never returns when the
/// command starts.
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    match SandboxExecArgs::parse(args) {
        Ok(args) => run(args),
        Err(reason) => fail(&reason),
    }
}

fn run(args: SandboxExecArgs) -> ExitCode {
    if args.probe {
        return probe(args.scratch);
    }
    let Some((program, rest)) = args.command.split_first() else {
        return fail("no command given after --");
    };
    let reason = launcher::exec(
        args.scratch.as_deref(),
        args.allow_unsandboxed,
        program,
        rest,
    );
    fail(&reason)
}

fn probe(scratch: Option<PathBuf>) -> ExitCode {
    let report = match launcher::confine(scratch.as_deref()) {
        Ok(report) => report,
        Err(reason) => return fail(&reason),
    };
    let printed = serde_json::to_string(&report)
        .map_err(io::Error::other)
        .and_then(|json| writeln!(io::stdout().lock(), "{json}"));
    match printed {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e.to_string()),
    }
}

fn fail(reason: &str) -> ExitCode {
    let _ = writeln!(io::stderr().lock(), "vigil-agent sandbox-exec: {reason}");
    ExitCode::from(LAUNCH_FAILED)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<SandboxExecArgs, String> {
        SandboxExecArgs::parse(args.iter().map(OsString::from))
    }

    #[test]
    fn the_agents_own_command_line_parses() {
        let args = parse(&[
            "--scratch",
            "/tmp/s",
            "--allow-unsandboxed",
            "--",
            "/bin/bash",
            "-c",
            "--probe",
        ])
        .unwrap();
        assert_eq!(
            args,
            SandboxExecArgs {
                scratch: Some("/tmp/s".into()),
                allow_unsandboxed: true,
                probe: false,
                command: vec!["/bin/bash".into(), "-c".into(), "--probe".into()],
            }
        );
        assert_eq!(
            parse(&["--scratch=/x", "--probe"]).unwrap(),
            SandboxExecArgs {
                scratch: Some("/x".into()),
                probe: true,
                ..SandboxExecArgs::default()
            }
        );
    }

    #[test]
    fn unknown_or_incomplete_flags_are_refused() {
        assert!(parse(&["--scratch"]).is_err());
        assert!(parse(&["--frobnicate", "--", "true"]).is_err());
        assert!(parse(&["/bin/true"]).is_err());
        assert!(parse(&["--probe", "--", "true"]).is_err());
        assert_eq!(parse(&[]).unwrap(), SandboxExecArgs::default());
    }
}
