//! The API's request budgets per token and class, as settings (the keys `rate_exec_per_s`,
//! `rate_fanout_per_s`, `rate_chat_per_s` and their `--rate-*` flags); `crate::api::rate`
//! enforces them.

/// Requests per second a token may make in each class (0: no limit); each bucket holds
/// [`BURST_SECONDS`] seconds' worth, so a short burst passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateConfig {
    /// Commands per second.
    pub exec_per_s: u32,
    /// Fan-outs per second.
    pub fanout_per_s: u32,
    /// Chat turns per second.
    pub chat_per_s: u32,
}

/// Default commands per second per token.
pub const DEFAULT_EXEC_PER_S: u32 = 20;
/// Default fan-outs per second per token.
pub const DEFAULT_FANOUT_PER_S: u32 = 1;
/// Default chat turns per second per token.
pub const DEFAULT_CHAT_PER_S: u32 = 2;
/// A bucket holds this many seconds of requests.
pub const BURST_SECONDS: u32 = 10;

impl Default for RateConfig {
    fn default() -> Self {
        RateConfig {
            exec_per_s: DEFAULT_EXEC_PER_S,
            fanout_per_s: DEFAULT_FANOUT_PER_S,
            chat_per_s: DEFAULT_CHAT_PER_S,
        }
    }
}
