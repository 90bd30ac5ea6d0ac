//! The limits of each agent's command queue, as settings (`agent_concurrency`,
//! `agent_queue` and their flags); `crate::agents::queue` applies them.

/// Commands one agent runs at once unless configured otherwise (the agent's own limit).
pub const DEFAULT_AGENT_CONCURRENCY: usize = 8;
/// Commands that may wait for one agent unless configured otherwise.
pub const DEFAULT_AGENT_QUEUE: usize = 256;

/// How many commands run and wait per agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueLimits {
    /// Commands running at once.
    pub concurrency: usize,
    /// Commands waiting at most.
    pub bound: usize,
}

impl Default for QueueLimits {
    fn default() -> Self {
        QueueLimits {
            concurrency: DEFAULT_AGENT_CONCURRENCY,
            bound: DEFAULT_AGENT_QUEUE,
        }
    }
}
