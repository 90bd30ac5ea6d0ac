//! The replica's lease, renewed every [`RENEW_EVERY`] until shutdown. A renewal that does
//! not succeed before [`LEASE`] less [`FENCE_MARGIN`] has passed since the last good one
//! was sent fences the replica: it closes its agent streams (they reconnect to another
//! replica) and refuses new streams and new work until a renewal succeeds again. Since the
//! lease is counted from before the renewal was sent, the replica has stopped before the
//! database's clock lets the others treat it as dead.
//!
//! After each renewal the replica catches up with the others: streams of its own that a
//! newer stream elsewhere replaced are closed, the list of agents other replicas hold is
//! read again, and inventories are shared (`super::inventory`). Separately
//! ([`Cluster::watch_agents`]), agents enrolled, revoked or given hidden paths through
//! other replicas are picked up, at once when notified.

use std::collections::HashMap;
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};
use vigil_proto::agent::v1::Goodbye;
use vigil_shared::ids::AgentId;

use super::{Cluster, FENCE_MARGIN, FORGET_AFTER, LEASE, RENEW_EVERY};
use crate::{Error, Result};

/// How often agents enrolled or revoked elsewhere are looked for.
const REFRESH_EVERY: Duration = Duration::from_secs(5);
/// How often lapsed replicas are looked for.
const FORGET_EVERY: Duration = Duration::from_secs(60);

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

impl Cluster {
    /// Renews this replica's lease once (or registers it); answers when it lapses.
    pub async fn renew(&self) -> Result<i64> {
        let state = if self.is_draining() {
            "draining"
        } else {
            "serving"
        };
        let held = i64::try_from(self.agents().sessions().all().len()).unwrap_or(i64::MAX);
        self.store()
            .renew_replica(self.record(), held, state, millis(LEASE))
            .await
    }

    /// Registers this replica at start: an error here stops the start.
    pub async fn register(&self) -> Result<()> {
        self.renew().await.map(|_| ()).map_err(|error| {
            Error::Config(format!("cannot register this controller replica: {error}"))
        })
    }

    /// Renews the lease until `shutdown`, fencing and unfencing as renewals fail and
    /// succeed; then removes this replica's row (its streams are closed by then).
    pub async fn keep_lease(self, shutdown: CancellationToken) -> Result<()> {
        let mut held_until = Instant::now() + LEASE - FENCE_MARGIN;
        let mut tick = tokio::time::interval(RENEW_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut forgot = Instant::now();
        let mut shared = super::inventory::SharedInventory::default();
        loop {
            tokio::select! {
                () = shutdown.cancelled() => break,
                _ = tick.tick() => {}
            }
            let sent = Instant::now();
            // Wait for the renewal no longer than the lease is held (a fenced replica
            // keeps trying, a renewal at a time).
            let deadline = held_until.max(sent + RENEW_EVERY);
            let renewed = tokio::select! {
                () = shutdown.cancelled() => break,
                renewed = tokio::time::timeout_at(deadline, self.renew()) => renewed,
            };
            match renewed {
                Ok(Ok(_)) => {
                    held_until = sent + LEASE - FENCE_MARGIN;
                    if self.set_fenced(false) {
                        info!(replica = %self.id(), "renewed the lease again: serving");
                    }
                }
                Ok(Err(error)) => {
                    warn!(replica = %self.id(), %error, "could not renew the lease");
                    if Instant::now() >= held_until {
                        self.fence("the lease could not be renewed");
                    }
                    continue;
                }
                Err(_) => {
                    self.fence("the lease renewal did not answer in time");
                    continue;
                }
            }
            if let Err(error) = self.catch_up().await {
                warn!(%error, "could not read what the other replicas hold");
            }
            if self.forwarder().is_some()
                && let Err(error) = self.share_inventories(&mut shared).await
            {
                warn!(%error, "could not share inventories with the other replicas");
            }
            if forgot.elapsed() >= FORGET_EVERY {
                forgot = Instant::now();
                match self
                    .store()
                    .forget_lapsed_replicas(millis(FORGET_AFTER))
                    .await
                {
                    Ok(0) => {}
                    Ok(gone) => info!(gone, "forgot replicas whose lease lapsed long ago"),
                    Err(error) => warn!(%error, "could not forget lapsed replicas"),
                }
            }
        }
        if let Err(error) = self.store().remove_replica(self.id()).await {
            warn!(%error, "could not remove this replica's row on the way out");
        }
        Ok(())
    }

    /// Picks up what other replicas changed about agents (enrollments, revocations,
    /// hidden paths) when `wake` is notified (`crate::store::notify::AGENTS`) and every
    /// [`REFRESH_EVERY`], until `shutdown`.
    pub async fn watch_agents(
        self,
        wake: std::sync::Arc<tokio::sync::Notify>,
        shutdown: CancellationToken,
    ) -> Result<()> {
        let mut tick = tokio::time::interval(REFRESH_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return Ok(()),
                _ = tick.tick() => {}
                () = wake.notified() => {}
            }
            match self.agents().refresh_from_store().await {
                Ok((0, 0)) => {}
                Ok((added, revoked)) => {
                    info!(
                        added,
                        revoked, "picked up agents enrolled or revoked elsewhere"
                    );
                }
                Err(error) => warn!(%error, "could not read the agents other replicas wrote"),
            }
            match self.agents().refresh_hidden_paths().await {
                Ok(0) => {}
                Ok(changed) => info!(
                    changed,
                    "picked up hidden paths set through another replica"
                ),
                Err(error) => warn!(%error, "could not read the hidden paths other replicas set"),
            }
        }
    }

    /// Fences this replica: its agent streams are closed (the agents move to another
    /// replica) and it takes no new work until a renewal succeeds.
    fn fence(&self, why: &str) {
        if self.set_fenced(true) {
            return;
        }
        let held = self.agents().sessions().all().len();
        warn!(replica = %self.id(), why, agents = held,
              "fenced: this replica stopped taking agent streams and work");
        self.agents().sessions().close_all(&Goodbye {
            reason: "this controller replica lost its database lease; connect to another".into(),
            retry: true,
        });
    }

    /// Closes the streams a newer stream (on another replica, or a newer one here) replaced,
    /// and reads which agents the others hold.
    async fn catch_up(&self) -> Result<()> {
        let owners = self.store().live_agent_owners().await?;
        let holders: HashMap<AgentId, (&str, u64)> = owners
            .iter()
            .map(|o| (o.agent, (o.replica_id.as_str(), o.conn)))
            .collect();
        for session in self.agents().sessions().all() {
            let Some(&(replica, conn)) = holders.get(&session.agent()) else {
                continue;
            };
            if replica != self.id() || conn != session.conn() {
                debug!(agent = %session.agent(), "a newer stream of this agent is on another replica");
                session.close(Some(Goodbye {
                    reason: "a newer stream of this agent is held by another replica".into(),
                    retry: true,
                }));
            }
        }
        self.agents().remote().replace(self.id(), owners);
        Ok(())
    }
}
