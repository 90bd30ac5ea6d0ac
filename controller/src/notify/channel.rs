//! A notification channel: where messages go (a generic JSON webhook signed with HMAC,
//! ntfy, or a Slack-compatible incoming webhook), and which events and severities it wants.
//! The one definition of the channel's fields, for the configuration file's
//! `[[notify_channels]]` tables and `POST /api/notify/channels` alike.

use serde::{Deserialize, Serialize};

use crate::findings::Severity;
use crate::{Error, Result};

/// What a channel speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChannelKind {
    /// JSON `{event, finding?, approval?, text}`, signed `X-Vigil-Signature: sha256=<hmac>`.
    Webhook,
    /// ntfy: the text as the body, with `Title`, `Priority` and `Tags` headers.
    Ntfy,
    /// A Slack-compatible incoming webhook (also Mattermost's, and Discord's `/slack`).
    Slack,
}

/// The events a channel can want.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum NotifyEvent {
    /// A new finding.
    #[serde(rename = "finding.new")]
    FindingNew,
    /// A finding resolved itself (its check passed, or its alert resolved).
    #[serde(rename = "finding.resolved")]
    FindingResolved,
    /// An investigation of a finding has its answer.
    #[serde(rename = "investigation.done")]
    InvestigationDone,
    /// A write waits for a person's approval.
    #[serde(rename = "approval.needed")]
    ApprovalNeeded,
}

impl NotifyEvent {
    /// Every event, in the order the docs list them.
    pub const ALL: [NotifyEvent; 4] = [
        NotifyEvent::FindingNew,
        NotifyEvent::FindingResolved,
        NotifyEvent::InvestigationDone,
        NotifyEvent::ApprovalNeeded,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            NotifyEvent::FindingNew => "finding.new",
            NotifyEvent::FindingResolved => "finding.resolved",
            NotifyEvent::InvestigationDone => "investigation.done",
            NotifyEvent::ApprovalNeeded => "approval.needed",
        }
    }
}

/// One channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Channel {
    /// Its name (letters, digits, `-`, `_`; at most 64).
    pub name: String,
    pub kind: ChannelKind,
    /// Where to POST (http or https).
    pub url: String,
    /// webhook: the HMAC-SHA256 key of `X-Vigil-Signature`; ntfy: an access token sent as
    /// `Authorization: Bearer`; slack: unused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// Findings below this severity are not sent (default: all). Approvals count as
    /// warnings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_severity: Option<Severity>,
    /// The events it wants (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<NotifyEvent>>,
}

/// Longest channel name.
const MAX_NAME: usize = 64;
/// Longest URL or secret.
const MAX_TEXT: usize = 2048;

impl Channel {
    /// Checks the fields: a readable name, an http(s) URL with a host, no empty secret.
    pub fn check(&self) -> Result<()> {
        let name = &self.name;
        if name.is_empty()
            || name.len() > MAX_NAME
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(Error::InvalidInput(format!(
                "channel name {name:?}: 1-{MAX_NAME} letters, digits, '-' or '_'"
            )));
        }
        if self.url.len() > MAX_TEXT {
            return Err(Error::InvalidInput(format!(
                "channel {name}: url is over {MAX_TEXT} bytes"
            )));
        }
        let url = reqwest::Url::parse(self.url.trim())
            .map_err(|e| Error::InvalidInput(format!("channel {name}: url {:?}: {e}", self.url)))?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
            return Err(Error::InvalidInput(format!(
                "channel {name}: url must be http:// or https:// with a host"
            )));
        }
        if let Some(secret) = &self.secret
            && (secret.is_empty() || secret.len() > MAX_TEXT)
        {
            return Err(Error::InvalidInput(format!(
                "channel {name}: secret must be 1-{MAX_TEXT} bytes (leave it out for none)"
            )));
        }
        if self.events.as_ref().is_some_and(Vec::is_empty) {
            return Err(Error::InvalidInput(format!(
                "channel {name}: events is empty (leave it out for every event)"
            )));
        }
        Ok(())
    }

    /// True when the channel wants `event` at `severity`.
    pub fn wants(&self, event: NotifyEvent, severity: Severity) -> bool {
        self.events.as_ref().is_none_or(|e| e.contains(&event))
            && self.min_severity.is_none_or(|min| severity >= min)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channel(json: &str) -> Result<Channel> {
        let channel: Channel =
            serde_json::from_str(json).map_err(|e| Error::InvalidInput(e.to_string()))?;
        channel.check()?;
        Ok(channel)
    }

    #[test]
    fn channels_are_checked() {
        let ok = channel(
            r#"{"name":"ops","kind":"webhook","url":"https://hooks.lan/v","secret":"s",
                "min_severity":"warning","events":["finding.new","approval.needed"]}"#,
        )
        .unwrap();
        assert!(ok.wants(NotifyEvent::FindingNew, Severity::Critical));
        assert!(!ok.wants(NotifyEvent::FindingNew, Severity::Info));
        assert!(!ok.wants(NotifyEvent::FindingResolved, Severity::Critical));
        for bad in [
            r#"{"name":"","kind":"ntfy","url":"https://ntfy.sh/x"}"#,
            r#"{"name":"a b","kind":"ntfy","url":"https://ntfy.sh/x"}"#,
            r#"{"name":"a","kind":"email","url":"https://ntfy.sh/x"}"#,
            r#"{"name":"a","kind":"ntfy","url":"file:///etc/passwd"}"#,
            r#"{"name":"a","kind":"ntfy","url":"not a url"}"#,
            r#"{"name":"a","kind":"ntfy","url":"https://x/","secret":""}"#,
            r#"{"name":"a","kind":"ntfy","url":"https://x/","events":[]}"#,
            r#"{"name":"a","kind":"ntfy","url":"https://x/","events":["finding.old"]}"#,
            r#"{"name":"a","kind":"ntfy","url":"https://x/","min_severity":"fatal"}"#,
            r#"{"name":"a","kind":"ntfy","url":"https://x/","extra":1}"#,
        ] {
            assert!(channel(bad).is_err(), "{bad}");
        }
        let all =
            channel(r#"{"name":"all","kind":"slack","url":"http://chat.lan/hooks/1"}"#).unwrap();
        for event in NotifyEvent::ALL {
            assert!(all.wants(event, Severity::Info));
            let json = serde_json::to_string(&event).unwrap();
            assert_eq!(json, format!("\"{}\"", event.as_str()));
        }
    }
}
