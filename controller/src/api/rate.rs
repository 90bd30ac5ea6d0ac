//! Limits per caller: a token bucket per API token (by its name) for each class of costly
//! request (running commands, fan-outs, chat turns), from the `governor` crate. The
//! defaults are far above what a person does by hand and well below what a runaway script
//! does; a refusal is `429 RATE_LIMITED` with `Retry-After`, and is counted in `/metrics`
//! (`vigil_rate_limited_total{class}`).

use std::num::NonZeroU32;
use std::sync::Arc;

use axum::extract::{Extension, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use super::auth::Principal;
use crate::error::ApiCode;
use crate::metrics::Metrics;
use crate::{Error, Result};

/// A class of limited requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// `POST /api/exec`, `/api/exec/write`, `/api/raw-exec`.
    Exec,
    /// `POST /api/exec/fanout`.
    Fanout,
    /// `POST /api/ai/chat`, `POST /v1/chat/completions`.
    Chat,
}

impl Class {
    /// The class's name in `/metrics` and in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Exec => "exec",
            Class::Fanout => "fanout",
            Class::Chat => "chat",
        }
    }
}

pub use crate::config::rate::{
    BURST_SECONDS, DEFAULT_CHAT_PER_S, DEFAULT_EXEC_PER_S, DEFAULT_FANOUT_PER_S, RateConfig,
};

type Limiter = DefaultKeyedRateLimiter<String>;

/// The buckets of every class.
#[derive(Debug, Clone)]
pub struct RateLimits {
    exec: Option<Arc<Limiter>>,
    fanout: Option<Arc<Limiter>>,
    chat: Option<Arc<Limiter>>,
    metrics: Arc<Metrics>,
}

fn limiter(per_s: u32) -> Option<Arc<Limiter>> {
    let rate = NonZeroU32::new(per_s)?;
    let burst = NonZeroU32::new(per_s.saturating_mul(BURST_SECONDS)).unwrap_or(rate);
    Some(Arc::new(RateLimiter::keyed(
        Quota::per_second(rate).allow_burst(burst),
    )))
}

impl RateLimits {
    /// Buckets for `config`, counting refusals in `metrics`.
    pub fn new(config: RateConfig, metrics: Arc<Metrics>) -> Self {
        RateLimits {
            exec: limiter(config.exec_per_s),
            fanout: limiter(config.fanout_per_s),
            chat: limiter(config.chat_per_s),
            metrics,
        }
    }

    /// Takes one request of `class` from `caller`'s bucket, or says when to come back.
    pub fn check(&self, class: Class, caller: &str) -> Result<()> {
        let limiter = match class {
            Class::Exec => &self.exec,
            Class::Fanout => &self.fanout,
            Class::Chat => &self.chat,
        };
        let Some(limiter) = limiter else {
            return Ok(());
        };
        match limiter.check_key(&caller.to_owned()) {
            Ok(()) => Ok(()),
            Err(not_until) => {
                self.metrics.rate_limited(class.as_str());
                let wait = not_until.wait_time_from(DefaultClock::default().now());
                let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                tracing::info!(
                    caller,
                    class = class.as_str(),
                    wait_ms = wait.as_millis(),
                    "rate limited"
                );
                Err(Error::coded_with(
                    ApiCode::RateLimited,
                    format!(
                        "too many {} requests from {caller}; retry in {seconds} s",
                        class.as_str()
                    ),
                    serde_json::json!({ "class": class.as_str(), "retry_after_s": seconds }),
                ))
            }
        }
    }
}

/// Middleware for one route: refuses the request when its caller's bucket is empty.
pub async fn limit(
    State((limits, class)): State<(RateLimits, Class)>,
    Extension(principal): Extension<Principal>,
    request: Request,
    next: Next,
) -> Result<Response> {
    limits.check(class, &principal.name)?;
    Ok(next.run(request).await)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_passes_then_the_caller_waits_and_others_do_not() {
        let limits = RateLimits::new(
            RateConfig {
                exec_per_s: 2,
                fanout_per_s: 0,
                chat_per_s: 1,
            },
            Arc::new(Metrics::new()),
        );
        for _ in 0..(2 * BURST_SECONDS) {
            limits.check(Class::Exec, "script").unwrap();
        }
        let refused = limits.check(Class::Exec, "script").unwrap_err();
        assert_eq!(refused.api_code(), "RATE_LIMITED");
        assert_eq!(refused.http_status().as_u16(), 429);
        assert_eq!(refused.retry_after_s(), Some(1));
        limits.check(Class::Exec, "person").unwrap();
        limits.check(Class::Chat, "script").unwrap();
        for _ in 0..1000 {
            limits.check(Class::Fanout, "script").unwrap();
        }
        let text = limits.metrics.render(0);
        assert!(
            text.contains("vigil_rate_limited_total{class=\"exec\"} 1"),
            "{text}"
        );
    }
}
