//! `vigil-agent install` and `vigil-agent uninstall`.

use super::{ConfigArgs, StateArgs, absolute, output_error};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::install::{self, DEFAULT_UNIT_DIR, UNIT_NAME, UnitOptions};
use crate::state::StateDir;
use clap::Args;
use std::io::{self, Write};
use std::path::PathBuf;

pub const INSTALL_ABOUT: &str = "\
Write a hardened systemd unit, vigil-agent.service, that runs this binary (by its absolute \
path) as `vigil-agent run`, restarts it on failure (except after revocation), then run \
`systemctl daemon-reload` and `systemctl enable --now vigil-agent`. The host must be enrolled \
first (`vigil-agent join`). --no-start only writes the unit.";

#[derive(Debug, Args)]
pub struct InstallArgs {
    #[command(flatten)]
    state: StateArgs,
    /// Start the service in read-only mode (every write refused).
    #[arg(long)]
    read_only: bool,
    /// Start the service with --allow-unsandboxed-reads (host reads run even on a kernel
    /// without Landlock, where they could write).
    #[arg(long, env = crate::exec::sandbox::ENV_ALLOW_UNSANDBOXED_READS)]
    allow_unsandboxed_reads: bool,
    #[command(flatten)]
    config: ConfigArgs,
    /// Directory to write the unit into.
    #[arg(long, default_value = DEFAULT_UNIT_DIR, value_name = "DIR")]
    unit_dir: PathBuf,
    /// Only write the unit; do not call systemctl.
    #[arg(long)]
    no_start: bool,
    /// Print the unit on standard output instead of writing it (for packagers: the Debian
    /// package ships exactly this unit).
    #[arg(long)]
    print: bool,
    /// The binary the unit runs (default: this program).
    #[arg(long, value_name = "PATH")]
    exe: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct UninstallArgs {
    /// Directory the unit was written into.
    #[arg(long, default_value = DEFAULT_UNIT_DIR, value_name = "DIR")]
    unit_dir: PathBuf,
    /// Only remove the unit; do not call systemctl.
    #[arg(long)]
    no_start: bool,
    /// Also delete the agent's key, certificate and identity from the state directory.
    #[arg(long)]
    purge: bool,
    #[command(flatten)]
    state: StateArgs,
}

pub fn install(args: InstallArgs) -> Result<()> {
    let config = match args.config.config {
        Some(path) => {
            let path = absolute(path)?;
            Config::load(Some(&path), false)?;
            Some(path)
        }
        None => None,
    };
    let exe = match args.exe {
        Some(exe) => absolute(exe)?,
        None => std::env::current_exe()
            .and_then(std::fs::canonicalize)
            .map_err(|e| Error::io("find this program's path", e))?,
    };
    let options = UnitOptions {
        exe,
        state_dir: absolute(args.state.state_dir)?,
        read_only: args.read_only,
        allow_unsandboxed_reads: args.allow_unsandboxed_reads,
        config,
        pct_present: install::on_path("pct"),
        packaged: args.print,
    };
    if args.print {
        let unit = install::render_unit(&options)?;
        let mut out = io::stdout().lock();
        return out
            .write_all(unit.as_bytes())
            .and_then(|()| out.flush())
            .map_err(output_error);
    }
    let path = install::install(&options, &args.unit_dir, !args.no_start)?;
    let mut out = io::stdout().lock();
    writeln!(out, "Wrote {}", path.display())
        .and_then(|()| {
            if args.no_start {
                writeln!(
                    out,
                    "Not started (--no-start). Start it with: systemctl daemon-reload && systemctl enable --now {UNIT_NAME}"
                )
            } else {
                writeln!(out, "Enabled and started {UNIT_NAME}.")
            }
        })
        .map_err(output_error)
}

pub fn uninstall(args: UninstallArgs) -> Result<()> {
    let state = StateDir::new(args.state.state_dir);
    let purge = args.purge.then_some(&state);
    let removed = install::uninstall(&args.unit_dir, !args.no_start, purge)?;
    let mut out = io::stdout().lock();
    let unit_line = match &removed.unit {
        Some(path) => format!("Removed {}", path.display()),
        None => format!(
            "{UNIT_NAME} is not installed in {}",
            args.unit_dir.display()
        ),
    };
    writeln!(out, "{unit_line}").map_err(output_error)?;
    if args.purge {
        writeln!(
            out,
            "Purged {} file(s) from {}",
            removed.state_files.len(),
            state.path().display()
        )
        .map_err(output_error)?;
    }
    Ok(())
}
