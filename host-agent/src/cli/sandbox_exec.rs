//! `vigil-agent sandbox-exec` (hidden): the launcher the agent starts for every host read.
//! It confines itself and execs the command (`crate::exec::sandbox::launcher`); with
//! `--probe` it prints what it could enforce as JSON and exits.

use crate::exec::sandbox::launcher::{self, LAUNCH_FAILED};
use clap::Args;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct SandboxExecArgs {
    /// The one directory the command may write in (its TMPDIR).
    #[arg(long, value_name = "DIR")]
    scratch: Option<PathBuf>,
    /// Run the command even when the kernel has no Landlock.
    #[arg(long)]
    allow_unsandboxed: bool,
    /// Confine this process, print what was enforced as JSON, and exit.
    #[arg(long, conflicts_with = "command")]
    probe: bool,
    /// The program and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// Run the launcher; never returns when the command starts.
pub fn main(args: SandboxExecArgs) -> ExitCode {
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
