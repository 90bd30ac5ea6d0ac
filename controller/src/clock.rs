//! Wall-clock helpers. Code that decides by time takes `now` as an argument; only the
//! edges (request handlers, the CLI) read the clock, through these functions.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch.
pub fn unix_now() -> i64 {
    unix_now_ms() / 1000
}

/// Milliseconds since the Unix epoch.
pub fn unix_now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// `2025-01-31T12:00:00Z` for a Unix time in seconds.
pub fn rfc3339(unix: i64) -> String {
    match time::OffsetDateTime::from_unix_timestamp(unix) {
        Ok(t) => format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
            t.year(),
            u8::from(t.month()),
            t.day(),
            t.hour(),
            t.minute(),
            t.second()
        ),
        Err(_) => unix.to_string(),
    }
}

/// A time as a person reads it next to `now` (both Unix seconds): `now`, `in 45 s`,
/// `3 min ago`, `in 2 h`, and beyond a day the date and time in UTC
/// (`2026-11-26 07:35 UTC`).
pub fn relative(unix: i64, now: i64) -> String {
    let delta = unix.saturating_sub(now);
    let span = delta.unsigned_abs();
    let amount = match span {
        0..=4 => return "now".into(),
        5..=59 => format!("{span} s"),
        60..=3_599 => format!("{} min", span / 60),
        3_600..=86_399 => format!("{} h", span / 3_600),
        _ => {
            let text = rfc3339(unix);
            return match (text.get(..10), text.get(11..16)) {
                (Some(day), Some(hm)) => format!("{day} {hm} UTC"),
                _ => text,
            };
        }
    };
    if delta > 0 {
        format!("in {amount}")
    } else {
        format!("{amount} ago")
    }
}

/// [`relative`] for an RFC 3339 time (as the API writes them); the text itself when it
/// does not parse.
pub fn relative_rfc3339(text: &str, now: i64) -> String {
    use time::format_description::well_known::Rfc3339;
    match time::OffsetDateTime::parse(text, &Rfc3339) {
        Ok(t) => relative(t.unix_timestamp(), now),
        Err(_) => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_a_person_says_them() {
        let now = 1_795_678_826;
        assert_eq!(relative(now, now), "now");
        assert_eq!(relative(now + 45, now), "in 45 s");
        assert_eq!(relative(now + 4 * 60 + 10, now), "in 4 min");
        assert_eq!(relative(now - 3 * 60, now), "3 min ago");
        assert_eq!(relative(now - 2 * 3600 - 5, now), "2 h ago");
        assert_eq!(relative(now + 3 * 86_400, now), "2026-11-29 07:40 UTC");
        assert_eq!(relative_rfc3339(&rfc3339(now - 12), now), "12 s ago");
        assert_eq!(relative_rfc3339("not a time", now), "not a time");
    }

    #[test]
    fn formats_rfc3339_in_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
    }
}
