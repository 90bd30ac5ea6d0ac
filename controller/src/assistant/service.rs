//! [`Assistant`]: the chat service. It keeps each session's in-memory state (gates and
//! resolved context, never stored), allows one turn at a time per session, starts turns as
//! tasks that outlive the client's connection, and cancels them on request.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Deserialize;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::events::ChatEvent;
use super::state::SessionState;
use super::turn::Turn;
use crate::access::Principal;
use crate::approvals::{Approvals, ControlLevel};
use crate::clock::unix_now;
use crate::error::ApiCode;
use crate::exec::ExecService;
use crate::llm::ModelProvider;
use crate::store::Store;
use crate::{Error, Result};

/// Longest chat message, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 32 * 1024;
/// Most mentions in one message.
pub const MAX_MENTIONS: usize = 20;

/// The body of `POST /api/ai/chat`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChatBody {
    /// Continue this session (a new one when absent).
    #[serde(default)]
    pub session_id: Option<String>,
    /// The user's message; one that starts with `/` runs a tool directly.
    pub message: String,
    /// Resources the user picked (ids, names or aliases).
    #[serde(default)]
    pub mentions: Vec<String>,
    /// Narrow the session's control level.
    #[serde(default)]
    pub control_level: Option<ControlLevel>,
}

#[derive(Debug)]
struct Inner {
    provider: Option<Arc<dyn ModelProvider>>,
    exec: ExecService,
    approvals: Approvals,
    ceiling: ControlLevel,
    token_budget: u64,
    external: crate::mcp::external::ExternalTools,
    sessions: Mutex<HashMap<String, Arc<tokio::sync::Mutex<SessionState>>>>,
    turns: Mutex<HashMap<String, CancellationToken>>,
}

/// The chat service (cheap to clone).
#[derive(Debug, Clone)]
pub struct Assistant {
    inner: Arc<Inner>,
}

/// A session's running turn, here and in the store; [`TurnSlot::release`] ends both (a
/// slot dropped unreleased ends them in the background).
struct TurnSlot {
    assistant: Assistant,
    session_id: String,
    released: bool,
}

impl TurnSlot {
    /// Ends the turn: the session takes another, on any replica, once this returns.
    async fn release(mut self) {
        self.released = true;
        self.assistant.turns().remove(&self.session_id);
        let replica = self.assistant.approvals().replica().to_owned();
        let ended = self
            .assistant
            .store()
            .end_turn(&self.session_id, &replica)
            .await;
        if let Err(error) = ended {
            tracing::warn!(session = %self.session_id, %error, "could not record the end of a turn");
        }
    }
}

impl Drop for TurnSlot {
    fn drop(&mut self) {
        if self.released {
            return;
        }
        self.assistant.turns().remove(&self.session_id);
        let (store, session) = (self.assistant.store().clone(), self.session_id.clone());
        let replica = self.assistant.approvals().replica().to_owned();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(error) = store.end_turn(&session, &replica).await {
                    tracing::warn!(%session, %error, "could not record the end of a turn");
                }
            });
        }
    }
}

impl Assistant {
    /// The service: `provider` is `None` when no model is configured (direct mode still
    /// works), `ceiling` the controller's control level, `external` the MCP servers whose
    /// tools the model is offered besides Vigil's.
    pub fn new(
        provider: Option<Arc<dyn ModelProvider>>,
        exec: ExecService,
        approvals: Approvals,
        ceiling: ControlLevel,
        token_budget: u64,
        external: crate::mcp::external::ExternalTools,
    ) -> Self {
        Assistant {
            inner: Arc::new(Inner {
                provider,
                exec,
                approvals,
                ceiling,
                token_budget,
                external,
                sessions: Mutex::new(HashMap::new()),
                turns: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The model, when one is configured.
    pub fn provider(&self) -> Option<&Arc<dyn ModelProvider>> {
        self.inner.provider.as_ref()
    }

    /// Tokens a session may use (0: no limit).
    pub fn token_budget(&self) -> u64 {
        self.inner.token_budget
    }

    /// The external MCP servers' tools.
    pub fn external(&self) -> &crate::mcp::external::ExternalTools {
        &self.inner.external
    }

    /// The exec service.
    pub fn exec(&self) -> &ExecService {
        &self.inner.exec
    }

    /// The approvals service.
    pub fn approvals(&self) -> &Approvals {
        &self.inner.approvals
    }

    /// The database.
    pub fn store(&self) -> &Store {
        self.inner.exec.agents().store()
    }

    fn turns(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.inner
            .turns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn session_state(&self, id: &str) -> Arc<tokio::sync::Mutex<SessionState>> {
        let mut sessions = self
            .inner
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        sessions.entry(id.to_owned()).or_default().clone()
    }

    /// Forgets a session's in-memory state (it was deleted).
    pub fn forget_session(&self, id: &str) {
        let mut sessions = self
            .inner
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        sessions.remove(id);
    }

    /// Starts a turn: checks the body, finds or creates the session, refuses a second turn
    /// (409), and runs the turn in a task. Events arrive on the receiver; dropping it does
    /// not stop the turn.
    pub async fn start_turn(
        &self,
        caller: Principal,
        body: ChatBody,
    ) -> Result<mpsc::UnboundedReceiver<ChatEvent>> {
        self.start_turn_with_history(caller, body, Vec::new()).await
    }

    /// [`Assistant::start_turn`] in a new session that first gets `earlier` (role, text)
    /// messages: the conversation a stateless client (the OpenAI-compatible endpoint) sends.
    pub async fn start_turn_with_history(
        &self,
        caller: Principal,
        body: ChatBody,
        earlier: Vec<(String, String)>,
    ) -> Result<mpsc::UnboundedReceiver<ChatEvent>> {
        let message = body.message.trim().to_owned();
        if message.is_empty() {
            return Err(Error::InvalidInput("message is empty".into()));
        }
        if body.message.len() > MAX_MESSAGE_BYTES {
            return Err(Error::coded_with(
                ApiCode::PayloadTooLarge,
                format!("message is over {MAX_MESSAGE_BYTES} bytes"),
                serde_json::json!({ "max_bytes": MAX_MESSAGE_BYTES }),
            ));
        }
        if body.mentions.len() > MAX_MENTIONS {
            return Err(Error::InvalidInput(format!(
                "more than {MAX_MENTIONS} mentions"
            )));
        }
        let store = self.store();
        let session = match &body.session_id {
            Some(id) => store
                .get_session(id)
                .await?
                .ok_or_else(|| Error::NotFound(format!("no chat session {id:?}")))?,
            None => {
                let id = uuid::Uuid::new_v4().to_string();
                let level =
                    ControlLevel::for_session(body.control_level, self.inner.ceiling, caller.role)?;
                let title: String = message.chars().take(80).collect();
                let session = store
                    .create_session(&id, &title, &caller.name, level.as_str(), unix_now())
                    .await?;
                for (role, text) in &earlier {
                    store
                        .append_message(&id, role, text, None, unix_now())
                        .await?;
                }
                session
            }
        };
        let stored: ControlLevel = session
            .control_level
            .parse()
            .unwrap_or(ControlLevel::ReadOnly);
        let level = ControlLevel::for_session(
            Some(body.control_level.unwrap_or(stored).min(stored)),
            self.inner.ceiling,
            caller.role,
        )?;
        let cancel = CancellationToken::new();
        self.reserve_turn(&session.id, &cancel).await?;
        let slot = TurnSlot {
            assistant: self.clone(),
            session_id: session.id.clone(),
            released: false,
        };
        // The turn's events reach the client through a relay that holds `done` back until
        // the session's state is stored and the turn let go of the session: a client that
        // sends the next message on `done`, through any replica, finds the session free
        // and its state current.
        let (tx, mut relayed) = mpsc::unbounded_channel::<ChatEvent>();
        let (client, rx) = mpsc::unbounded_channel();
        let (settled, settled_rx) = tokio::sync::oneshot::channel::<()>();
        let metrics = self.exec().metrics().clone();
        let origin = if caller.name == crate::findings::investigate::INVESTIGATOR {
            "investigation"
        } else {
            "chat"
        };
        tokio::spawn(async move {
            let mut settled_rx = Some(settled_rx);
            while let Some(event) = relayed.recv().await {
                if let ChatEvent::Done {
                    input_tokens,
                    output_tokens,
                    ..
                } = &event
                {
                    metrics.model_tokens(*input_tokens, *output_tokens, origin);
                    if let Some(settled_rx) = settled_rx.take() {
                        let _ = settled_rx.await;
                    }
                }
                // A client that went away does not stop the turn.
                let _ = client.send(event);
            }
        });
        let _ = tx.send(ChatEvent::Session {
            session_id: session.id.clone(),
            control_level: level.as_str().into(),
        });
        let used =
            u64::try_from(session.input_tokens.saturating_add(session.output_tokens)).unwrap_or(0);
        // The last turn may have run on another replica: its stored state is the session's.
        let state = self.session_state(&session.id);
        if let Some(stored) = store.load_session_state(&session.id).await? {
            match serde_json::from_str(&stored) {
                Ok(stored) => *state.lock().await = SessionState::from_stored(stored),
                Err(error) => {
                    tracing::warn!(session = %session.id, %error, "ignoring an unreadable stored session state");
                }
            }
        }
        let saved = (state.clone(), store.clone(), session.id.clone());
        let turn = Turn::new(
            self.clone(),
            session.id.clone(),
            used,
            state,
            level,
            caller,
            tx,
            cancel,
        );
        let span = tracing::info_span!("turn", session = %session.id);
        tokio::spawn(tracing::Instrument::instrument(
            async move {
                turn.run(message, body.mentions).await;
                let (state, store, id) = saved;
                let stored = state.lock().await.to_stored();
                match serde_json::to_string(&stored) {
                    Ok(json) => {
                        if let Err(error) = store.save_session_state(&id, &json, unix_now()).await {
                            tracing::warn!(%error, "could not store the session's state");
                        }
                    }
                    Err(error) => tracing::warn!(%error, "could not encode the session's state"),
                }
                slot.release().await;
                let _ = settled.send(());
            },
            span,
        ));
        Ok(rx)
    }

    /// Reserves `session`'s turn, here and across replicas; `CONFLICT` while another turn
    /// runs.
    async fn reserve_turn(&self, session: &str, cancel: &CancellationToken) -> Result<()> {
        let conflict = || {
            Error::coded_with(
                ApiCode::Conflict,
                format!("a turn is already running in session {session}; wait for it or cancel it"),
                serde_json::json!({ "session_id": session }),
            )
        };
        {
            let mut turns = self.turns();
            if turns.contains_key(session) {
                return Err(conflict());
            }
            turns.insert(session.to_owned(), cancel.clone());
        }
        let claimed = self
            .store()
            .claim_turn(session, self.approvals().replica(), unix_now())
            .await;
        match claimed {
            Ok(true) => Ok(()),
            Ok(false) => {
                self.turns().remove(session);
                Err(conflict())
            }
            Err(error) => {
                self.turns().remove(session);
                Err(error)
            }
        }
    }

    /// Cancels the running turn of a session (stops the model, kills its commands) and
    /// withdraws the session's pending approvals. True when a turn was running.
    pub async fn cancel(&self, session_id: &str) -> Result<bool> {
        if self.store().get_session(session_id).await?.is_none() {
            return Err(Error::NotFound(format!("no chat session {session_id:?}")));
        }
        let token = self.turns().get(session_id).cloned();
        let running = if let Some(token) = &token {
            tracing::info!(session = session_id, "cancelling the turn");
            token.cancel();
            true
        } else {
            // A turn on another replica: woken by the notification (or looking by itself).
            let asked = self.store().request_turn_cancel(session_id).await?;
            if asked {
                self.store()
                    .notify(crate::store::notify::CANCELS, session_id)
                    .await;
            }
            asked
        };
        self.approvals().withdraw_session(session_id).await?;
        Ok(running)
    }

    /// Cancels the turns here that a cancel sent to another replica asked for.
    pub async fn take_cancels(&self) -> Result<()> {
        for session in self
            .store()
            .turns_to_cancel(self.approvals().replica())
            .await?
        {
            let token = self.turns().get(&session).cloned();
            if let Some(token) = token {
                tracing::info!(%session, "cancelling the turn, as asked through another replica");
                token.cancel();
            }
        }
        Ok(())
    }

    /// [`Assistant::take_cancels`] when `wake` is notified and every two seconds, until
    /// `shutdown`.
    pub async fn watch_cancels(
        self,
        wake: Arc<tokio::sync::Notify>,
        shutdown: CancellationToken,
    ) -> Result<()> {
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(2));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return Ok(()),
                _ = tick.tick() => {}
                () = wake.notified() => {}
            }
            if let Err(error) = self.take_cancels().await {
                tracing::warn!(%error, "could not look for cancels sent through other replicas");
            }
        }
    }

    /// True while a turn runs in the session.
    pub fn is_running(&self, session_id: &str) -> bool {
        self.turns().contains_key(session_id)
    }
}
