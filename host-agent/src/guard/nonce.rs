//! Nonces of grants already used, kept until their grant could no longer verify.

use std::collections::HashMap;

/// Most unexpired nonces kept at once; beyond it new writes are refused.
pub const MAX_NONCES: usize = 65_536;

/// The set of grant nonces seen, each with the Unix second after which it can be forgotten.
#[derive(Debug, Default)]
pub struct NonceCache {
    seen: HashMap<Vec<u8>, i64>,
}

impl NonceCache {
    /// Forget nonces whose grants are past expiry plus skew at `now`.
    pub fn prune(&mut self, now: i64) {
        self.seen.retain(|_, keep_until| *keep_until >= now);
    }

    /// True when `nonce` was used and not yet forgotten.
    pub fn contains(&self, nonce: &[u8]) -> bool {
        self.seen.contains_key(nonce)
    }

    /// True when no more nonces can be remembered.
    pub fn is_full(&self) -> bool {
        self.seen.len() >= MAX_NONCES
    }

    /// Remember `nonce` until `keep_until`.
    pub fn insert(&mut self, nonce: Vec<u8>, keep_until: i64) {
        self.seen.insert(nonce, keep_until);
    }

    /// Number of nonces remembered.
    pub fn len(&self) -> usize {
        self.seen.len()
    }

    /// True when no nonce is remembered.
    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonces_are_kept_until_their_time_then_pruned() {
        let mut cache = NonceCache::default();
        cache.insert(vec![1], 100);
        cache.insert(vec![2], 200);
        cache.prune(100);
        assert!(cache.contains(&[1]) && cache.contains(&[2]));
        cache.prune(101);
        assert!(!cache.contains(&[1]) && cache.contains(&[2]));
        cache.prune(201);
        assert!(cache.is_empty());
    }
}
