//! The running verdict for a command or a part of one, and how parts combine.

use super::types::{Boundedness, Classification, Intent, Risk, UnboundedCategory};

/// Why a command is unbounded, with a bounded rewrite of *this* part where one exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unbounded {
    pub category: UnboundedCategory,
    pub rewrite: Option<String>,
}

/// The verdict for one part of a command; parts merge into the whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub intent: Intent,
    pub risk: Risk,
    pub reasons: Vec<String>,
    pub unbounded: Option<Unbounded>,
}

impl Verdict {
    /// Read-only by construction.
    pub fn read(reason: impl Into<String>) -> Self {
        Verdict {
            intent: Intent::ReadOnlyCertain,
            risk: Risk::ReadOnly,
            reasons: vec![reason.into()],
            unbounded: None,
        }
    }

    /// Read-only, proved by inspecting content.
    pub fn conditional(reason: impl Into<String>) -> Self {
        Verdict {
            intent: Intent::ReadOnlyConditional,
            ..Verdict::read(reason)
        }
    }

    /// May change state.
    pub fn write(risk: Risk, reason: impl Into<String>) -> Self {
        let risk = risk.max(Risk::Low);
        Verdict {
            intent: Intent::WriteOrUnknown,
            risk,
            ..Verdict::read(reason)
        }
    }

    /// Not proved read-only: an unknown program or form.
    pub fn unknown(reason: impl Into<String>) -> Self {
        Verdict::write(Risk::Medium, reason)
    }

    /// Mark this part as not ending by itself.
    pub fn unbounded(mut self, category: UnboundedCategory, rewrite: Option<String>) -> Self {
        self.unbounded = Some(Unbounded { category, rewrite });
        self
    }

    /// Add a reason without changing the verdict.
    pub fn because(mut self, reason: impl Into<String>) -> Self {
        self.reasons.push(reason.into());
        self
    }

    /// True when this part may not run as a read.
    pub fn is_write(&self) -> bool {
        self.intent == Intent::WriteOrUnknown
    }

    /// Combine with another part of the same command: the stricter of each wins.
    pub fn merge(&mut self, other: Verdict) {
        // Writes lead the reason list so a person sees why first.
        if other.is_write() && !self.is_write() {
            let mut reasons = other.reasons;
            reasons.append(&mut self.reasons);
            self.reasons = reasons;
        } else {
            self.reasons.extend(other.reasons);
        }
        self.intent = self.intent.max(other.intent);
        self.risk = self.risk.max(other.risk);
        if self.unbounded.is_none() {
            self.unbounded = other.unbounded;
        }
    }

    /// Fold several parts into one verdict; an empty list is a trivially read-only no-op.
    pub fn all(parts: impl IntoIterator<Item = Verdict>) -> Verdict {
        let mut parts = parts.into_iter();
        let Some(mut acc) = parts.next() else {
            return Verdict::read("empty command");
        };
        for part in parts {
            acc.merge(part);
        }
        acc
    }

    /// The public decision.
    pub fn into_classification(self) -> Classification {
        let mut reasons = Vec::with_capacity(self.reasons.len());
        for r in self.reasons {
            if !reasons.contains(&r) {
                reasons.push(r);
            }
        }
        let risk = if self.intent == Intent::WriteOrUnknown {
            self.risk.max(Risk::Low)
        } else {
            Risk::ReadOnly
        };
        let boundedness = match self.unbounded {
            None => Boundedness::Bounded,
            Some(u) => Boundedness::Unbounded {
                category: u.category,
                rewrite: u.rewrite,
            },
        };
        Classification {
            intent: self.intent,
            risk,
            reasons,
            boundedness,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_takes_the_stricter_side() {
        let mut v = Verdict::read("cat reads files");
        v.merge(Verdict::write(Risk::High, "rm removes files"));
        v.merge(Verdict::conditional("SELECT only"));
        assert_eq!(v.intent, Intent::WriteOrUnknown);
        assert_eq!(v.risk, Risk::High);
        assert_eq!(v.reasons[0], "rm removes files");
    }

    #[test]
    fn empty_is_read() {
        assert!(!Verdict::all([]).is_write());
    }
}
