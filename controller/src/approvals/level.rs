//! Control levels: what happens to a write that passed the gates. `read_only` refuses it,
//! `controlled` (the default) raises an approval and waits, `autonomous` runs it with a
//! signed grant and no wait. The controller's level is a ceiling a session can only narrow,
//! and a viewer may only chat in `read_only`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::ApiCode;
use crate::roles::Role;
use crate::{Error, Result};

/// A control level, least powerful first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlLevel {
    /// Writes are refused.
    ReadOnly,
    /// Writes wait for a person's approval.
    #[default]
    Controlled,
    /// Writes run without a person (still signed, audited and policy-checked).
    Autonomous,
}

impl ControlLevel {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ControlLevel::ReadOnly => "read_only",
            ControlLevel::Controlled => "controlled",
            ControlLevel::Autonomous => "autonomous",
        }
    }

    /// The level a session gets: what it asks for (the ceiling when it asks for nothing),
    /// refused when it asks for more than the ceiling or than its role allows.
    pub fn for_session(
        requested: Option<ControlLevel>,
        ceiling: ControlLevel,
        role: Role,
    ) -> Result<ControlLevel> {
        let role_max = if role >= Role::Operator {
            ControlLevel::Autonomous
        } else {
            ControlLevel::ReadOnly
        };
        let allowed = ceiling.min(role_max);
        let level = requested.unwrap_or(allowed);
        if level > allowed {
            let why = if level > ceiling {
                format!("the controller allows at most {ceiling}")
            } else {
                format!("the {role} role may only chat in read_only")
            };
            return Err(Error::coded_with(
                ApiCode::Forbidden,
                format!("control level {level} is not allowed: {why}"),
                serde_json::json!({ "allowed": allowed.as_str() }),
            ));
        }
        Ok(level)
    }
}

impl fmt::Display for ControlLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ControlLevel {
    type Err = Error;

    fn from_str(s: &str) -> Result<ControlLevel> {
        match s.trim() {
            "read_only" => Ok(ControlLevel::ReadOnly),
            "controlled" => Ok(ControlLevel::Controlled),
            "autonomous" => Ok(ControlLevel::Autonomous),
            other => Err(Error::InvalidInput(format!(
                "unknown control level {other:?} (read_only, controlled or autonomous)"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ControlLevel::*;

    #[test]
    fn sessions_narrow_the_ceiling_and_viewers_only_read() {
        assert_eq!(
            ControlLevel::for_session(None, Controlled, Role::Operator).unwrap(),
            Controlled
        );
        assert_eq!(
            ControlLevel::for_session(Some(ReadOnly), Autonomous, Role::Admin).unwrap(),
            ReadOnly
        );
        assert!(ControlLevel::for_session(Some(Autonomous), Controlled, Role::Admin).is_err());
        assert_eq!(
            ControlLevel::for_session(None, Controlled, Role::Viewer).unwrap(),
            ReadOnly
        );
        assert!(ControlLevel::for_session(Some(Controlled), Controlled, Role::Viewer).is_err());
        assert_eq!("autonomous".parse::<ControlLevel>().unwrap(), Autonomous);
        assert!("yolo".parse::<ControlLevel>().is_err());
    }
}
