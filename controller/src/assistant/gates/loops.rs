//! Loop detection: the same call (tool and canonical arguments) more than
//! [`MAX_REPEATS`] times in one turn is refused with `LOOP_DETECTED`.

use std::collections::HashMap;

use super::GateBlock;
use crate::tools::call::ToolCall;
use crate::tools::envelope::ErrorCode;

/// Times one call may run in a turn.
pub const MAX_REPEATS: u32 = 3;

/// Counts calls within a turn.
#[derive(Debug, Clone, Default)]
pub struct LoopGuard {
    seen: HashMap<String, u32>,
}

impl LoopGuard {
    /// Counts `call`; refuses it past [`MAX_REPEATS`].
    pub fn check(&mut self, call: &ToolCall) -> Result<(), GateBlock> {
        let count = self.seen.entry(call.canonical()).or_insert(0);
        *count += 1;
        if *count <= MAX_REPEATS {
            return Ok(());
        }
        Err(GateBlock::new(
            "loop_detected",
            ErrorCode::LoopDetected,
            format!(
                "this exact {} {} call already ran {MAX_REPEATS} times in this turn",
                call.name(),
                call.action()
            ),
            "use the results you have, try something different, or answer",
        ))
    }

    /// A new turn.
    pub fn reset_turn(&mut self) {
        self.seen.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::call::parse_call;

    #[test]
    fn the_fourth_identical_call_is_a_loop() {
        let mut guard = LoopGuard::default();
        let call = parse_call(
            "read",
            r#"{"action":"exec","resource_id":"x","command":"uptime"}"#,
        )
        .unwrap();
        let reordered = parse_call(
            "read",
            r#"{"command":"uptime","action":"exec","resource_id":"x"}"#,
        )
        .unwrap();
        guard.check(&call).unwrap();
        guard.check(&reordered).unwrap();
        guard.check(&call).unwrap();
        assert_eq!(
            guard.check(&reordered).unwrap_err().code,
            ErrorCode::LoopDetected
        );
        let other = parse_call(
            "read",
            r#"{"action":"exec","resource_id":"x","command":"df -h"}"#,
        )
        .unwrap();
        guard.check(&other).unwrap();
        guard.reset_turn();
        guard.check(&call).unwrap();
    }
}
