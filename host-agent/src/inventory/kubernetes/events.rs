//! Warning events as short text lines: the newest [`PER_NAMESPACE`] of each namespace, for
//! the namespace's and the involved pod's `details.warning_events`.

use crate::kube_api::types::Event;
use std::collections::BTreeMap;
use time::OffsetDateTime as Timestamp;
use time::format_description::well_known::Rfc3339;

/// Warning events kept per namespace.
pub const PER_NAMESPACE: usize = 20;
/// Longest line, in characters.
pub const MAX_LINE_CHARS: usize = 300;

/// The kept lines, newest first, by namespace and by `(namespace, pod)`.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Warnings {
    pub by_namespace: BTreeMap<String, Vec<String>>,
    pub by_pod: BTreeMap<(String, String), Vec<String>>,
}

impl Warnings {
    /// The namespace's lines joined for `details.warning_events`.
    pub fn namespace(&self, ns: &str) -> Option<String> {
        self.by_namespace.get(ns).map(|l| l.join("\n"))
    }

    /// The pod's lines joined for `details.warning_events`.
    pub fn pod(&self, ns: &str, name: &str) -> Option<String> {
        self.by_pod
            .get(&(ns.to_owned(), name.to_owned()))
            .map(|l| l.join("\n"))
    }
}

/// When the event last happened, as well as the event says.
fn when(e: &Event) -> Option<Timestamp> {
    let parse = |t: Option<&String>| Timestamp::parse(t?, &Rfc3339).ok();
    e.series
        .as_ref()
        .and_then(|s| parse(s.last_observed_time.as_ref()))
        .or_else(|| parse(e.last_timestamp.as_ref()))
        .or_else(|| parse(e.event_time.as_ref()))
        .or_else(|| parse(e.first_timestamp.as_ref()))
        .or_else(|| parse(e.metadata.creation_timestamp.as_ref()))
}

/// `reason: message (kind/name)` on one line of at most [`MAX_LINE_CHARS`] characters.
pub fn line(e: &Event) -> String {
    let o = &e.involved_object;
    let text = format!(
        "{}: {} ({}/{})",
        e.reason.as_deref().unwrap_or("Unknown"),
        e.message.as_deref().unwrap_or("").trim(),
        o.kind.as_deref().unwrap_or("?"),
        o.name.as_deref().unwrap_or("?"),
    );
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_LINE_CHARS)
        .collect()
}

/// Group warning events, newest first, keeping [`PER_NAMESPACE`] per namespace.
pub fn warnings(events: &[Event]) -> Warnings {
    let mut sorted: Vec<(&Event, Option<Timestamp>)> =
        events.iter().map(|e| (e, when(e))).collect();
    // Newest first; ties (and events without a time) in name order, so output is stable.
    sorted.sort_by(|(a, ta), (b, tb)| {
        tb.cmp(ta)
            .then_with(|| a.metadata.name.cmp(&b.metadata.name))
    });
    let mut out = Warnings::default();
    for (e, _) in sorted {
        let Some(ns) = e
            .metadata
            .namespace
            .as_deref()
            .or(e.involved_object.namespace.as_deref())
        else {
            continue;
        };
        let kept = out.by_namespace.entry(ns.to_owned()).or_default();
        if kept.len() >= PER_NAMESPACE {
            continue;
        }
        let text = line(e);
        kept.push(text.clone());
        let o = &e.involved_object;
        if o.kind.as_deref() == Some("Pod")
            && let Some(name) = &o.name
        {
            let pod_ns = o.namespace.as_deref().unwrap_or(ns);
            out.by_pod
                .entry((pod_ns.to_owned(), name.clone()))
                .or_default()
                .push(text);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(name: &str, ns: &str, at: &str, kind: &str, object: &str, message: &str) -> Event {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": ns},
            "involvedObject": {"kind": kind, "name": object, "namespace": ns},
            "reason": "BackOff", "message": message, "type": "Warning",
            "lastTimestamp": at,
        }))
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn newest_twenty_per_namespace_and_lines_are_bounded() {
        let mut events: Vec<Event> = (0..25)
            .map(|i| {
                let at = format!("2025-01-01T00:00:{i:02}Z");
                event(
                    &format!("e{i}"),
                    "media",
                    &at,
                    "Pod",
                    "web-0",
                    &format!("n{i}"),
                )
            })
            .collect();
        events.push(event(
            "x",
            "ops",
            "2025-01-01T00:00:00Z",
            "Node",
            "k1",
            &"y\n".repeat(400),
        ));
        let w = warnings(&events);
        let media = &w.by_namespace["media"];
        assert_eq!(media.len(), PER_NAMESPACE);
        assert_eq!(media[0], "BackOff: n24 (Pod/web-0)");
        assert_eq!(media[19], "BackOff: n5 (Pod/web-0)");
        assert_eq!(w.pod("media", "web-0").map(|t| t.lines().count()), Some(20));
        let ops = &w.by_namespace["ops"][0];
        assert_eq!(ops.chars().count(), MAX_LINE_CHARS);
        assert!(!ops.contains('\n'));
        assert_eq!(w.pod("ops", "k1"), None);
    }
}
