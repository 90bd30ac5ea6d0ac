//! The throw-away root: one `unshare` (mount, pid, network, UTS and IPC namespaces) per
//! command, running `jail.sh`, which mounts an overlay over the host's root with its upper
//! layer on a tmpfs of the namespace, chroots into it and reports what the command left
//! in the upper layer and in the scratch mounts (`/dev`, `/run`, `/tmp`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Exit status 0.
    Ok,
    /// A non-zero exit status from a tool that is installed.
    Failed,
    /// The shell said `command not found` (for any part of the command).
    NotFound,
    /// Killed at the per-command timeout.
    TimedOut,
}

/// What one command did in the jail.
#[derive(Debug)]
pub struct Outcome {
    pub ended: Ended,
    pub stderr: String,
    /// Entries of the overlay's upper layer (`<type> <path>`): copy-ups, i.e. writes.
    pub upper: Vec<String>,
    /// Entries of the scratch mounts `/dev`, `/run` and `/tmp`.
    pub scratch: Vec<String>,
    /// The UTS namespace's host name after the command.
    pub hostname: String,
    /// Every `connect(2)` call, as strace printed it.
    pub connects: Vec<String>,
}

/// Runs commands one at a time, each in a fresh namespace and overlay.
pub struct Jail {
    script: PathBuf,
    base: PathBuf,
    seconds: u64,
    next: usize,
}

/// The programs the jail needs on the host.
const NEEDED: [&str; 7] = [
    "unshare", "mount", "chroot", "setpriv", "timeout", "find", "strace",
];

/// Why the jail cannot run here, if it cannot.
pub fn unavailable() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let root = status
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .is_some_and(|l| l.split_whitespace().nth(2) == Some("0"));
    if !root {
        return Some("needs root (overlay mounts and chroot)".into());
    }
    let filesystems = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
    if !filesystems.lines().any(|l| l.ends_with("\toverlay")) {
        return Some("needs the overlay file system (modprobe overlay)".into());
    }
    let missing: Vec<&str> = NEEDED.into_iter().filter(|p| !on_path(p)).collect();
    if !missing.is_empty() {
        return Some(format!(
            "needs {} (util-linux, coreutils)",
            missing.join(", ")
        ));
    }
    None
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()))
}

impl Jail {
    /// A jail keeping its per-command directories under `base`, killing commands after
    /// `seconds`.
    pub fn new(base: &Path, seconds: u64) -> Self {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/jail.sh");
        Jail {
            script,
            base: base.to_owned(),
            seconds,
            next: 0,
        }
    }

    /// Run `command` (with `bash -c`) in a fresh throw-away root.
    pub fn run(&mut self, command: &str) -> Result<Outcome, String> {
        self.next += 1;
        let run = self.base.join(format!("run-{}", self.next));
        std::fs::create_dir_all(run.join("layer")).map_err(|e| format!("{run:?}: {e}"))?;
        let log = std::fs::File::create(run.join("setup.log")).map_err(|e| e.to_string())?;
        let mut child = Command::new("unshare")
            .args(["--mount", "--propagation", "private", "--pid", "--fork"])
            .args(["--kill-child", "--net", "--uts", "--ipc", "--", "sh"])
            .arg(&self.script)
            .arg(&run)
            .arg(self.seconds.to_string())
            .arg(command)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("spawn unshare: {e}"))?;
        // A backstop only: jail.sh's own `timeout` ends the command first.
        let deadline = Instant::now() + Duration::from_secs(self.seconds + 20);
        let status = loop {
            if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
                break status;
            }
            if Instant::now() > deadline {
                // Kills unshare; --kill-child then kills the namespace's init and with it
                // every process of the namespace.
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("the jail itself hung: {command:?}"));
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let read = |name: &str| std::fs::read_to_string(run.join(name)).unwrap_or_default();
        let code = read("status");
        if !status.success() || code.is_empty() {
            return Err(format!(
                "jail setup failed ({status}) for {command:?}: {}",
                read("setup.log").trim()
            ));
        }
        let stderr = read("stderr");
        let code: i32 = code.trim().parse().unwrap_or(-1);
        let ended = if code == 137 {
            Ended::TimedOut
        } else if code == 127 || stderr.contains("command not found") {
            Ended::NotFound
        } else if code == 0 {
            Ended::Ok
        } else {
            Ended::Failed
        };
        let lines = |text: String| text.lines().map(str::to_owned).collect::<Vec<_>>();
        let outcome = Outcome {
            ended,
            upper: lines(read("upper")),
            scratch: lines(read("scratch")),
            hostname: read("hostname").trim().to_owned(),
            connects: lines(read("net"))
                .into_iter()
                .filter(|l| l.contains("connect("))
                .collect(),
            stderr,
        };
        std::fs::remove_dir_all(&run).map_err(|e| format!("remove {run:?}: {e}"))?;
        Ok(outcome)
    }
}
