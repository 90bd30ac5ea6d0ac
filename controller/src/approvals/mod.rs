//! The approval lifecycle of writes (docs/design.md §9.2, docs/assistant.md).
//! [`Approvals::request`] stores a pending approval and hands the turn a [`Pending`] to
//! wait on; [`Approvals::decide`] records an operator's decision (atomically, one winner),
//! and an approval runs in [`Approvals::run`]: claimed once in the database, signed with
//! the grant key for that approval, agent, target and command, dispatched in WRITE mode
//! through the exec service, and its outcome written on the approval, in the audit chain,
//! and to the waiting turn or, when no turn waits any more, as a message of its session.

mod grant;
mod handoff;
mod level;
mod run;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::mpsc;

pub use grant::sign_grant;
pub use level::ControlLevel;
pub use run::WriteResult;

use crate::Result;
use crate::audit::{self, Entry};
use crate::clock::unix_now;
use crate::exec::{ExecService, OutputStream};
use crate::pki::Pki;
use crate::store::Store;
use crate::store::approvals::{ApprovalRow, ApprovalStatus, Decision, NewApproval, RunState};
use crate::store::notify;

/// Default seconds before a pending approval expires (`VIGIL_APPROVAL_TIMEOUT_S`).
pub const DEFAULT_APPROVAL_TIMEOUT_S: u64 = 300;

/// What a waiting turn hears about its approval.
#[derive(Debug, Clone, PartialEq)]
pub enum WriteEvent {
    /// Decided: `approved`, `denied` or `withdrawn`, with the reason given.
    Resolved {
        decision: &'static str,
        reason: Option<String>,
    },
    /// Output of the running write.
    Output(OutputStream, String),
    /// The write ran (or could not).
    Finished(WriteResult),
}

type Waiters = Mutex<HashMap<String, mpsc::UnboundedSender<WriteEvent>>>;

#[derive(Debug)]
struct Inner {
    exec: ExecService,
    pki: Arc<Pki>,
    ttl_s: i64,
    waiters: Waiters,
    /// Approvals whose decision the waiting turn was told (once, whichever replica
    /// decided).
    told: Mutex<std::collections::HashSet<String>>,
    /// The replica whose runs this service claims (empty for a controller in a test).
    replica: String,
    /// The external MCP servers an approved tool call goes to.
    external: crate::mcp::external::ExternalTools,
    /// Tells the notification channels that an approval waits, with the web page's link
    /// (set once the notifier exists).
    announce: std::sync::OnceLock<(crate::notify::Notifier, String)>,
}

/// The approvals service (cheap to clone).
#[derive(Debug, Clone)]
pub struct Approvals {
    inner: Arc<Inner>,
}

/// A turn's wait for one approval: decisions, output and the outcome arrive here. Dropped,
/// it stops listening; the approval stays and, approved later, still runs.
#[derive(Debug)]
pub struct Pending {
    /// The approval as created.
    pub row: ApprovalRow,
    events: mpsc::UnboundedReceiver<WriteEvent>,
    approvals: Approvals,
}

impl Pending {
    /// The next event; `None` when the service forgot this approval.
    pub async fn next(&mut self) -> Option<WriteEvent> {
        self.events.recv().await
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.approvals.waiters().remove(&self.row.id);
        self.approvals.told().remove(&self.row.id);
    }
}

impl Approvals {
    /// The service: writes go through `exec`, grants are signed with the grant key of
    /// `pki`, approvals expire after `ttl_s` seconds, and the runs it claims carry the id
    /// of `replica` (so the others record them as unknown if it goes away mid-run).
    /// An approved call of an external MCP tool goes to its server in `external`.
    pub fn new(
        exec: ExecService,
        pki: Arc<Pki>,
        ttl_s: u64,
        replica: &str,
        external: crate::mcp::external::ExternalTools,
    ) -> Self {
        Approvals {
            inner: Arc::new(Inner {
                exec,
                pki,
                ttl_s: i64::try_from(ttl_s).unwrap_or(i64::MAX),
                waiters: Mutex::new(HashMap::new()),
                told: Mutex::default(),
                replica: replica.to_owned(),
                external,
                announce: std::sync::OnceLock::new(),
            }),
        }
    }

    /// Announces every approval that waits for a person to `notifier`, linking to the web
    /// page at `base_url` (`scheme://host[:port]`).
    pub fn set_notifier(&self, notifier: crate::notify::Notifier, base_url: String) {
        let _ = self.inner.announce.set((notifier, base_url));
    }

    /// The replica this service runs on (empty for a controller in a test).
    pub fn replica(&self) -> &str {
        &self.inner.replica
    }

    fn store(&self) -> &Store {
        self.inner.exec.agents().store()
    }

    fn waiters(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, mpsc::UnboundedSender<WriteEvent>>> {
        self.inner
            .waiters
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn told(&self) -> std::sync::MutexGuard<'_, std::collections::HashSet<String>> {
        self.inner
            .told
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Tells the waiting turn here (if any) how approval `id` was decided, once.
    fn tell_decision(&self, id: &str, decision: &'static str, reason: Option<String>) {
        if !self.waiters().contains_key(id) || !self.told().insert(id.to_owned()) {
            return;
        }
        self.notify(id, WriteEvent::Resolved { decision, reason });
    }

    fn notify(&self, id: &str, event: WriteEvent) -> bool {
        let waiter = self.waiters().get(id).cloned();
        waiter.is_some_and(|tx| tx.send(event).is_ok())
    }

    /// The approvals with `status` (every one when `None`), as of now.
    pub async fn list(&self, status: Option<ApprovalStatus>) -> Result<Vec<ApprovalRow>> {
        self.store().list_approvals(status, unix_now()).await
    }

    /// One approval, as of now.
    pub async fn get(&self, id: &str) -> Result<Option<ApprovalRow>> {
        self.store().get_approval(id, unix_now()).await
    }

    /// Seconds a pending approval lives.
    pub fn ttl_s(&self) -> i64 {
        self.inner.ttl_s
    }

    /// Stores a pending approval (its expiry is the service's) and starts listening to it.
    pub async fn request(&self, new: NewApproval) -> Result<Pending> {
        let pending = self.store_request(new).await?;
        if let Some((notifier, base)) = self.inner.announce.get() {
            let row = &pending.row;
            let link = format!("{}/#approvals/{}", base.trim_end_matches('/'), row.id);
            let text = format!(
                "Approval needed: {} wants to run `{}` on {}\n\nDecide: {link}",
                row.created_by,
                row.command,
                row.resource_id
                    .as_deref()
                    .or(row.target.as_deref())
                    .unwrap_or("a host")
            );
            notifier
                .publish(crate::notify::Message {
                    event: crate::notify::NotifyEvent::ApprovalNeeded,
                    finding: None,
                    approval: Some(serde_json::json!({
                        "id": row.id, "command": row.command, "resource_id": row.resource_id,
                        "requested_by": row.created_by, "risk": row.risk, "url": link,
                    })),
                    text,
                })
                .await;
        }
        Ok(pending)
    }

    async fn store_request(&self, mut new: NewApproval) -> Result<Pending> {
        new.ttl_s = self.inner.ttl_s;
        let row = self.store().create_approval(&new, unix_now()).await?;
        tracing::info!(approval = %row.id, session = ?row.session_id, agent = ?row.agent, "approval requested");
        let mut entry = Entry::new(&row.created_by, "approval.request", "pending")
            .command(&row.command)
            .approval(&row.id);
        entry.agent.clone_from(&row.agent);
        entry.target.clone_from(&row.target);
        audit::record(self.store(), entry).await;
        if !self.inner.replica.is_empty() {
            self.store()
                .set_approval_waiter(&row.id, &self.inner.replica)
                .await?;
        }
        Ok(self.listen(row))
    }

    fn listen(&self, row: ApprovalRow) -> Pending {
        let (tx, events) = mpsc::unbounded_channel();
        self.waiters().insert(row.id.clone(), tx);
        Pending {
            row,
            events,
            approvals: self.clone(),
        }
    }

    /// Runs a write with no person (the `autonomous` level): the approval is stored and
    /// decided by `by` at once, so it is audited and runs exactly like an approved one.
    pub async fn autonomous(&self, new: NewApproval, by: &str) -> Result<Pending> {
        let pending = self.store_request(new).await?;
        self.decide(
            &pending.row.id,
            Decision::Approve,
            by,
            Some("autonomous control level"),
        )
        .await?;
        Ok(pending)
    }

    /// Decides an approval (one winner among racing decisions), audits and counts it. An
    /// approval runs in the background; a denial is told to the waiting turn.
    pub async fn decide(
        &self,
        id: &str,
        decision: Decision,
        by: &str,
        reason: Option<&str>,
    ) -> Result<ApprovalRow> {
        let (action, label) = match decision {
            Decision::Approve => ("approval.approve", "approved"),
            Decision::Deny => ("approval.deny", "denied"),
        };
        if decision == Decision::Approve {
            self.refuse_self_approval(id, by).await?;
        }
        let result = self
            .store()
            .decide_approval(id, decision, by, reason, unix_now())
            .await;
        let outcome = match &result {
            Ok(_) => label.to_owned(),
            Err(e) => e.api_code().to_ascii_lowercase(),
        };
        self.inner.exec.metrics().approval(&outcome);
        let row = result?;
        tracing::info!(approval = %row.id, by, outcome = %outcome, "approval decided");
        let mut entry = Entry::new(by, action, &outcome)
            .command(&row.command)
            .approval(&row.id);
        entry.agent.clone_from(&row.agent);
        entry.target.clone_from(&row.target);
        audit::record(self.store(), entry).await;
        self.tell_decision(&row.id, label, reason.map(str::to_owned));
        self.store().notify(notify::APPROVALS, &row.id).await;
        if decision == Decision::Approve && self.runs_here(&row.id).await {
            let approvals = self.clone();
            let id = row.id.clone();
            tokio::spawn(async move { approvals.run(&id).await });
        }
        Ok(row)
    }

    /// Refuses the approval of a write an MCP client requested by the token that approves:
    /// the client holds that token, and an AI client that can make HTTP requests must not
    /// be able to approve its own write. A person decides it with a token of their own.
    async fn refuse_self_approval(&self, id: &str, by: &str) -> Result<()> {
        let Some(row) = self.get(id).await? else {
            return Ok(());
        };
        if crate::access::requested_through_mcp_by(&row.created_by, by) {
            tracing::warn!(
                approval = id,
                token = by,
                "refusing an MCP client's approval of its own write"
            );
            self.inner.exec.metrics().approval("self_approval_refused");
            return Err(crate::Error::coded_with(
                crate::error::ApiCode::Forbidden,
                format!(
                    "approval {id} was requested through MCP with the token {by:?}; that token \
                     may not approve it. Approve it with a token of your own (create one with \
                     `vigil-controller apitoken create`) and give the MCP client its own token"
                ),
                serde_json::json!({ "approval_id": id, "requested_by": row.created_by }),
            ));
        }
        Ok(())
    }

    /// Withdraws the pending approvals of a cancelled session's turn.
    pub async fn withdraw_session(&self, session_id: &str) -> Result<Vec<String>> {
        let ids = self.store().withdraw_session_approvals(session_id).await?;
        for id in &ids {
            tracing::info!(approval = %id, session = session_id, "approval withdrawn");
            let entry = Entry::new("assistant", "approval.withdraw", "withdrawn").approval(id);
            audit::record(self.store(), entry).await;
            self.tell_decision(id, "withdrawn", Some("the turn was cancelled".into()));
            self.store().notify(notify::APPROVALS, id).await;
        }
        Ok(ids)
    }

    /// Records as unknown (never re-run) every write still running on a replica that is no
    /// longer live: the controller stopped, was killed, or lost its lease mid-run.
    pub async fn settle_lost_runs(&self) -> Result<()> {
        for row in self.store().runs_of_lost_replicas().await? {
            tracing::warn!(approval = %row.id, "a write was running on a controller that stopped: outcome unknown");
            let outcome =
                "outcome unknown: the controller stopped while the write ran; it was not run again";
            self.store()
                .finish_run(&row.id, RunState::Unknown, None, outcome)
                .await?;
            self.inner.exec.metrics().write_run("unknown");
            let entry = Entry::new("controller", "approval.run", "unknown")
                .command(&row.command)
                .approval(&row.id);
            audit::record(self.store(), entry).await;
            run::append_outcome(self.store(), &row, outcome).await;
        }
        Ok(())
    }

    /// After a restart: a write that was running on a replica that is gone has an unknown
    /// outcome (recorded, never re-run); an approval decided but not yet run, within its
    /// lifetime, runs now.
    pub async fn recover(&self) -> Result<()> {
        self.settle_lost_runs().await?;
        let now = unix_now();
        for row in self.store().approvals_in_run_state(RunState::None).await? {
            let decided = row.decided_at.unwrap_or(0);
            if now.saturating_sub(decided) <= self.inner.ttl_s {
                let approvals = self.clone();
                tokio::spawn(async move { approvals.run(&row.id).await });
            } else if self.store().claim_run(&row.id, &self.inner.replica).await? {
                let outcome = "not run: the controller stopped after the approval and the approval is now too old to run";
                self.store()
                    .finish_run(&row.id, RunState::Done, None, outcome)
                    .await?;
                run::append_outcome(self.store(), &row, outcome).await;
            }
        }
        Ok(())
    }
}
