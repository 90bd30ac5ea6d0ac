//! What a fan-out answers: one [`TargetResult`] per target and a [`Summary`] that counts
//! them ([`Tally`]).

use serde::{Deserialize, Serialize};

use crate::Error;

/// How one target ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetStatus {
    /// The command exited with 0.
    Ok,
    /// It exited non-zero, was killed, timed out, its agent went away while it ran, or the
    /// target is unknown.
    Failed,
    /// The agent's guard refused it.
    Refused,
    /// No connected agent could take it; nothing was sent.
    Offline,
}

impl TargetStatus {
    /// `ok`, `failed`, `refused` or `offline`.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetStatus::Ok => "ok",
            TargetStatus::Failed => "failed",
            TargetStatus::Refused => "refused",
            TargetStatus::Offline => "offline",
        }
    }

    /// The status of a target that ended with `error`; `dispatched` when the command had
    /// reached the agent's stream.
    pub fn of_error(error: &Error, dispatched: bool) -> TargetStatus {
        match error {
            Error::AgentRejected { .. } => TargetStatus::Refused,
            Error::AgentOffline(_) | Error::ResourceOffline { .. } | Error::AgentGone(_)
                if !dispatched =>
            {
                TargetStatus::Offline
            }
            _ => TargetStatus::Failed,
        }
    }
}

/// A target's error: the API's code and message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetError {
    /// `AGENT_OFFLINE`, `TIMEOUT`, `NOT_FOUND`, the agent's code (`POLICY_BLOCKED`, …).
    pub code: String,
    /// A sentence a person can read.
    pub message: String,
}

impl From<&Error> for TargetError {
    fn from(error: &Error) -> Self {
        let body = error.api_body().error;
        TargetError {
            code: body.code,
            message: body.message,
        }
    }
}

/// One target's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetResult {
    /// The target as named: an agent id (its host) or a resource id.
    pub target: String,
    /// The agent that ran it (null when none could).
    pub agent: Option<String>,
    /// That agent's host name (empty when none could).
    pub host: String,
    /// `ok`, `failed`, `refused` or `offline`.
    pub status: TargetStatus,
    /// The exit code of a command that exited.
    pub exit_code: Option<i32>,
    /// The signal that ended the command.
    pub signal: Option<i32>,
    /// Standard output (UTF-8, lossy), at most 64 KiB.
    pub stdout: String,
    /// Standard error (UTF-8, lossy), at most 64 KiB.
    pub stderr: String,
    /// True when output was cut at the cap.
    pub truncated: bool,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// Why the target did not run to an exit; null when it did.
    pub error: Option<TargetError>,
    /// Its place in the selection (not serialized).
    #[serde(skip)]
    pub index: usize,
}

impl TargetResult {
    /// A result without a run: `status` with `error`.
    pub fn error(
        index: usize,
        target: String,
        agent: Option<String>,
        host: String,
        error: &Error,
        dispatched: bool,
        duration_ms: u64,
    ) -> TargetResult {
        TargetResult {
            target,
            agent,
            host,
            status: TargetStatus::of_error(error, dispatched),
            exit_code: None,
            signal: None,
            stdout: String::new(),
            stderr: String::new(),
            truncated: false,
            duration_ms,
            error: Some(error.into()),
            index,
        }
    }
}

/// The counts of a fan-out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Targets selected.
    pub targets: usize,
    /// Exited with 0.
    pub ok: usize,
    /// Failed (see [`TargetStatus::Failed`]).
    pub failed: usize,
    /// Refused by the agent.
    pub refused: usize,
    /// Not reached: no connected agent.
    pub offline: usize,
    /// Wall time of the whole fan-out in milliseconds.
    pub duration_ms: u64,
}

impl Summary {
    /// True when every target exited with 0.
    pub fn all_ok(&self) -> bool {
        self.ok == self.targets
    }

    /// Targets with a result so far.
    pub fn done(&self) -> usize {
        self.ok + self.failed + self.refused + self.offline
    }
}

/// Counts results as they arrive.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    summary: Summary,
    bytes: u64,
}

impl Tally {
    /// A tally of `targets` targets.
    pub fn new(targets: usize) -> Tally {
        Tally {
            summary: Summary {
                targets,
                ..Summary::default()
            },
            bytes: 0,
        }
    }

    /// Counts `result`.
    pub fn add(&mut self, result: &TargetResult) {
        let count = match result.status {
            TargetStatus::Ok => &mut self.summary.ok,
            TargetStatus::Failed => &mut self.summary.failed,
            TargetStatus::Refused => &mut self.summary.refused,
            TargetStatus::Offline => &mut self.summary.offline,
        };
        *count += 1;
        let bytes = result.stdout.len() + result.stderr.len();
        self.bytes = self
            .bytes
            .saturating_add(u64::try_from(bytes).unwrap_or(u64::MAX));
    }

    /// The counts so far, with the fan-out's wall time.
    pub fn summary(&self, duration_ms: u64) -> Summary {
        Summary {
            duration_ms,
            ..self.summary
        }
    }

    /// Output bytes kept so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_shared::ids::AgentId;

    fn result(status: TargetStatus, stdout: &str) -> TargetResult {
        TargetResult {
            target: "t".into(),
            agent: None,
            host: String::new(),
            status,
            exit_code: None,
            signal: None,
            stdout: stdout.into(),
            stderr: String::new(),
            truncated: false,
            duration_ms: 1,
            error: None,
            index: 0,
        }
    }

    #[test]
    fn the_tally_counts_each_status_and_the_bytes_kept() {
        let mut tally = Tally::new(5);
        for (status, out) in [
            (TargetStatus::Ok, "up 3 days\n"),
            (TargetStatus::Ok, "up 1 day\n"),
            (TargetStatus::Failed, ""),
            (TargetStatus::Refused, ""),
        ] {
            tally.add(&result(status, out));
        }
        let partial = tally.summary(40);
        assert_eq!(
            (partial.targets, partial.ok, partial.failed, partial.refused),
            (5, 2, 1, 1)
        );
        assert_eq!((partial.done(), partial.all_ok()), (4, false));
        tally.add(&result(TargetStatus::Offline, ""));
        let done = tally.summary(50);
        assert_eq!((done.offline, done.done(), done.duration_ms), (1, 5, 50));
        assert_eq!(tally.bytes(), 19);
        let mut clean = Tally::new(1);
        clean.add(&result(TargetStatus::Ok, ""));
        assert!(clean.summary(1).all_ok());
    }

    #[test]
    fn errors_map_to_statuses() {
        let agent = AgentId::new_random();
        let rejected = Error::AgentRejected {
            code: "POLICY_BLOCKED".into(),
            reason: "no".into(),
        };
        assert_eq!(
            TargetStatus::of_error(&rejected, true),
            TargetStatus::Refused
        );
        let offline = Error::AgentOffline(agent);
        assert_eq!(
            TargetStatus::of_error(&offline, false),
            TargetStatus::Offline
        );
        let gone = Error::AgentGone(agent);
        assert_eq!(
            TargetStatus::of_error(&gone, true),
            TargetStatus::Failed,
            "an agent that leaves mid-command may have run it"
        );
        let timeout = Error::ExecTimeout(1);
        assert_eq!(TargetStatus::of_error(&timeout, true), TargetStatus::Failed);
        let error = TargetError::from(&timeout);
        assert_eq!(error.code, "TIMEOUT");
        let json = serde_json::to_value(result(TargetStatus::Offline, "")).unwrap();
        assert_eq!(json["status"], "offline");
        assert!(json.get("index").is_none());
    }
}
