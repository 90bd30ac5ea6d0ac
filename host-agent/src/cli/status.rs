//! `vigil-agent status`.

use super::{StateArgs, output_error};
use crate::error::Result;
use crate::link::renew::Validity;
use crate::state::{CERT_FILE, StateDir, format_time, now_unix};
use clap::Args;
use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;

pub const LONG_ABOUT: &str = "\
Show whether this host is enrolled, its agent id and controller, when its certificate \
expires, and whether `vigil-agent run` is connected (from status.json, which run writes on \
every connect and disconnect, checked against its process id). Exits 0 whether or not the \
host is enrolled; use --json and the `enrolled` field in scripts.";

#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    state: StateArgs,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Everything `status` reports.
#[derive(Debug, Serialize)]
pub struct Report {
    pub enrolled: bool,
    pub state_dir: PathBuf,
    pub agent_id: Option<String>,
    pub controller_url: Option<String>,
    pub enrolled_at: Option<String>,
    pub labels: BTreeMap<String, String>,
    pub certificate_expires_at: Option<String>,
    pub certificate_days_left: Option<i64>,
    /// From the running agent; `None` when it never ran.
    pub read_only: Option<bool>,
    /// True only when status.json says so and its process is alive.
    pub connected: bool,
    pub since: Option<String>,
    pub last_error: Option<String>,
    pub pid: Option<u32>,
    pub running: bool,
}

/// Collect the report for a state directory.
pub fn collect(state: &StateDir) -> Result<Report> {
    let identity = state.identity()?;
    let validity = identity
        .as_ref()
        .and_then(|_| std::fs::read_to_string(state.file(CERT_FILE)).ok())
        .and_then(|pem| Validity::of_pem(&pem).ok());
    let link = state.read_status()?;
    let running = link.as_ref().is_some_and(|l| process_alive(l.pid));
    Ok(Report {
        enrolled: identity.is_some(),
        state_dir: state.path().to_owned(),
        agent_id: identity.as_ref().map(|i| i.agent_id.clone()),
        controller_url: identity.as_ref().map(|i| i.url.clone()),
        enrolled_at: identity.as_ref().map(|i| i.enrolled_at.clone()),
        labels: identity.map(|i| i.labels).unwrap_or_default(),
        certificate_expires_at: validity.map(|v| format_time(v.not_after)),
        certificate_days_left: validity.map(|v| (v.not_after - now_unix()).div_euclid(86_400)),
        read_only: link.as_ref().map(|l| l.read_only),
        connected: running && link.as_ref().is_some_and(|l| l.connected),
        since: link.as_ref().map(|l| l.since.clone()),
        last_error: link.as_ref().and_then(|l| l.last_error.clone()),
        pid: link.as_ref().map(|l| l.pid),
        running,
    })
}

/// A process with this id exists and looks like the agent.
fn process_alive(pid: u32) -> bool {
    let Ok(raw) = i32::try_from(pid) else {
        return false;
    };
    let exists = matches!(kill(Pid::from_raw(raw), None), Ok(()) | Err(Errno::EPERM));
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    exists && (comm.is_empty() || comm.contains("vigil"))
}

/// The text form of a report.
pub fn render(r: &Report) -> String {
    let mut lines = vec![format!("state dir:    {}", r.state_dir.display())];
    if !r.enrolled {
        lines.push("enrolled:     no (run `vigil-agent join`)".into());
        return lines.join("\n") + "\n";
    }
    let or_unknown = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    lines.push("enrolled:     yes".into());
    lines.push(format!("agent id:     {}", or_unknown(&r.agent_id)));
    lines.push(format!("controller:   {}", or_unknown(&r.controller_url)));
    lines.push(format!("enrolled at:  {}", or_unknown(&r.enrolled_at)));
    if !r.labels.is_empty() {
        let labels: Vec<String> = r.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        lines.push(format!("labels:       {}", labels.join(", ")));
    }
    lines.push(match (&r.certificate_expires_at, r.certificate_days_left) {
        (Some(at), Some(days)) if days < 0 => {
            format!("certificate:  EXPIRED at {at}; run `vigil-agent join` again")
        }
        (Some(at), Some(days)) => format!("certificate:  expires {at} ({days} days left)"),
        _ => "certificate:  unreadable".into(),
    });
    lines.push(match r.read_only {
        Some(true) => "read-only:    yes".into(),
        Some(false) => "read-only:    no".into(),
        None => "read-only:    unknown (the agent has not run)".into(),
    });
    let since = or_unknown(&r.since);
    let pid = r.pid.map(|p| p.to_string()).unwrap_or_default();
    lines.push(match (r.connected, r.running, r.pid) {
        (true, _, _) => format!("connected:    yes, since {since} (pid {pid})"),
        (false, true, _) => format!("connected:    no, since {since} (pid {pid} is retrying)"),
        (false, false, Some(_)) => {
            format!("connected:    no (the agent is not running; pid {pid} is gone)")
        }
        (false, false, None) => "connected:    no (the agent has not run)".into(),
    });
    if let Some(error) = &r.last_error {
        lines.push(format!("last error:   {error}"));
    }
    lines.join("\n") + "\n"
}

pub fn status(args: StatusArgs) -> Result<()> {
    let report = collect(&StateDir::new(args.state.state_dir))?;
    let text = if args.json {
        serde_json::to_string_pretty(&report)
            .map_err(|e| crate::error::Error::Protocol(e.to_string()))?
            + "\n"
    } else {
        render(&report)
    };
    io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(output_error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::LinkStatus;

    #[test]
    fn an_empty_directory_is_not_enrolled() {
        let tmp = tempfile::tempdir().unwrap();
        let report = collect(&StateDir::new(tmp.path())).unwrap();
        assert!(!report.enrolled && !report.connected && report.agent_id.is_none());
        assert!(render(&report).contains("enrolled:     no"));
    }

    #[test]
    fn a_dead_pid_is_not_connected() {
        let tmp = tempfile::tempdir().unwrap();
        let state = StateDir::new(tmp.path());
        let mut status = LinkStatus {
            connected: true,
            since: format_time(0),
            last_error: None,
            pid: std::process::id(),
            read_only: true,
        };
        state.write_status(&status).unwrap();
        let report = collect(&state).unwrap();
        assert!(report.running && report.connected && report.read_only == Some(true));
        status.pid = i32::MAX as u32;
        state.write_status(&status).unwrap();
        let report = collect(&state).unwrap();
        assert!(!report.running && !report.connected);
    }
}
