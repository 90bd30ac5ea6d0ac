//! The knowledge accumulator and its gate (docs/design.md §9, items 3, 6 and 7). Pure:
//! facts come from tool results ([`Knowledge::extract`], deterministic, no model call),
//! live in a bounded session store and answer repeated reads without running them.
//!
//! * **Facts** are keyed by what produced them (`<resource>|exec|<command>`,
//!   `<resource>|metrics`, `<host>|docker|<container>`, …); a value holds at most
//!   `max_value` characters; a not-found is kept as a negative fact.
//! * **Bounds** (default 60 facts, 2,000 characters of keys and values, 200 a value) are
//!   enforced on [`Knowledge::record`]: the least recently used (recorded or answered) fact
//!   goes first, but facts of the current and previous turn are protected. When only
//!   protected facts are left, the fact count may exceed its bound, the character bound
//!   never does: past it the least recently used protected fact goes too.
//! * **The gate** ([`Knowledge::answer`]) answers only agent reads (`read`, `metrics`,
//!   `docker` and `kubernetes` reads) whose predicted key holds a fresh fact. It never
//!   answers writes, `query` (it registers resources and marks explicit access),
//!   `file_edit read` (an edit needs the real content), or any read while the session is
//!   verifying a write: that read always runs.
//! * **Staleness**: [`Knowledge::invalidate`] marks the facts of a written resource stale
//!   (by the fact's resource, a key part, or the id's last part such as a container name):
//!   the gate no longer answers from them and the prompt block marks them.

mod extract;

#[cfg(test)]
mod tests;

use serde_json::Value;

/// Default bounds (docs/design.md §9, item 7).
pub const MAX_FACTS: usize = 60;
/// Default bound on the characters of all keys and values.
pub const MAX_CHARS: usize = 2000;
/// Default bound on one value's characters.
pub const MAX_VALUE: usize = 200;

/// One fact learned from a tool result.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Fact {
    /// What produced it, e.g. `lxc:delly:141|exec|uptime` or `host:x|metrics`.
    pub key: String,
    /// The resource it is about, when known.
    pub resource: Option<String>,
    /// Compact value, at most `max_value` characters.
    pub value: String,
    /// The turn that observed it.
    pub turn: u32,
    /// A not-found marker.
    pub negative: bool,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Entry {
    fact: Fact,
    last_used: u64,
    stale: bool,
}

/// A session's facts.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Knowledge {
    entries: Vec<Entry>,
    max_facts: usize,
    max_chars: usize,
    max_value: usize,
    clock: u64,
    turn: u32,
}

impl Default for Knowledge {
    fn default() -> Self {
        Knowledge::new(MAX_FACTS, MAX_CHARS, MAX_VALUE)
    }
}

fn size(fact: &Fact) -> usize {
    fact.key.chars().count() + fact.value.chars().count()
}

/// At most `max` characters of `text`, with `…` when cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

impl Knowledge {
    /// An empty store with these bounds.
    pub fn new(max_facts: usize, max_chars: usize, max_value: usize) -> Knowledge {
        Knowledge {
            entries: Vec::new(),
            max_facts,
            max_chars,
            max_value,
            clock: 0,
            turn: 0,
        }
    }

    /// Facts from one tool result (tool name, action, the call's arguments JSON, the
    /// envelope JSON the model saw); deterministic.
    pub fn extract(tool: &str, action: &str, args: &Value, envelope: &Value) -> Vec<Fact> {
        extract::facts(tool, action, args, envelope)
    }

    /// Records `facts` as observed in `turn` (replacing facts of the same key), then evicts.
    pub fn record(&mut self, facts: Vec<Fact>, turn: u32) {
        self.turn = self.turn.max(turn);
        for mut fact in facts {
            fact.value = clip(&fact.value, self.max_value);
            fact.turn = turn;
            self.clock += 1;
            let entry = Entry {
                fact,
                last_used: self.clock,
                stale: false,
            };
            match self
                .entries
                .iter_mut()
                .find(|e| e.fact.key == entry.fact.key)
            {
                Some(existing) => *existing = entry,
                None => self.entries.push(entry),
            }
        }
        self.evict();
    }

    fn evict(&mut self) {
        let current = self.turn;
        loop {
            let over_count = self.entries.len() > self.max_facts;
            let over_chars = self.total_chars() > self.max_chars;
            if !over_count && !over_chars {
                return;
            }
            let unprotected = |e: &&Entry| e.fact.turn.saturating_add(1) < current;
            let victim = self
                .entries
                .iter()
                .filter(unprotected)
                .min_by_key(|e| e.last_used)
                .or_else(|| {
                    over_chars
                        .then(|| self.entries.iter().min_by_key(|e| e.last_used))
                        .flatten()
                })
                .map(|e| e.fact.key.clone());
            match victim {
                Some(key) => self.entries.retain(|e| e.fact.key != key),
                None => return,
            }
        }
    }

    /// The knowledge gate: when this call's facts are already known (and not stale), the
    /// answer text to give instead of running it. Never answers writes, never answers a
    /// read while `verifying` is true (the read that verifies a write always runs).
    pub fn answer(
        &mut self,
        tool: &str,
        action: &str,
        args: &Value,
        turn: u32,
        verifying: bool,
    ) -> Option<String> {
        self.turn = self.turn.max(turn);
        if verifying || !extract::gated(tool, action) {
            return None;
        }
        let key = extract::key(tool, action, args)?;
        self.clock += 1;
        let clock = self.clock;
        let entry = self
            .entries
            .iter_mut()
            .find(|e| e.fact.key == key && !e.stale)?;
        entry.last_used = clock;
        let fact = &entry.fact;
        let what = if fact.negative { "not found: " } else { "" };
        Some(format!(
            "Not run again: this was already observed in turn {} ({}): {what}{}. Ask for a \
             different command or path if you need more.",
            fact.turn, fact.key, fact.value
        ))
    }

    /// A write to `resource` makes its facts stale.
    pub fn invalidate(&mut self, resource: &str) {
        let short = resource.rsplit(':').next().filter(|s| s.len() >= 2);
        for entry in &mut self.entries {
            let fact = &entry.fact;
            let parts = || fact.key.split('|');
            if fact.resource.as_deref() == Some(resource)
                || parts().any(|p| p == resource || Some(p) == short)
            {
                entry.stale = true;
            }
        }
    }

    /// Compact text of the facts of one tool result (for compaction), at most `max` chars.
    pub fn summarize(facts: &[Fact], max: usize) -> String {
        let text = facts
            .iter()
            .map(|f| {
                let mark = if f.negative { " (not found)" } else { "" };
                format!("{}: {}{mark}", f.key, f.value)
            })
            .collect::<Vec<_>>()
            .join("; ");
        clip(&text, max)
    }

    /// Number of facts.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Characters of all keys and values.
    pub fn total_chars(&self) -> usize {
        self.entries.iter().map(|e| size(&e.fact)).sum()
    }

    /// No facts.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A short block of known facts for the prompt.
    pub fn block(&self) -> String {
        if self.entries.is_empty() {
            return String::new();
        }
        let mut out = String::from("Known facts (from this session's tool results):\n");
        for entry in &self.entries {
            let fact = &entry.fact;
            let mut notes = vec![format!("turn {}", fact.turn)];
            if fact.negative {
                notes.push("not found".into());
            }
            if entry.stale {
                notes.push("stale: changed since".into());
            }
            out.push_str(&format!(
                "- {}: {} [{}]\n",
                fact.key,
                fact.value,
                notes.join(", ")
            ));
        }
        out
    }
}
