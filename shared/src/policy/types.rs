//! The serializable decision that [`super::classify`] returns.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Whether a command is provably read-only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Intent {
    /// Read-only by construction (`cat`, `systemctl status`, `docker logs`).
    ReadOnlyCertain,
    /// Proved read-only by inspecting content (a SQL CLI running only `SELECT`).
    ReadOnlyConditional,
    /// Could change state, or could not be proved read-only.
    WriteOrUnknown,
}

impl Intent {
    /// The wire name (`read_only_certain`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Intent::ReadOnlyCertain => "read_only_certain",
            Intent::ReadOnlyConditional => "read_only_conditional",
            Intent::WriteOrUnknown => "write_or_unknown",
        }
    }

    /// True for both read-only intents.
    pub fn is_read_only(self) -> bool {
        !matches!(self, Intent::WriteOrUnknown)
    }
}

impl fmt::Display for Intent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How much damage a command could do if it were run without review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// Proved read-only.
    ReadOnly,
    /// A contained change (create a file, send a signal to one process).
    Low,
    /// A change to a service, package, container or an unknown command.
    Medium,
    /// Destructive or hard to undo (delete, reboot, wipe, privilege escalation).
    High,
}

impl Risk {
    /// The wire name (`read_only`, `low`, `medium`, `high`).
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::ReadOnly => "read_only",
            Risk::Low => "low",
            Risk::Medium => "medium",
            Risk::High => "high",
        }
    }
}

impl fmt::Display for Risk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a command would not terminate by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnboundedCategory {
    /// Needs a terminal (`docker exec -it`, `htop`).
    Tty,
    /// A pager or an editor (`less`, `vim`).
    Pager,
    /// Follows or repeats forever (`tail -f`, `watch`, `ping` without `-c`, listeners).
    Stream,
    /// An interactive shell or REPL with no command (`mysql`, `python3`, `ssh host`).
    Repl,
}

impl UnboundedCategory {
    /// The wire name (`tty`, `pager`, `stream`, `repl`).
    pub fn as_str(self) -> &'static str {
        match self {
            UnboundedCategory::Tty => "tty",
            UnboundedCategory::Pager => "pager",
            UnboundedCategory::Stream => "stream",
            UnboundedCategory::Repl => "repl",
        }
    }
}

/// Whether a command ends by itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Boundedness {
    /// The command terminates on its own (or under an explicit `timeout`).
    Bounded,
    /// The command may run forever or wait for a person.
    Unbounded {
        /// What kind of unbounded form it is.
        category: UnboundedCategory,
        /// A bounded command with the same purpose, where one exists.
        rewrite: Option<String>,
    },
}

impl Boundedness {
    /// True when the command ends by itself.
    pub fn is_bounded(&self) -> bool {
        matches!(self, Boundedness::Bounded)
    }
}

/// The classifier's decision about one command string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Classification {
    /// Read-only or not.
    pub intent: Intent,
    /// Risk if it were run unreviewed.
    pub risk: Risk,
    /// Reasons a person can read, most important first.
    pub reasons: Vec<String>,
    /// Whether it ends by itself.
    pub boundedness: Boundedness,
}

impl Classification {
    /// True when the command may run as a READ: read-only *and* bounded.
    pub fn allowed_as_read(&self) -> bool {
        self.intent.is_read_only() && self.boundedness.is_bounded()
    }

    /// The unbounded category, if any.
    pub fn category(&self) -> Option<UnboundedCategory> {
        match &self.boundedness {
            Boundedness::Bounded => None,
            Boundedness::Unbounded { category, .. } => Some(*category),
        }
    }

    /// The suggested bounded rewrite, if any.
    pub fn rewrite(&self) -> Option<&str> {
        match &self.boundedness {
            Boundedness::Bounded => None,
            Boundedness::Unbounded { rewrite, .. } => rewrite.as_deref(),
        }
    }
}
