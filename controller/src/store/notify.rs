//! Waking other replicas at once through PostgreSQL's `LISTEN/NOTIFY`: a replica that
//! records something another one may be waiting for (an approval decided, a turn's cancel)
//! sends a notification on a channel with the row's key as payload; every replica listens
//! on a connection of its own and wakes the task that looks for such rows. Notifications
//! can be lost (the listening connection dropped), so the tasks also look every few
//! seconds. SQLite serves one controller: nothing is sent or heard.

use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::PgListener;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::{Backend, Store};

/// An approval was decided or withdrawn (payload: its id).
pub const APPROVALS: &str = "vigil_approval";
/// A turn's cancel was asked of another replica (payload: the session id).
pub const CANCELS: &str = "vigil_turn_cancel";
/// An agent was revoked or its hidden paths changed (payload: the agent id).
pub const AGENTS: &str = "vigil_agent";

impl Store {
    /// Sends `payload` on `channel` to every listening replica (PostgreSQL only). A
    /// failure is logged: the listeners also look by themselves.
    pub async fn notify(&self, channel: &str, payload: &str) {
        if self.backend() != Backend::Postgres {
            return;
        }
        let sent = sqlx::query("SELECT pg_notify($1, $2)")
            .bind(channel)
            .bind(payload)
            .execute(self.pool())
            .await;
        if let Err(error) = sent {
            tracing::warn!(channel, %error, "could not notify the other replicas");
        }
    }

    /// Listens on each channel of `wake` until `shutdown` and wakes its [`Notify`] for
    /// every notification (PostgreSQL only; reconnects after a lost connection).
    pub fn wake_on(&self, wake: Vec<(&'static str, Arc<Notify>)>, shutdown: CancellationToken) {
        if self.backend() != Backend::Postgres {
            return;
        }
        let url = self.url.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    ended = listen(&url, &wake) => {
                        if let Err(error) = ended {
                            tracing::warn!(%error, "lost the database's notifications; listening again");
                        }
                    }
                }
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    () = tokio::time::sleep(Duration::from_secs(1)) => {}
                }
            }
        });
    }
}

async fn listen(url: &str, wake: &[(&'static str, Arc<Notify>)]) -> Result<(), sqlx::Error> {
    let mut listener = PgListener::connect(url).await?;
    listener
        .listen_all(wake.iter().map(|(channel, _)| *channel))
        .await?;
    loop {
        let notification = listener.recv().await?;
        if let Some((_, notify)) = wake.iter().find(|(c, _)| *c == notification.channel()) {
            notify.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::all_stores;

    #[tokio::test]
    async fn a_notification_wakes_the_listener() {
        for (store, cleanup) in all_stores().await {
            if store.backend() != Backend::Postgres {
                continue;
            }
            let wake = Arc::new(Notify::new());
            let shutdown = CancellationToken::new();
            store.wake_on(vec![("vigil_test_wake", wake.clone())], shutdown.clone());
            // The listener may not listen yet: notify until it hears one.
            let heard = tokio::time::timeout(Duration::from_secs(20), async {
                loop {
                    store.notify("vigil_test_wake", "row-1").await;
                    if tokio::time::timeout(Duration::from_millis(200), wake.notified())
                        .await
                        .is_ok()
                    {
                        break;
                    }
                }
            })
            .await;
            assert!(heard.is_ok(), "no notification arrived");
            shutdown.cancel();
            cleanup.finish().await.unwrap();
        }
    }
}
