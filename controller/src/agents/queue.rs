//! The queue in front of each agent: at most `limit` commands run on an agent at once
//! (the agent itself refuses more); the next ones wait here, up to `bound` of them, and are
//! let through fairly: one caller at a time, in turn, so one busy session or one fan-out
//! cannot starve the others. A waiter that is dropped (its caller went away, or its
//! deadline passed) leaves the queue at once. Past the bound the answer is `AGENT_BUSY`
//! (429 with `Retry-After`).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

use crate::Error;

pub use crate::config::queue::{DEFAULT_AGENT_CONCURRENCY, DEFAULT_AGENT_QUEUE, QueueLimits};

#[derive(Debug, Default)]
struct State {
    running: usize,
    waiting: usize,
    next_id: u64,
    /// Each caller's waiters, oldest first.
    by_caller: HashMap<Arc<str>, VecDeque<(u64, oneshot::Sender<()>)>>,
    /// Callers with waiters, in the order they get their next turn.
    turns: VecDeque<Arc<str>>,
}

/// One agent's queue.
#[derive(Debug)]
pub struct AgentQueue {
    limits: QueueLimits,
    state: Mutex<State>,
}

/// A place to run: while it is held, the command counts against the agent's limit.
#[derive(Debug)]
pub struct Slot {
    queue: Arc<AgentQueue>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.queue.release();
    }
}

/// Removes a waiter that gave up; if it was let through in the meantime, passes its slot on.
struct Waiting<'q> {
    queue: &'q Arc<AgentQueue>,
    caller: Arc<str>,
    id: u64,
    done: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let removed = {
            let mut state = self.queue.state();
            let removed = state.by_caller.get_mut(&self.caller).and_then(|waiters| {
                let at = waiters.iter().position(|(id, _)| *id == self.id)?;
                waiters.remove(at)
            });
            if removed.is_some() {
                state.waiting -= 1;
                if state
                    .by_caller
                    .get(&self.caller)
                    .is_some_and(VecDeque::is_empty)
                {
                    state.by_caller.remove(&self.caller);
                    state.turns.retain(|c| *c != self.caller);
                }
            }
            removed.is_some()
        };
        if !removed {
            // Let through just as it gave up: the slot it was given goes to the next one.
            self.queue.release();
        }
    }
}

impl AgentQueue {
    /// An empty queue.
    pub fn new(limits: QueueLimits) -> Arc<Self> {
        Arc::new(AgentQueue {
            limits: QueueLimits {
                concurrency: limits.concurrency.max(1),
                bound: limits.bound,
            },
            state: Mutex::new(State::default()),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Commands running now.
    pub fn running(&self) -> usize {
        self.state().running
    }

    /// Commands waiting now.
    pub fn waiting(&self) -> usize {
        self.state().waiting
    }

    /// A slot for `caller`'s command: at once when one is free and nobody waits, else after
    /// the commands ahead of it in the caller's turn. `AGENT_BUSY` when the queue is full.
    /// Dropping the future leaves the queue.
    pub async fn acquire(self: &Arc<Self>, caller: &str) -> Result<Slot, Error> {
        let (caller, id, rx) = {
            let mut state = self.state();
            if state.running < self.limits.concurrency && state.waiting == 0 {
                state.running += 1;
                return Ok(Slot {
                    queue: self.clone(),
                });
            }
            if state.waiting >= self.limits.bound {
                return Err(Error::AgentRejected {
                    code: "AGENT_BUSY".into(),
                    reason: format!(
                        "the agent runs {} commands and {} more wait, the most the queue holds; retry shortly",
                        self.limits.concurrency, state.waiting
                    ),
                });
            }
            let caller: Arc<str> = Arc::from(caller);
            state.next_id += 1;
            let id = state.next_id;
            let (tx, rx) = oneshot::channel();
            state.waiting += 1;
            let waiters = state.by_caller.entry(caller.clone()).or_default();
            waiters.push_back((id, tx));
            if waiters.len() == 1 {
                state.turns.push_back(caller.clone());
            }
            (caller, id, rx)
        };
        let mut waiting = Waiting {
            queue: self,
            caller,
            id,
            done: false,
        };
        match rx.await {
            Ok(()) => {
                waiting.done = true;
                Ok(Slot {
                    queue: self.clone(),
                })
            }
            // The sender is dropped only with the queue: not reachable while we hold it.
            Err(_) => Err(Error::Network("the agent's queue was dropped".into())),
        }
    }

    /// A slot was given back: hand it to the next caller in turn, or free it.
    fn release(&self) {
        let mut state = self.state();
        while let Some(caller) = state.turns.pop_front() {
            let Some(waiters) = state.by_caller.get_mut(&caller) else {
                continue;
            };
            let next = waiters.pop_front();
            let more = !waiters.is_empty();
            if more {
                state.turns.push_back(caller.clone());
            } else {
                state.by_caller.remove(&caller);
            }
            if let Some((_, tx)) = next {
                state.waiting -= 1;
                if tx.send(()).is_ok() {
                    return; // the slot passes on; `running` is unchanged
                }
            }
        }
        state.running = state.running.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests;
