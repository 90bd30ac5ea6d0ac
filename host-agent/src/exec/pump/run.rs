//! The pump's loop: output under the cap, the deadline, the cancel token, one kill, the
//! drain, and the outcome.

use super::{Exit, KILLED, Kill, Outcome, Piece, Pump, Stop, send_finished};
use crate::exec::CHUNK_BYTES;
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep_until};
use tracing::{debug, warn};
use vigil_proto::agent::v1::{ExecEvent, Started, exec_event::Kind};

/// What the pump knows about one command so far.
#[derive(Debug, Default)]
struct State {
    out: Outcome,
    link_open: bool,
    /// Why the pump stopped the command, once it did.
    stopped: Option<Stop>,
    /// The kill action reported killing something.
    killed: bool,
    exit: Option<Exit>,
}

impl Pump<'_> {
    /// Send `Started`, forward `pieces` until the command ended and its output was read
    /// (or it was stopped and the drain passed), then send `Finished`. `started` is when
    /// the command started; the deadline counts from it.
    pub async fn run(
        &self,
        started: Instant,
        mut pieces: mpsc::Receiver<Piece>,
        kill: &mut dyn Kill,
    ) -> Outcome {
        let deadline = started + self.limits.timeout;
        let mut st = State {
            link_open: self.send(Kind::Started(Started {})).await,
            ..State::default()
        };
        let mut pending = (!st.link_open).then_some(Stop::Link);
        let mut until: Option<Instant> = None;
        loop {
            if let Some(why) = pending.take()
                && st.stopped.is_none()
                && st.exit.is_none()
            {
                self.stop(&mut st, why, kill).await;
                until = Some(Instant::now() + self.drain);
            }
            let running = st.stopped.is_none() && st.exit.is_none();
            tokio::select! {
                _ = self.cancel.cancelled(), if running => {
                    st.out.cancelled = true;
                    pending = Some(Stop::Cancel);
                }
                _ = sleep_until(deadline), if running => {
                    st.out.timed_out = true;
                    pending = Some(Stop::Timeout);
                }
                _ = sleep_until(until.unwrap_or(deadline)), if until.is_some() => break,
                piece = pieces.recv() => match piece {
                    None => break,
                    Some(Piece::Exit(exit)) => {
                        st.exit = Some(exit);
                        let drained = Instant::now() + self.drain;
                        until = Some(until.map_or(drained, |u| u.min(drained)));
                    }
                    Some(Piece::Note(text)) => self.note(&mut st, &text).await,
                    Some(Piece::Stdout(bytes)) => {
                        pending = self.output(&mut st, deadline, &bytes, Kind::StdoutChunk).await;
                    }
                    Some(Piece::Stderr(bytes)) => {
                        pending = self.output(&mut st, deadline, &bytes, Kind::StderrChunk).await;
                    }
                },
            }
        }
        let out = self.settle(st, started);
        if out.link_open_at_end {
            send_finished(self.request_id, self.events, &out.outcome).await;
        }
        out.outcome
    }

    /// Call the kill action, the one time it is called for this command.
    async fn stop(&self, st: &mut State, why: Stop, kill: &mut dyn Kill) {
        st.stopped = Some(why);
        debug!(request = %self.request_id, reason = ?why, "stopping the command");
        match kill.kill(why).await {
            Ok(killed) => st.killed = killed,
            Err(error) => {
                warn!(request = %self.request_id, reason = ?why, %error, "could not stop the command; it may still be running");
                let text = format!("could not stop the command ({error}); it may still be running");
                self.note(st, &text).await;
                st.out.kill_error = Some(error.to_string());
            }
        }
    }

    /// The outcome's status and flags once the loop is over.
    fn settle(&self, st: State, started: Instant) -> Settled {
        let mut out = st.out;
        out.duration = started.elapsed();
        let only_cap = st.stopped == Some(Stop::Cap) && !out.cancelled && !out.timed_out;
        if let Some(exit) = st.exit {
            out.timed_out |= exit.timed_out;
            out.truncated |= exit.truncated;
        }
        match (st.killed, st.exit) {
            (true, _) if only_cap && self.cut_exit.is_some() => out.exit_code = self.cut_exit,
            (true, _) => out.signal = Some(KILLED),
            (false, Some(exit)) => {
                out.exit_code = exit.code;
                out.signal = exit.signal;
            }
            (false, None) => {}
        }
        Settled {
            outcome: out,
            link_open_at_end: st.link_open,
        }
    }

    /// Send `bytes` as chunks within the cap; the reason to stop the command, if any
    /// (the cap was reached, or a chunk could not be sent before the cancel, the
    /// deadline or a closed link).
    async fn output(
        &self,
        st: &mut State,
        deadline: Instant,
        bytes: &[u8],
        kind: fn(Vec<u8>) -> Kind,
    ) -> Option<Stop> {
        if st.out.truncated || !st.link_open {
            return None;
        }
        for piece in bytes.chunks(CHUNK_BYTES) {
            let room = self.limits.output_cap.saturating_sub(st.out.output_bytes);
            let keep = usize::try_from(room).unwrap_or(usize::MAX).min(piece.len());
            let cut = keep < piece.len();
            if keep > 0 {
                st.out.output_bytes += keep as u64;
                let event = self.event(kind(piece[..keep].to_vec()));
                // Biased: output that is ready to go is sent even after a stop.
                let sent = tokio::select! {
                    biased;
                    r = self.events.send(event) => r.is_ok(),
                    _ = self.cancel.cancelled() => false,
                    _ = sleep_until(deadline) => false,
                };
                if !sent {
                    st.link_open = !self.events.is_closed();
                    st.out.cancelled |= self.cancel.is_cancelled();
                    st.out.timed_out |= !st.out.cancelled && st.link_open;
                    return Some(Stop::Link);
                }
            }
            if cut {
                st.out.truncated = true;
                return Some(Stop::Cap);
            }
        }
        None
    }

    /// A line of the agent's own on stderr, not counted against the cap.
    async fn note(&self, st: &mut State, text: &str) {
        if st.link_open {
            let line = format!("vigil-agent: {text}\n").into_bytes();
            st.link_open = self.send(Kind::StderrChunk(line)).await;
        }
    }

    async fn send(&self, kind: Kind) -> bool {
        self.events.send(self.event(kind)).await.is_ok()
    }

    fn event(&self, kind: Kind) -> ExecEvent {
        ExecEvent {
            request_id: self.request_id.to_owned(),
            kind: Some(kind),
        }
    }
}

/// The outcome, and whether the link can still take the `Finished` event.
struct Settled {
    outcome: Outcome,
    link_open_at_end: bool,
}
