//! The resolved context of a session, in memory only: the resources this session found,
//! with a sliding TTL (45 min), an LRU cap (500) that never evicts pinned entries, and two
//! marks kept apart from LRU access: `explicit` (a `query get` or a user's mention: what
//! routing decisions look at) and `mentioned` (the user named it).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use vigil_shared::resource::{Resource, ResourceId};

/// Default time an unused entry lives.
pub const DEFAULT_TTL: Duration = Duration::from_secs(45 * 60);
/// Default most entries.
pub const DEFAULT_CAP: usize = 500;

#[derive(Debug, Clone)]
struct Entry {
    resource: Resource,
    last_access: Instant,
    pinned: bool,
    explicit: bool,
    mentioned: bool,
}

/// The resources a session resolved.
#[derive(Debug, Clone)]
pub struct ResolvedContext {
    entries: HashMap<ResourceId, Entry>,
    ttl: Duration,
    cap: usize,
}

impl Default for ResolvedContext {
    fn default() -> Self {
        ResolvedContext::new(DEFAULT_TTL, DEFAULT_CAP)
    }
}

/// One resolved resource as stored between turns (its last use as an age, since an
/// `Instant` means nothing to another process).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct StoredEntry {
    resource: Resource,
    idle_ms: u64,
    pinned: bool,
    explicit: bool,
    mentioned: bool,
}

impl ResolvedContext {
    /// The entries as stored between turns, at `now`.
    pub fn to_stored(&self, now: Instant) -> Vec<StoredEntry> {
        self.entries
            .values()
            .map(|e| StoredEntry {
                resource: e.resource.clone(),
                idle_ms: u64::try_from(now.saturating_duration_since(e.last_access).as_millis())
                    .unwrap_or(u64::MAX),
                pinned: e.pinned,
                explicit: e.explicit,
                mentioned: e.mentioned,
            })
            .collect()
    }

    /// A default context holding `stored` entries, aged from `now`.
    pub fn from_stored(stored: Vec<StoredEntry>, now: Instant) -> Self {
        let mut context = ResolvedContext::default();
        for e in stored {
            let last_access = now
                .checked_sub(Duration::from_millis(e.idle_ms))
                .unwrap_or(now);
            context.entries.insert(
                e.resource.id.clone(),
                Entry {
                    resource: e.resource,
                    last_access,
                    pinned: e.pinned,
                    explicit: e.explicit,
                    mentioned: e.mentioned,
                },
            );
        }
        context
    }

    /// A context with its own TTL and cap.
    pub fn new(ttl: Duration, cap: usize) -> Self {
        ResolvedContext {
            entries: HashMap::new(),
            ttl,
            cap: cap.max(1),
        }
    }

    /// Adds or refreshes a resource found by discovery.
    pub fn register(&mut self, resource: Resource, now: Instant) {
        self.expire(now);
        match self.entries.get_mut(&resource.id) {
            Some(entry) => {
                entry.resource = resource;
                entry.last_access = now;
            }
            None => {
                self.entries.insert(
                    resource.id.clone(),
                    Entry {
                        resource,
                        last_access: now,
                        pinned: false,
                        explicit: false,
                        mentioned: false,
                    },
                );
                self.evict();
            }
        }
    }

    /// Marks a resource as explicitly accessed (`query get`, a mention).
    pub fn mark_explicit(&mut self, id: &ResourceId, now: Instant) {
        if let Some(entry) = self.entries.get_mut(id) {
            entry.explicit = true;
            entry.last_access = now;
        }
    }

    /// Marks a resource the user named, pinned as a primary target.
    pub fn mark_mentioned(&mut self, id: &ResourceId, now: Instant) {
        self.mark_explicit(id, now);
        if let Some(entry) = self.entries.get_mut(id) {
            entry.mentioned = true;
            entry.pinned = true;
        }
    }

    /// Pins a resource: the LRU cap never evicts it.
    pub fn pin(&mut self, id: &ResourceId) {
        if let Some(entry) = self.entries.get_mut(id) {
            entry.pinned = true;
        }
    }

    /// The resource `text` names (canonical id, name or alias, any case), refreshing it.
    pub fn resolve(&mut self, text: &str, now: Instant) -> Option<Resource> {
        self.expire(now);
        let text = text.trim();
        let wanted = text.to_lowercase();
        let id = self
            .entries
            .iter()
            .filter(|(id, e)| {
                id.to_string() == text
                    || e.resource.name.to_lowercase() == wanted
                    || e.resource
                        .aliases
                        .iter()
                        .any(|a| a.to_lowercase() == wanted)
            })
            .map(|(id, _)| id.clone())
            .min_by_key(|id| id.to_string() != text)?;
        let entry = self.entries.get_mut(&id)?;
        entry.last_access = now;
        Some(entry.resource.clone())
    }

    /// True when the resource was explicitly accessed.
    pub fn is_explicit(&self, id: &ResourceId) -> bool {
        self.entries.get(id).is_some_and(|e| e.explicit)
    }

    /// True when the user named the resource.
    pub fn is_mentioned(&self, id: &ResourceId) -> bool {
        self.entries.get(id).is_some_and(|e| e.mentioned)
    }

    /// Explicitly accessed resources whose parent is `id`, by id.
    pub fn explicit_children(&self, id: &ResourceId) -> Vec<ResourceId> {
        let mut children: Vec<ResourceId> = self
            .entries
            .values()
            .filter(|e| e.explicit && e.resource.parent.as_ref() == Some(id))
            .map(|e| e.resource.id.clone())
            .collect();
        children.sort_by_key(ToString::to_string);
        children
    }

    /// How many resources it holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Drops entries unused for longer than the TTL (pinned ones too: the TTL is the
    /// session's memory).
    pub fn expire(&mut self, now: Instant) {
        let ttl = self.ttl;
        self.entries
            .retain(|_, e| now.saturating_duration_since(e.last_access) <= ttl);
    }

    fn evict(&mut self) {
        while self.entries.len() > self.cap {
            let victim = self
                .entries
                .iter()
                .filter(|(_, e)| !e.pinned)
                .min_by_key(|(_, e)| e.last_access)
                .map(|(id, _)| id.clone());
            match victim {
                Some(id) => {
                    self.entries.remove(&id);
                }
                None => break,
            }
        }
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// A short authoritative block for the prompt: the explicitly accessed resources with
    /// their routing.
    pub fn block(&self) -> String {
        let mut lines: Vec<String> = self
            .entries
            .values()
            .filter(|e| e.explicit)
            .map(|e| {
                let r = &e.resource;
                let parent = r
                    .parent
                    .as_ref()
                    .map(|p| format!(", on {p}"))
                    .unwrap_or_default();
                let via = r
                    .paths
                    .first()
                    .map(|p| format!(", commands run via {} target {}", p.via.as_str(), p.target))
                    .unwrap_or_default();
                format!(
                    "- {} ({} {}, {}{parent}{via})",
                    r.id,
                    r.kind.as_str(),
                    r.name,
                    r.status
                )
            })
            .collect();
        lines.sort();
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vigil_shared::resource::ResourceKind;

    /// A test resource with one alias, `<name>-alias`.
    fn resource(id: &str, name: &str, parent: Option<&str>) -> Resource {
        Resource {
            aliases: vec![format!("{name}-alias")],
            ..crate::assistant::gates::test_resource(id, name, parent)
        }
    }

    #[test]
    fn names_aliases_and_ids_resolve() {
        let now = Instant::now();
        let mut ctx = ResolvedContext::default();
        ctx.register(
            resource("lxc:delly:141", "homepage", Some("node:delly")),
            now,
        );
        assert_eq!(
            ctx.resolve("HOMEPAGE", now).unwrap().id.to_string(),
            "lxc:delly:141"
        );
        assert!(ctx.resolve("homepage-alias", now).is_some());
        assert!(ctx.resolve("lxc:delly:141", now).is_some());
        assert!(ctx.resolve("home", now).is_none());
        assert_eq!(
            ctx.resolve("homepage", now).unwrap().kind,
            ResourceKind::Lxc
        );
    }

    #[test]
    fn ttl_slides_and_lru_spares_pinned_entries() {
        let start = Instant::now();
        let mut ctx = ResolvedContext::new(Duration::from_secs(60), 2);
        ctx.register(resource("node:a", "a", None), start);
        ctx.mark_mentioned(&"node:a".parse().unwrap(), start);
        ctx.register(
            resource("node:b", "b", None),
            start + Duration::from_secs(1),
        );
        ctx.register(
            resource("node:c", "c", None),
            start + Duration::from_secs(2),
        );
        assert_eq!(ctx.len(), 2);
        assert!(
            ctx.resolve("a", start + Duration::from_secs(3)).is_some(),
            "pinned survives"
        );
        assert!(
            ctx.resolve("b", start + Duration::from_secs(3)).is_none(),
            "least recent goes"
        );
        // Access slides the TTL; idle entries expire.
        assert!(ctx.resolve("a", start + Duration::from_secs(50)).is_some());
        assert!(ctx.resolve("a", start + Duration::from_secs(100)).is_some());
        assert!(ctx.resolve("c", start + Duration::from_secs(100)).is_none());
    }

    #[test]
    fn explicit_access_is_tracked_apart_from_lru_access() {
        let now = Instant::now();
        let mut ctx = ResolvedContext::default();
        ctx.register(resource("node:delly", "delly", None), now);
        ctx.register(
            resource("lxc:delly:141", "homepage", Some("node:delly")),
            now,
        );
        ctx.resolve("homepage", now);
        assert!(
            !ctx.is_explicit(&"lxc:delly:141".parse().unwrap()),
            "plain access is not explicit"
        );
        assert!(
            ctx.explicit_children(&"node:delly".parse().unwrap())
                .is_empty()
        );
        ctx.mark_explicit(&"lxc:delly:141".parse().unwrap(), now);
        assert_eq!(
            ctx.explicit_children(&"node:delly".parse().unwrap()).len(),
            1
        );
        assert!(ctx.block().contains("lxc:delly:141"));
        ctx.clear();
        assert!(ctx.is_empty());
    }
}
