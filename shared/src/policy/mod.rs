//! The command classifier: decides whether a shell command is provably read-only.

mod types;

pub use types::{Boundedness, Classification, Intent, Risk, UnboundedCategory};

/// Classify one shell command string. Pure and deterministic.
pub fn classify(command: &str) -> Classification {
    let _ = command;
    Classification {
        intent: Intent::WriteOrUnknown,
        risk: Risk::Medium,
        reasons: vec!["not implemented".into()],
        boundedness: Boundedness::Bounded,
    }
}
