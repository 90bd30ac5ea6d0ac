//! Reconnect delays: exponential from 1 s doubling to 60 s, with full jitter, reset after
//! a stream that stayed up for 60 s.

use std::time::Duration;

/// The first ceiling.
pub const BASE: Duration = Duration::from_secs(1);
/// The largest ceiling.
pub const MAX: Duration = Duration::from_secs(60);
/// A stream that lived this long resets the backoff.
pub const STABLE_AFTER: Duration = Duration::from_secs(60);
/// The shortest delay actually slept, so a zero draw never spins.
pub const FLOOR: Duration = Duration::from_millis(100);

/// Exponential backoff with full jitter.
#[derive(Debug, Clone, Default)]
pub struct Backoff {
    attempt: u32,
}

impl Backoff {
    /// A fresh backoff (the next ceiling is one second).
    pub fn new() -> Self {
        Self::default()
    }

    /// The upper bound of the next delay.
    pub fn ceiling(&self) -> Duration {
        BASE.saturating_mul(1u32 << self.attempt.min(16)).min(MAX)
    }

    /// The next delay: uniform in `[FLOOR, ceiling]`; the ceiling then doubles.
    pub fn next_delay(&mut self) -> Duration {
        let ceiling = self.ceiling();
        self.attempt = self.attempt.saturating_add(1);
        let millis = u64::try_from(ceiling.as_millis()).unwrap_or(u64::MAX);
        let draw = getrandom::u64().unwrap_or(millis) % millis.saturating_add(1);
        Duration::from_millis(draw).max(FLOOR)
    }

    /// Account for a stream that was up for `lived`.
    pub fn after_stream(&mut self, lived: Duration) {
        if lived >= STABLE_AFTER {
            self.attempt = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceilings_double_from_one_second_to_sixty() {
        let mut b = Backoff::new();
        let ceilings: Vec<u64> = (0..10)
            .map(|_| {
                let c = b.ceiling();
                b.next_delay();
                c.as_secs()
            })
            .collect();
        assert_eq!(ceilings, [1, 2, 4, 8, 16, 32, 60, 60, 60, 60]);
        for _ in 0..100 {
            b.next_delay();
        }
        assert_eq!(b.ceiling(), MAX, "no overflow after many attempts");
    }

    #[test]
    fn delays_stay_within_bounds_and_are_jittered() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..200 {
            let mut b = Backoff::new();
            for _ in 0..8 {
                let ceiling = b.ceiling();
                let d = b.next_delay();
                assert!(d >= FLOOR && d <= ceiling.max(FLOOR), "{d:?} > {ceiling:?}");
                seen.insert(d);
            }
        }
        assert!(seen.len() > 100, "delays are random, not fixed");
    }

    #[test]
    fn only_a_stable_stream_resets() {
        let mut b = Backoff::new();
        for _ in 0..5 {
            b.next_delay();
        }
        b.after_stream(Duration::from_secs(59));
        assert_eq!(b.ceiling(), Duration::from_secs(32));
        b.after_stream(STABLE_AFTER);
        assert_eq!(b.ceiling(), BASE);
    }
}
