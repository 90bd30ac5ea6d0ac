//! The flags of `vigil-agent sandbox-exec`, parsed by hand: `[--scratch DIR]
//! [--allow-unsandboxed] (--probe | -- COMMAND…)`. It is recognised before clap, so that
//! it starts with nothing but the confinement.

use super::SandboxError;
use std::ffi::OsString;
use std::path::PathBuf;

/// The launcher's flags: `[--scratch DIR] [--allow-unsandboxed] (--probe | -- COMMAND…)`.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct LauncherArgs {
    /// The one directory the command may write in (its TMPDIR).
    pub scratch: Option<PathBuf>,
    /// Run the command even when the kernel has no Landlock.
    pub allow_unsandboxed: bool,
    /// Confine this process, print what was enforced as JSON, and exit.
    pub probe: bool,
    /// The program and its arguments, after `--`.
    pub command: Vec<String>,
}

impl LauncherArgs {
    /// Parse the launcher's arguments (those after `sandbox-exec` for the agent).
    pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Self, SandboxError> {
        let mut parsed = LauncherArgs::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            match arg.to_str() {
                Some("--") => {
                    parsed.command = args
                        .map(|a| {
                            a.into_string()
                                .map_err(|a| SandboxError::Invalid(format!("{a:?} is not UTF-8")))
                        })
                        .collect::<Result<_, _>>()?;
                    break;
                }
                Some("--scratch") => {
                    let dir = args.next().ok_or_else(|| {
                        SandboxError::Invalid("--scratch needs a directory".to_owned())
                    })?;
                    parsed.scratch = Some(PathBuf::from(dir));
                }
                Some(flag) if flag.starts_with("--scratch=") => {
                    parsed.scratch = Some(PathBuf::from(&flag["--scratch=".len()..]));
                }
                Some("--allow-unsandboxed") => parsed.allow_unsandboxed = true,
                Some("--probe") => parsed.probe = true,
                _ => {
                    return Err(SandboxError::Invalid(format!(
                        "unexpected argument {arg:?}"
                    )));
                }
            }
        }
        if parsed.probe && !parsed.command.is_empty() {
            return Err(SandboxError::Invalid("--probe takes no command".to_owned()));
        }
        Ok(parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<LauncherArgs, SandboxError> {
        LauncherArgs::parse(args.iter().map(OsString::from))
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
            LauncherArgs {
                scratch: Some("/tmp/s".into()),
                allow_unsandboxed: true,
                probe: false,
                command: vec!["/bin/bash".into(), "-c".into(), "--probe".into()],
            }
        );
        assert_eq!(
            parse(&["--scratch=/x", "--probe"]).unwrap(),
            LauncherArgs {
                scratch: Some("/x".into()),
                probe: true,
                ..LauncherArgs::default()
            }
        );
    }

    #[test]
    fn unknown_or_incomplete_flags_are_refused() {
        assert!(parse(&["--scratch"]).is_err());
        assert!(parse(&["--frobnicate", "--", "true"]).is_err());
        assert!(parse(&["/bin/true"]).is_err());
        assert!(parse(&["--probe", "--", "true"]).is_err());
        assert_eq!(parse(&[]).unwrap(), LauncherArgs::default());
    }
}
