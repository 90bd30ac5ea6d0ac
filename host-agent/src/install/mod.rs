//! `vigil-agent install` / `uninstall`: a hardened systemd unit that runs
//! `vigil-agent run`, and its removal.
//!
//! The unit restarts the agent on any exit except status 3 (revoked by the controller).
//! It deliberately omits file-system sandboxing (`ProtectSystem=`, `PrivateTmp=` …):
//! commands inherit the service's sandbox, and approved writes must be able to administer
//! the host.

use crate::DEFAULT_STATE_DIR;
use crate::error::{EXIT_REVOKED, Error, Result};
use crate::state::{OWN_FILES, StateDir};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The unit's file name.
pub const UNIT_NAME: &str = "vigil-agent.service";
/// Where units are installed by default.
pub const DEFAULT_UNIT_DIR: &str = "/etc/systemd/system";

/// What the unit runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitOptions {
    /// Absolute path of the `vigil-agent` binary.
    pub exe: PathBuf,
    /// Absolute state directory.
    pub state_dir: PathBuf,
    pub read_only: bool,
    /// Pass `--allow-unsandboxed-reads` (reads run even without Landlock).
    pub allow_unsandboxed_reads: bool,
    pub config: Option<PathBuf>,
    /// `pct` (Proxmox) is installed: `NoNewPrivileges=` is left out.
    pub pct_present: bool,
    /// The unit ships in a package (`install --print`) rather than being written by
    /// `install`: only its first comment differs.
    pub packaged: bool,
}

/// The unit file's text.
pub fn render_unit(o: &UnitOptions) -> Result<String> {
    let mut exec = format!(
        "{} run --state-dir {}",
        systemd_arg(&o.exe)?,
        systemd_arg(&o.state_dir)?
    );
    if o.read_only {
        exec.push_str(" --read-only");
    }
    if o.allow_unsandboxed_reads {
        exec.push_str(" --allow-unsandboxed-reads");
    }
    if let Some(config) = &o.config {
        exec.push_str(&format!(" --config {}", systemd_arg(config)?));
    }
    let state_directory = if o.state_dir == Path::new(DEFAULT_STATE_DIR) {
        "StateDirectory=vigil-agent\nStateDirectoryMode=0700\n"
    } else {
        ""
    };
    let no_new_privileges = if o.pct_present {
        "# NoNewPrivileges= is not set: `pct` (Proxmox) is installed and `pct exec` must be\n\
         # able to change privileges to enter containers.\n"
    } else {
        "NoNewPrivileges=yes\n"
    };
    let origin = if o.packaged {
        "# Shipped by the vigil-agent package (made by `vigil-agent install --print`).\n"
    } else {
        "# Written by `vigil-agent install`; `vigil-agent uninstall` removes it.\n"
    };
    Ok(format!(
        "{origin}\
         [Unit]\n\
         Description=Vigil host agent (runs checked, bounded commands for the Vigil controller)\n\
         {docs}\
         Wants=network-online.target\n\
         After=network-online.target\n\
         StartLimitIntervalSec=0\n\
         \n\
         [Service]\n\
         Type=simple\n\
         ExecStart={exec}\n\
         Restart=always\n\
         RestartSec=2s\n\
         # Exit status {EXIT_REVOKED}: the controller revoked this agent; do not restart it.\n\
         RestartPreventExitStatus={EXIT_REVOKED}\n\
         {state_directory}\
         UMask=0077\n\
         LimitNOFILE=65536\n\
         {no_new_privileges}\
         KillMode=control-group\n\
         TimeoutStopSec=15s\n\
         # No ProtectSystem=, ProtectHome= or PrivateTmp=: commands inherit the sandbox and\n\
         # approved writes must be able to administer this host.\n\
         \n\
         [Install]\n\
         WantedBy=multi-user.target\n",
        docs = match env!("CARGO_PKG_REPOSITORY") {
            "" => String::new(),
            repo => format!("Documentation={repo}\n"),
        },
    ))
}

/// One ExecStart argument, quoted for systemd when needed.
pub fn systemd_arg(path: &Path) -> Result<String> {
    let text = path
        .to_str()
        .ok_or_else(|| Error::Install(format!("{} is not valid UTF-8", path.display())))?;
    if text.contains(['\n', '\r', '\0']) {
        return Err(Error::Install(format!("{text:?} contains a line break")));
    }
    let escaped = text.replace('%', "%%").replace('$', "$$");
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:,@%$".contains(c);
    if escaped.chars().all(plain) && !escaped.is_empty() {
        return Ok(escaped);
    }
    Ok(format!(
        "\"{}\"",
        escaped.replace('\\', "\\\\").replace('"', "\\\"")
    ))
}

/// True when `name` is an executable in `$PATH` or `/usr/sbin`.
pub fn on_path(name: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin")])
        .map(|dir| dir.join(name))
        .any(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Write the unit (0644, atomically) and, when `start`, reload systemd and enable it.
pub fn install(options: &UnitOptions, unit_dir: &Path, start: bool) -> Result<PathBuf> {
    let state = StateDir::new(&options.state_dir);
    if !state.is_enrolled() {
        return Err(Error::NotEnrolled {
            dir: options.state_dir.clone(),
        });
    }
    let text = render_unit(options)?;
    fs::create_dir_all(unit_dir)
        .map_err(|e| Error::io(format!("create {}", unit_dir.display()), e))?;
    let units = StateDir::new(unit_dir);
    units.write(UNIT_NAME, text.as_bytes(), 0o644)?;
    let path = units.file(UNIT_NAME);
    if start {
        systemctl(&["daemon-reload"])?;
        systemctl(&["enable", "--now", UNIT_NAME])?;
    }
    Ok(path)
}

/// What `uninstall` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Removed {
    pub unit: Option<PathBuf>,
    pub state_files: Vec<PathBuf>,
}

/// Stop and disable (when `stop`), remove the unit, and with `purge` the agent's own
/// state files (other files in the directory are kept, and then so is the directory).
pub fn uninstall(unit_dir: &Path, stop: bool, purge: Option<&StateDir>) -> Result<Removed> {
    let unit = unit_dir.join(UNIT_NAME);
    let mut removed = Removed::default();
    if unit.exists() {
        if stop {
            systemctl(&["disable", "--now", UNIT_NAME])?;
        }
        fs::remove_file(&unit).map_err(|e| Error::io(format!("remove {}", unit.display()), e))?;
        if stop {
            systemctl(&["daemon-reload"])?;
        }
        removed.unit = Some(unit);
    }
    if let Some(state) = purge {
        removed.state_files = purge_state(state)?;
    }
    Ok(removed)
}

fn purge_state(state: &StateDir) -> Result<Vec<PathBuf>> {
    let Ok(entries) = fs::read_dir(state.path()) else {
        return Ok(Vec::new());
    };
    let mut removed = Vec::new();
    for entry in entries.filter_map(|e| e.ok()) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let own = OWN_FILES.contains(&name.as_str())
            || OWN_FILES
                .iter()
                .any(|f| name.starts_with(&format!(".{f}.tmp-")));
        if own {
            let path = entry.path();
            fs::remove_file(&path)
                .map_err(|e| Error::io(format!("remove {}", path.display()), e))?;
            removed.push(path);
        }
    }
    // Only succeeds when nothing else was in it.
    let _ = fs::remove_dir(state.path());
    Ok(removed)
}

fn systemctl(args: &[&str]) -> Result<()> {
    let status = Command::new("systemctl").args(args).status().map_err(|e| {
        Error::Install(format!(
            "could not run systemctl: {e} (use --no-start without systemd)"
        ))
    })?;
    if status.success() {
        Ok(())
    } else {
        Err(Error::Install(format!(
            "`systemctl {}` failed ({status})",
            args.join(" ")
        )))
    }
}

#[cfg(test)]
mod tests;
