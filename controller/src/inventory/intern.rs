//! Interned resource ids: every structure of the graph (the merged entries, the agents'
//! report lists, the parent index, the search index) holds an id as an [`Id`], one pointer
//! to a single shared copy, instead of a `ResourceId` of its own (two or three strings).
//! An id leaves the table once nothing but the table holds it ([`Ids::sweep`]), so the
//! table does not grow as agents come and go.

use std::collections::HashSet;
use std::sync::Arc;

use vigil_shared::resource::ResourceId;

/// A resource id shared by every structure that names it.
pub(super) type Id = Arc<ResourceId>;

/// The table of interned ids.
#[derive(Debug, Default)]
pub(super) struct Ids {
    table: HashSet<Id>,
}

impl Ids {
    /// The shared copy of `id`, added to the table if it is new.
    pub(super) fn intern(&mut self, id: &ResourceId) -> Id {
        if let Some(shared) = self.table.get(id) {
            return Arc::clone(shared);
        }
        let shared = Arc::new(id.clone());
        self.table.insert(Arc::clone(&shared));
        shared
    }

    /// The shared copy of `id`, if it is interned.
    pub(super) fn get(&self, id: &ResourceId) -> Option<Id> {
        self.table.get(id).cloned()
    }

    /// Drop each of `candidates` (distinct ids) that nothing else holds any more: only the table and the
    /// candidate itself.
    pub(super) fn sweep(&mut self, candidates: impl IntoIterator<Item = Id>) {
        for id in candidates {
            if Arc::strong_count(&id) <= 2 {
                self.table.remove(&*id);
            }
        }
    }

    /// How many ids are interned.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.table.len()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn id(text: &str) -> ResourceId {
        text.parse().unwrap()
    }

    #[test]
    fn one_copy_per_id() {
        let mut ids = Ids::default();
        let a = ids.intern(&id("host:a"));
        let b = ids.intern(&id("host:a"));
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(ids.len(), 1);
        assert!(!Arc::ptr_eq(&a, &ids.intern(&id("host:b"))));
        assert_eq!(ids.len(), 2);
    }

    #[test]
    fn sweep_drops_only_ids_nothing_else_holds() {
        let mut ids = Ids::default();
        let kept = ids.intern(&id("host:a"));
        let gone = ids.intern(&id("host:b"));
        let candidates = vec![ids.intern(&id("host:a")), gone];
        ids.sweep(candidates);
        assert_eq!(ids.len(), 1);
        assert!(Arc::ptr_eq(&kept, &ids.intern(&id("host:a"))));
    }
}
