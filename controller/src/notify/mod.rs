//! Notifications: [`Notifier::publish`] puts a message in the store's outbox once for each
//! channel that wants it, and [`Notifier::deliver`] (one task per replica) sends what is
//! due, retrying with backoff and recording failures, so that a delivery survives a
//! controller restart and a receiver that is down for a while. Channels come from the
//! configuration file (`[[notify_channels]]`, read only) and the API (stored).

pub mod channel;
pub mod deliver;

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

pub use channel::{Channel, ChannelKind, NotifyEvent};
pub use deliver::Message;

use crate::clock::unix_now;
use crate::error::ApiCode;
use crate::metrics::Metrics;
use crate::store::Store;
use crate::{Error, Result};

/// Attempts before a delivery is given up.
pub const MAX_ATTEMPTS: i64 = 15;
/// Wait after the first failed attempt; it doubles up to [`MAX_BACKOFF_S`].
pub const FIRST_BACKOFF_S: i64 = 2;
/// Longest wait between two attempts.
pub const MAX_BACKOFF_S: i64 = 600;
/// How long a replica holds a delivery it is sending.
const CLAIM_S: i64 = 60;
/// How often the outbox is looked at when nothing wakes the sender.
const POLL: Duration = Duration::from_secs(1);
/// Deliveries sent per look.
const BATCH: i64 = 50;
/// Longest message text.
const MAX_TEXT: usize = 4000;

/// A channel as the API lists it: its secret is never shown.
#[derive(Debug, Clone, Serialize)]
pub struct ChannelView {
    pub name: String,
    pub kind: ChannelKind,
    pub url: String,
    pub secret_set: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_severity: Option<crate::findings::Severity>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<NotifyEvent>>,
    /// `config` (the configuration file's) or `api`.
    pub source: &'static str,
}

impl ChannelView {
    fn of(channel: &Channel, source: &'static str) -> ChannelView {
        ChannelView {
            name: channel.name.clone(),
            kind: channel.kind,
            url: redacted_url(&channel.url),
            secret_set: channel.secret.is_some(),
            min_severity: channel.min_severity,
            events: channel.events.clone(),
            source,
        }
    }
}

/// A URL as shown: a password in it and the query (where tokens travel) are hidden.
fn redacted_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            if parsed.password().is_some() {
                let _ = parsed.set_password(Some("REDACTED"));
            }
            if parsed.query().is_some() {
                parsed.set_query(Some("REDACTED"));
            }
            parsed.to_string()
        }
        Err(_) => url.to_owned(),
    }
}

#[derive(Debug)]
struct Inner {
    store: Store,
    configured: Vec<Channel>,
    wake: Notify,
    http: reqwest::Client,
    metrics: Arc<Metrics>,
}

/// Publishes and delivers notifications (cheap to clone).
#[derive(Debug, Clone)]
pub struct Notifier {
    inner: Arc<Inner>,
}

impl Notifier {
    /// A notifier over `store` with the configuration file's channels (checked by the
    /// configuration).
    pub fn new(store: Store, configured: Vec<Channel>, metrics: Arc<Metrics>) -> Notifier {
        let mut builder = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .redirect(reqwest::redirect::Policy::none());
        for der in rustls_native_certs::load_native_certs().certs {
            if let Ok(cert) = reqwest::Certificate::from_der(&der) {
                builder = builder.add_root_certificate(cert);
            }
        }
        let http = builder.build().unwrap_or_default();
        Notifier {
            inner: Arc::new(Inner {
                store,
                configured,
                wake: Notify::new(),
                http,
                metrics,
            }),
        }
    }

    /// Every channel: the configuration file's, then the API's.
    pub async fn channels(&self) -> Result<Vec<(Channel, &'static str)>> {
        let mut all: Vec<(Channel, &'static str)> = self
            .inner
            .configured
            .iter()
            .map(|c| (c.clone(), "config"))
            .collect();
        for (name, body) in self.inner.store.notify_channels().await? {
            match serde_json::from_str::<Channel>(&body) {
                Ok(channel) => all.push((channel, "api")),
                Err(error) => {
                    tracing::warn!(channel = %name, %error, "ignoring an unreadable stored channel")
                }
            }
        }
        Ok(all)
    }

    /// The channels as the API lists them.
    pub async fn channel_views(&self) -> Result<Vec<ChannelView>> {
        Ok(self
            .channels()
            .await?
            .iter()
            .map(|(c, source)| ChannelView::of(c, source))
            .collect())
    }

    /// Stores a channel made through the API (replacing one of its name); true when new.
    /// A name the configuration file uses is a conflict.
    pub async fn save_channel(&self, channel: &Channel) -> Result<bool> {
        channel.check()?;
        if self.is_configured(&channel.name) {
            return Err(Error::coded(
                ApiCode::Conflict,
                format!(
                    "channel {:?} is defined in the configuration file; change it there",
                    channel.name
                ),
            ));
        }
        let body = serde_json::to_string(channel)?;
        self.inner
            .store
            .save_notify_channel(&channel.name, &body, unix_now())
            .await
    }

    /// Deletes a channel made through the API.
    pub async fn delete_channel(&self, name: &str) -> Result<()> {
        if self.is_configured(name) {
            return Err(Error::coded(
                ApiCode::Conflict,
                format!("channel {name:?} is defined in the configuration file; remove it there"),
            ));
        }
        if self.inner.store.delete_notify_channel(name).await? {
            Ok(())
        } else {
            Err(Error::NotFound(format!("no notification channel {name:?}")))
        }
    }

    fn is_configured(&self, name: &str) -> bool {
        self.inner.configured.iter().any(|c| c.name == name)
    }

    /// Queues `message` for every channel that wants its event and severity. The text is
    /// redacted and cut first; a store error is logged, never the caller's failure.
    pub async fn publish(&self, mut message: Message) {
        let redacted = vigil_shared::redact::redact(&message.text).text;
        message.text = match redacted.char_indices().nth(MAX_TEXT) {
            Some((end, _)) => format!("{}…", &redacted[..end]),
            None => redacted,
        };
        let severity = message.severity();
        let channels = match self.channels().await {
            Ok(channels) => channels,
            Err(error) => {
                tracing::warn!(%error, "cannot read the notification channels");
                return;
            }
        };
        let body = match serde_json::to_string(&message) {
            Ok(body) => body,
            Err(error) => {
                tracing::warn!(%error, "cannot encode a notification");
                return;
            }
        };
        let mut queued = 0;
        for (channel, _) in channels {
            if !channel.wants(message.event, severity) {
                continue;
            }
            match self
                .inner
                .store
                .enqueue_delivery(&channel.name, message.event.as_str(), &body, unix_now())
                .await
            {
                Ok(_) => queued += 1,
                Err(error) => {
                    tracing::warn!(channel = %channel.name, %error, "cannot queue a notification")
                }
            }
        }
        if queued > 0 {
            tracing::debug!(
                event = message.event.as_str(),
                channels = queued,
                "queued notifications"
            );
            self.inner.wake.notify_one();
        }
    }

    /// Sends due deliveries until `shutdown`: each is claimed, sent, and recorded as
    /// delivered, retried later, or failed after [`MAX_ATTEMPTS`].
    pub async fn deliver(self, shutdown: CancellationToken) -> Result<()> {
        loop {
            if let Err(error) = self.deliver_due().await {
                tracing::warn!(%error, "notification outbox");
            }
            tokio::select! {
                () = shutdown.cancelled() => return Ok(()),
                () = self.inner.wake.notified() => {}
                () = tokio::time::sleep(POLL) => {}
            }
        }
    }

    async fn deliver_due(&self) -> Result<()> {
        let store = &self.inner.store;
        let due = store
            .claim_due_deliveries(unix_now(), CLAIM_S, BATCH)
            .await?;
        if due.is_empty() {
            return Ok(());
        }
        let channels = self.channels().await?;
        for row in due {
            let channel = channels.iter().find(|(c, _)| c.name == row.channel);
            let outcome = match (channel, serde_json::from_str::<Message>(&row.body)) {
                (None, _) => Err((format!("channel {:?} no longer exists", row.channel), false)),
                (_, Err(error)) => Err((format!("unreadable message: {error}"), false)),
                (Some((channel, _)), Ok(message)) => {
                    deliver::send(&self.inner.http, channel, &row.id, &message)
                        .await
                        .map_err(|e| (e, true))
                }
            };
            let now = unix_now();
            let metrics = &self.inner.metrics;
            match outcome {
                Ok(()) => {
                    store.delivery_sent(&row.id, now).await?;
                    metrics.notification(&row.channel, "delivered");
                    tracing::info!(channel = %row.channel, event = %row.event, delivery = %row.id, "notification delivered");
                }
                Err((error, retry)) => {
                    let attempts = row.attempts + 1;
                    let retry_at =
                        (retry && attempts < MAX_ATTEMPTS).then(|| now + backoff_s(attempts));
                    store
                        .delivery_failed(&row.id, &error, retry_at, now)
                        .await?;
                    let outcome = if retry_at.is_some() {
                        "retrying"
                    } else {
                        "failed"
                    };
                    metrics.notification(&row.channel, outcome);
                    tracing::warn!(channel = %row.channel, event = %row.event, delivery = %row.id, attempts, %error, outcome, "notification not delivered");
                }
            }
        }
        Ok(())
    }
}

/// Seconds to wait after the `attempts`-th failed attempt.
pub fn backoff_s(attempts: i64) -> i64 {
    let doublings = u32::try_from((attempts - 1).clamp(0, 20)).unwrap_or(20);
    FIRST_BACKOFF_S
        .saturating_mul(2_i64.saturating_pow(doublings))
        .min(MAX_BACKOFF_S)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_its_cap() {
        assert_eq!(
            (1..=5).map(backoff_s).collect::<Vec<_>>(),
            [2, 4, 8, 16, 32]
        );
        assert_eq!(backoff_s(14), MAX_BACKOFF_S);
        assert_eq!(backoff_s(100), MAX_BACKOFF_S);
    }

    #[test]
    fn shown_urls_hide_passwords_and_queries() {
        assert_eq!(
            redacted_url("https://u:pw@ntfy.lan/topic?auth=tok"),
            "https://u:REDACTED@ntfy.lan/topic?REDACTED"
        );
        assert_eq!(redacted_url("http://hooks.lan/x"), "http://hooks.lan/x");
    }
}
