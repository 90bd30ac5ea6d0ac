//! The search index: lower-cased ids, names/aliases and their parts, each in a sorted map
//! from token to ids, so exact matches are lookups and prefix matches are range scans. An
//! entry's tokens are kept with it and the index is updated by difference when it changes.
//! A token's text is held once, shared by the map and the entries; ids are interned.

use std::collections::{BTreeMap, HashSet};
use std::ops::Bound;
use std::sync::Arc;

use vigil_shared::resource::{Resource, ResourceId, ResourceKind};

use super::graph::Graph;
use super::intern::Id;

/// Where a token comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Field {
    /// The id as text.
    Id,
    /// A name or alias, whole.
    Name,
    /// A `-`/`_`/`.`/white space separated part of a name or alias.
    Part,
}

/// One token of an entry, as computed.
pub(super) type Token = (Field, String);

/// One token of an entry, as indexed: the text is the index's own copy.
pub(super) type Key = (Field, Arc<str>);

/// True for the characters that separate the parts of a name.
fn separator(c: char) -> bool {
    matches!(c, '-' | '_' | '.') || c.is_whitespace()
}

/// The tokens of a resource with this id, name and aliases, sorted and without duplicates.
pub(super) fn keys<'a>(id: &ResourceId, names: impl IntoIterator<Item = &'a str>) -> Vec<Token> {
    let mut keys = vec![(Field::Id, id.to_string().to_lowercase())];
    for name in names {
        let lower = name.trim().to_lowercase();
        if lower.is_empty() {
            continue;
        }
        keys.extend(
            lower
                .split(separator)
                .filter(|p| !p.is_empty())
                .map(|p| (Field::Part, p.to_owned())),
        );
        keys.push((Field::Name, lower));
    }
    keys.sort();
    keys.dedup();
    keys
}

/// Token → ids, one map per field.
#[derive(Debug, Default)]
pub(super) struct SearchIndex {
    ids: TokenMap,
    names: TokenMap,
    parts: TokenMap,
}

impl SearchIndex {
    fn map(&mut self, field: Field) -> &mut TokenMap {
        match field {
            Field::Id => &mut self.ids,
            Field::Name => &mut self.names,
            Field::Part => &mut self.parts,
        }
    }

    /// Replace `id`'s tokens `old` with `new` (both sorted, as [`keys`] returns them), and
    /// return `new` as indexed.
    pub(super) fn update(&mut self, id: &Id, old: &[Key], new: &[Token]) -> Box<[Key]> {
        for (field, token) in old {
            if contains(new, *field, token) {
                continue;
            }
            let map = self.map(*field);
            if let Some(ids) = map.get_mut(&**token) {
                if let Ok(at) = ids.binary_search(id) {
                    ids.remove(at);
                }
                if ids.is_empty() {
                    map.remove(&**token);
                }
            }
        }
        let mut keys = Vec::with_capacity(new.len());
        for (field, token) in new {
            let field_token = (*field, token.as_str());
            if let Ok(at) = old.binary_search_by(|(f, t)| (*f, &**t).cmp(&field_token)) {
                keys.push(old[at].clone());
                continue;
            }
            let map = self.map(*field);
            let text = match map.get_key_value(token.as_str()) {
                Some((text, _)) => Arc::clone(text),
                None => {
                    let text: Arc<str> = Arc::from(token.as_str());
                    map.insert(Arc::clone(&text), Vec::new());
                    text
                }
            };
            if let Some(ids) = map.get_mut(&*text)
                && let Err(at) = ids.binary_search(id)
            {
                ids.insert(at, Arc::clone(id));
            }
            keys.push((*field, text));
        }
        keys.into_boxed_slice()
    }

    /// The ids of one rank: 0 exact id, 1 exact name or alias, 2 prefix of a name, alias
    /// or id, 3 whole part, 4 prefix of a part.
    fn stage<'a>(&'a self, rank: u8, query: &str) -> Vec<&'a Id> {
        match rank {
            0 => exact(&self.ids, query),
            1 => exact(&self.names, query),
            2 => {
                let mut ids = prefix(&self.names, query);
                ids.extend(prefix(&self.ids, query));
                ids
            }
            3 => exact(&self.parts, query),
            _ => prefix(&self.parts, query),
        }
    }

    /// Ids matching `query` (lower case, not empty) that `accept` lets through, best first,
    /// at most `limit`. Each rank is complete before the next is looked at, so a query
    /// with enough better matches never scans the wider ranges.
    pub(super) fn query(
        &self,
        query: &str,
        accept: impl Fn(&ResourceId) -> bool,
        limit: usize,
    ) -> Vec<Id> {
        let mut seen: HashSet<&Id> = HashSet::new();
        let mut out: Vec<&Id> = Vec::new();
        for rank in 0..5 {
            if out.len() >= limit {
                break;
            }
            let mut found: Vec<&Id> = self
                .stage(rank, query)
                .into_iter()
                .filter(|id| !seen.contains(id) && accept(id))
                .collect();
            found.sort_unstable();
            found.dedup();
            seen.extend(found.iter().copied());
            out.extend(found);
        }
        out.truncate(limit);
        out.into_iter().cloned().collect()
    }
}

/// Token → the ids indexed under it, sorted (a vector: most tokens name one id, and a
/// B-tree node per token would cost far more memory).
type TokenMap = BTreeMap<Arc<str>, Vec<Id>>;

/// The ids under the token `query`.
fn exact<'a>(map: &'a TokenMap, query: &str) -> Vec<&'a Id> {
    map.get(query).into_iter().flatten().collect()
}

/// The ids under every token starting with `query`.
fn prefix<'a>(map: &'a TokenMap, query: &str) -> Vec<&'a Id> {
    map.range::<str, _>((Bound::Included(query), Bound::Unbounded))
        .take_while(|(token, _)| token.starts_with(query))
        .flat_map(|(_, ids)| ids.iter())
        .collect()
}

/// True when the sorted `tokens` hold (`field`, `token`).
fn contains(tokens: &[Token], field: Field, token: &str) -> bool {
    tokens
        .binary_search_by(|(f, t)| (*f, t.as_str()).cmp(&(field, token)))
        .is_ok()
}

impl Graph {
    /// See [`super::Inventory::search`].
    pub(super) fn search(
        &self,
        query: &str,
        kind: Option<ResourceKind>,
        limit: usize,
    ) -> Vec<Resource> {
        let accept = |id: &ResourceId| kind.is_none_or(|k| id.kind() == k);
        let query = query.trim().to_lowercase();
        let ids: Vec<Id> = if query.is_empty() {
            self.merged
                .keys()
                .filter(|id| accept(id))
                .take(limit)
                .cloned()
                .collect()
        } else {
            self.index.query(&query, accept, limit)
        };
        ids.iter().filter_map(|id| self.present(id)).collect()
    }
}
