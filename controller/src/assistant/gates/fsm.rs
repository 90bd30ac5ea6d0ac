//! The session FSM. RESOLVING until something is resolved (a write there is left to strict
//! resolution, which names the missing resource); READING while investigating;
//! VERIFYING after a successful write, until the first successful read (then back to
//! READING, so write → read → write works: failure modes 2 and 4 of docs/design.md §9).
//! Tools are judged by their class (tool and action), never by command text (failure mode
//! 1).

use super::GateBlock;
use crate::tools::class::ToolClass;
use crate::tools::envelope::ErrorCode;

/// Where a session stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FsmState {
    /// Nothing resolved yet.
    #[default]
    Resolving,
    /// Investigating.
    Reading,
    /// A write succeeded and no read has verified it yet.
    Verifying,
}

impl FsmState {
    /// The metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            FsmState::Resolving => "resolving",
            FsmState::Reading => "reading",
            FsmState::Verifying => "verifying",
        }
    }
}

/// The FSM of one session.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct SessionFsm {
    state: FsmState,
    /// What the unverified write was, for the verification prompt.
    last_write: Option<String>,
}

impl SessionFsm {
    /// The current state.
    pub fn state(&self) -> FsmState {
        self.state
    }

    /// May a call of `class` run now?
    pub fn check_tool(&self, class: ToolClass) -> Result<(), GateBlock> {
        match (self.state, class) {
            (FsmState::Verifying, ToolClass::Write) => Err(GateBlock::new(
                "fsm_tool",
                ErrorCode::FsmBlocked,
                format!(
                    "the last write ({}) is not verified yet: no further write until a read checks it",
                    self.last_write.as_deref().unwrap_or("a change")
                ),
                "run a read (read, docker logs, metrics, …) that shows whether the last change worked",
            )),
            _ => Ok(()),
        }
    }

    /// Something was resolved (a user's mention or a query).
    pub fn on_resolved(&mut self) {
        if self.state == FsmState::Resolving {
            self.state = FsmState::Reading;
        }
    }

    /// A call of `class` succeeded (`what` describes a write).
    pub fn on_success(&mut self, class: ToolClass, what: Option<&str>) {
        match class {
            ToolClass::Resolve => self.on_resolved(),
            ToolClass::Read => {
                if self.state == FsmState::Verifying {
                    self.complete_verification();
                } else {
                    self.on_resolved();
                }
            }
            ToolClass::Write => {
                self.state = FsmState::Verifying;
                self.last_write = what.map(str::to_owned);
            }
        }
    }

    fn complete_verification(&mut self) {
        self.state = FsmState::Reading;
        self.last_write = None;
    }

    /// May the model give its final answer now? While VERIFYING, no: the error is the
    /// factual demand to inject.
    pub fn check_final_answer(&self) -> Result<(), String> {
        if self.state != FsmState::Verifying {
            return Ok(());
        }
        Err(format!(
            "(Vigil) Before answering, verify the last change ({}) with a read that shows its effect \
             (its status, the file, the service, the logs). Then answer from what the read shows.",
            self.last_write.as_deref().unwrap_or("the last write")
        ))
    }

    /// Back to the start.
    pub fn reset(&mut self) {
        *self = SessionFsm::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ToolClass::*;

    fn resolved() -> SessionFsm {
        let mut fsm = SessionFsm::default();
        fsm.on_success(Resolve, None);
        fsm
    }

    #[test]
    fn regression_logs_investigation_many_reads_stay_reading() {
        // Failure mode 1: reads never deadlock the session, whatever their commands.
        let mut fsm = resolved();
        for _ in 0..25 {
            fsm.check_tool(Read).unwrap();
            fsm.on_success(Read, None);
            assert_eq!(fsm.state(), FsmState::Reading);
        }
        fsm.check_final_answer().unwrap();
    }

    #[test]
    fn regression_write_read_write_read_answer() {
        // Failure modes 2 and 4: verification completes on the first read, every cycle.
        let mut fsm = resolved();
        for cycle in 0..3 {
            fsm.check_tool(Write).unwrap();
            fsm.on_success(Write, Some("systemctl restart nginx"));
            assert_eq!(fsm.state(), FsmState::Verifying, "cycle {cycle}");
            let blocked = fsm.check_tool(Write).unwrap_err();
            assert_eq!(blocked.code, ErrorCode::FsmBlocked);
            assert!(blocked.message.contains("systemctl restart nginx"));
            assert!(fsm.check_final_answer().unwrap_err().contains("verify"));
            fsm.on_success(Read, None);
            assert_eq!(fsm.state(), FsmState::Reading);
            fsm.check_final_answer().unwrap();
        }
    }

    #[test]
    fn a_failed_write_needs_no_verification() {
        let mut fsm = SessionFsm::default();
        fsm.check_tool(Read).unwrap();
        fsm.on_resolved();
        fsm.check_tool(Write).unwrap();
        // A failed write leaves the state alone (on_success is not called).
        assert_eq!(fsm.state(), FsmState::Reading);
        fsm.reset();
        assert_eq!(fsm.state(), FsmState::Resolving);
    }
}
