//! Sending one message to one channel: the body and headers each kind expects, the
//! webhook's HMAC signature, and what counts as delivered (a 2xx answer in time).

use std::time::Duration;

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::Sha256;

use super::channel::{Channel, ChannelKind, NotifyEvent};
use crate::findings::Severity;

/// The header of a webhook delivery's signature: `sha256=<hex HMAC-SHA256 of the body>`.
pub const SIGNATURE_HEADER: &str = "X-Vigil-Signature";
/// The header naming a delivery (the same on every retry, so a receiver can drop repeats).
pub const DELIVERY_HEADER: &str = "X-Vigil-Delivery";
/// The header naming the event.
pub const EVENT_HEADER: &str = "X-Vigil-Event";
/// How long one attempt may take.
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);
/// How much of an error answer's body is kept.
const ERROR_BODY_CHARS: usize = 300;

/// One notification, as stored in the outbox and sent to webhooks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub event: NotifyEvent,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finding: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Value>,
    /// What a person reads: a first line that stands as a title, then details.
    pub text: String,
}

impl Message {
    /// The severity the message carries: its finding's, otherwise a warning (approvals).
    pub fn severity(&self) -> Severity {
        self.finding
            .as_ref()
            .and_then(|f| f.get("severity"))
            .and_then(Value::as_str)
            .and_then(|s| Severity::parse(s).ok())
            .unwrap_or(Severity::Warning)
    }

    fn title(&self) -> &str {
        self.text.lines().next().unwrap_or("Vigil")
    }
}

/// `sha256=<hex>` of `body` under `secret`.
pub fn signature(secret: &str, body: &[u8]) -> String {
    // HMAC takes a key of any length; new_from_slice cannot fail for it.
    let mut mac = match Hmac::<Sha256>::new_from_slice(secret.as_bytes()) {
        Ok(mac) => mac,
        Err(_) => return String::new(),
    };
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// The request `channel` gets for `message`: (content type, body, extra headers).
pub fn request(
    channel: &Channel,
    delivery: &str,
    message: &Message,
) -> (String, Vec<u8>, Vec<(String, String)>) {
    let mut headers = vec![
        (DELIVERY_HEADER.to_owned(), delivery.to_owned()),
        (EVENT_HEADER.to_owned(), message.event.as_str().to_owned()),
    ];
    match channel.kind {
        ChannelKind::Webhook => {
            let body = serde_json::to_vec(message).unwrap_or_default();
            if let Some(secret) = &channel.secret {
                headers.push((SIGNATURE_HEADER.to_owned(), signature(secret, &body)));
            }
            ("application/json".into(), body, headers)
        }
        ChannelKind::Ntfy => {
            let severity = message.severity();
            let priority = match (message.event, severity) {
                (NotifyEvent::FindingResolved, _) => "2",
                (_, Severity::Critical) => "5",
                (_, Severity::Warning) => "4",
                (_, Severity::Info) => "3",
            };
            let tag = match message.event {
                NotifyEvent::FindingResolved => "white_check_mark",
                NotifyEvent::ApprovalNeeded => "raised_hand",
                NotifyEvent::InvestigationDone => "mag",
                NotifyEvent::FindingNew if severity == Severity::Critical => "rotating_light",
                NotifyEvent::FindingNew => "warning",
            };
            headers.push(("Title".into(), header_text(message.title())));
            headers.push(("Priority".into(), priority.into()));
            headers.push(("Tags".into(), tag.into()));
            if let Some(token) = &channel.secret {
                headers.push(("Authorization".into(), format!("Bearer {token}")));
            }
            (
                "text/plain; charset=utf-8".into(),
                message.text.clone().into_bytes(),
                headers,
            )
        }
        ChannelKind::Slack => {
            let body = json!({ "text": message.text, "username": "Vigil" });
            (
                "application/json".into(),
                serde_json::to_vec(&body).unwrap_or_default(),
                headers,
            )
        }
    }
}

/// Header values are one line of visible ASCII-safe text (ntfy reads UTF-8 titles too,
/// but a control character would break the request).
fn header_text(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(200)
        .collect()
}

/// Sends one attempt; `Err` says why it did not count as delivered.
pub async fn send(
    http: &reqwest::Client,
    channel: &Channel,
    delivery: &str,
    message: &Message,
) -> Result<(), String> {
    let (content_type, body, headers) = request(channel, delivery, message);
    let mut builder = http
        .post(channel.url.trim())
        .timeout(ATTEMPT_TIMEOUT)
        .header(reqwest::header::CONTENT_TYPE, content_type)
        .body(body);
    for (name, value) in headers {
        builder = builder.header(name, value);
    }
    let response = builder.send().await.map_err(|e| {
        // reqwest's error names the URL, which may hold a token: say only what failed.
        if e.is_timeout() {
            format!("no answer within {} s", ATTEMPT_TIMEOUT.as_secs())
        } else if e.is_connect() {
            "cannot connect".to_owned()
        } else {
            "the request failed".to_owned()
        }
    })?;
    let status = response.status();
    if status.is_success() {
        return Ok(());
    }
    let text = response.text().await.unwrap_or_default();
    let text: String = text.chars().take(ERROR_BODY_CHARS).collect();
    Err(format!(
        "HTTP {status}: {}",
        vigil_shared::redact::redact(text.trim()).text
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message() -> Message {
        Message {
            event: NotifyEvent::FindingNew,
            finding: Some(json!({"id": "f1", "severity": "critical"})),
            approval: None,
            text: "critical: / is 97% full on web01\nmore".into(),
        }
    }

    fn channel(kind: ChannelKind, secret: Option<&str>) -> Channel {
        Channel {
            name: "c".into(),
            kind,
            url: "http://127.0.0.1:1/".into(),
            secret: secret.map(str::to_owned),
            min_severity: None,
            events: None,
        }
    }

    #[test]
    fn webhooks_are_signed_over_the_exact_body() {
        let (kind, body, headers) =
            request(&channel(ChannelKind::Webhook, Some("k")), "d1", &message());
        assert_eq!(kind, "application/json");
        let sent: Message = serde_json::from_slice(&body).unwrap();
        assert_eq!(sent, message());
        let sig = headers.iter().find(|(n, _)| n == SIGNATURE_HEADER).unwrap();
        assert_eq!(sig.1, signature("k", &body));
        assert!(sig.1.starts_with("sha256=") && sig.1.len() == 7 + 64);
        assert_ne!(signature("k", &body), signature("other", &body));
        let (_, _, unsigned) = request(&channel(ChannelKind::Webhook, None), "d1", &message());
        assert!(unsigned.iter().all(|(n, _)| n != SIGNATURE_HEADER));
    }

    #[test]
    fn a_known_hmac() {
        // RFC 4231 test case 2.
        assert_eq!(
            signature("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn ntfy_and_slack_get_their_shapes() {
        let (_, body, headers) = request(&channel(ChannelKind::Ntfy, Some("tk")), "d", &message());
        assert_eq!(body, message().text.as_bytes());
        let get = |n: &str| headers.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        assert_eq!(get("Priority").as_deref(), Some("5"));
        assert_eq!(
            get("Title").as_deref(),
            Some("critical: / is 97% full on web01")
        );
        assert_eq!(get("Authorization").as_deref(), Some("Bearer tk"));
        let (_, body, _) = request(&channel(ChannelKind::Slack, None), "d", &message());
        let value: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(value["text"], message().text);
    }
}
