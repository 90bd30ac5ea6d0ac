//! Boot times for resources from the uptimes the tools print: an uptime grows with every
//! scan, a boot time stays put, so an idle guest reports the same resource every time.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

/// How far apart two computed boot times may be and still be the same boot (the uptime
/// the tools print and the clock it is subtracted from tick separately).
const BOOT_SLACK_S: u64 = 10;

/// Boot times from uptimes, kept equal to the previous scan's while they agree.
#[derive(Debug)]
pub(super) struct BootClock {
    now: u64,
    previous: BTreeMap<String, u64>,
    next: BTreeMap<String, u64>,
}

impl BootClock {
    pub(super) fn new(store: &Mutex<BTreeMap<String, u64>>) -> Self {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Self::at(
            now,
            store.lock().unwrap_or_else(PoisonError::into_inner).clone(),
        )
    }

    fn at(now: u64, previous: BTreeMap<String, u64>) -> Self {
        BootClock {
            now,
            previous,
            next: BTreeMap::new(),
        }
    }

    /// The boot time of something up for `uptime` seconds (`None` when it is not up).
    pub(super) fn boot_time(&mut self, key: String, uptime: Option<u64>) -> Option<u64> {
        let uptime = uptime.filter(|u| *u > 0)?;
        let computed = self.now.saturating_sub(uptime);
        let boot = match self.previous.get(&key) {
            Some(&old) if old.abs_diff(computed) <= BOOT_SLACK_S => old,
            _ => computed,
        };
        self.next.insert(key, boot);
        Some(boot)
    }

    pub(super) fn commit(self, store: &Mutex<BTreeMap<String, u64>>) {
        *store.lock().unwrap_or_else(PoisonError::into_inner) = self.next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boot_times_stay_put_until_a_restart() {
        let mut first = BootClock::at(1_000_000, BTreeMap::new());
        assert_eq!(first.boot_time("a".into(), Some(1000)), Some(999_000));
        assert_eq!(first.boot_time("stopped".into(), Some(0)), None);
        assert_eq!(first.boot_time("unknown".into(), None), None);
        // 31 s later the tool's uptime may be off by a second or two: same boot.
        let mut second = BootClock::at(1_000_031, first.next);
        assert_eq!(second.boot_time("a".into(), Some(1029)), Some(999_000));
        // Restarted: a new boot time.
        let mut third = BootClock::at(1_000_062, second.next.clone());
        assert_eq!(third.boot_time("a".into(), Some(20)), Some(1_000_042));
        assert!(third.next.contains_key("a"));
    }
}
