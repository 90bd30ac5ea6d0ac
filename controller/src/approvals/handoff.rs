//! Approvals across replicas. An approval runs on the replica it was requested on (its
//! turn may be waiting there for the output): a decision made through another replica is
//! only recorded there (and notified, `crate::store::notify`), and the requesting replica,
//! woken by the notification or looking by itself every two seconds, tells its waiting
//! turn and runs the write. When that replica is gone (before the decision or after it),
//! the deciding one or any other live replica runs it, within the approval's lifetime.
//! Either way the claim in the store lets it run once.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::Approvals;
use crate::Result;
use crate::clock::unix_now;

/// How often a replica looks for decisions made through the others without being woken.
const LOOK_EVERY: Duration = Duration::from_secs(2);

impl Approvals {
    /// True when an approved `id` should run on this replica: a turn here waits for it,
    /// or it was not requested on another live replica.
    pub(super) async fn runs_here(&self, id: &str) -> bool {
        if self.waiters().contains_key(id) {
            return true;
        }
        match self.store().live_approval_waiter(id).await {
            Ok(Some(replica)) if replica != self.inner.replica => {
                tracing::debug!(approval = id, %replica, "the write runs on the replica it was requested on");
                false
            }
            Ok(_) => true,
            Err(error) => {
                tracing::warn!(approval = id, %error, "cannot tell where an approval runs; running it here");
                true
            }
        }
    }

    /// Tells waiting turns here of decisions made through other replicas, and runs the
    /// approved writes requested here.
    pub async fn take_decisions(&self) -> Result<()> {
        let waiting: Vec<String> = self.waiters().keys().cloned().collect();
        for id in waiting {
            if self.told().contains(&id) {
                continue;
            }
            let Some(row) = self.store().get_approval(&id, unix_now()).await? else {
                continue;
            };
            let decision = match row.status.as_str() {
                "approved" => "approved",
                "denied" => "denied",
                "withdrawn" => "withdrawn",
                _ => continue,
            };
            self.tell_decision(&id, decision, row.reason.clone());
        }
        let since = unix_now().saturating_sub(self.inner.ttl_s);
        for id in self
            .store()
            .approved_unrun_for(&self.inner.replica, since)
            .await?
        {
            let approvals = self.clone();
            tokio::spawn(async move { approvals.run(&id).await });
        }
        Ok(())
    }

    /// [`Approvals::take_decisions`] when `wake` is notified and every two seconds, and
    /// [`Approvals::settle_lost_runs`] every few seconds, until `shutdown`.
    pub async fn watch(self, wake: Arc<Notify>, shutdown: CancellationToken) -> Result<()> {
        let mut tick = tokio::time::interval(LOOK_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut ticks = 0u32;
        loop {
            let ticked = tokio::select! {
                () = shutdown.cancelled() => return Ok(()),
                _ = tick.tick() => true,
                () = wake.notified() => false,
            };
            if let Err(error) = self.take_decisions().await {
                tracing::warn!(%error, "could not look for decisions made through other replicas");
            }
            if ticked {
                ticks = ticks.wrapping_add(1);
                if ticks.is_multiple_of(3)
                    && let Err(error) = self.settle_lost_runs().await
                {
                    tracing::warn!(%error, "could not look for writes lost with a replica");
                }
            }
        }
    }
}
