//! Forwarding a remote command's output under the request's limits: `Started`, stdout and
//! stderr chunks as they arrive, one `Finished`. The sources (a websocket exec, a log
//! stream) feed [`Piece`]s into a channel; whoever holds the connection stops it when the
//! pump returns early.

use crate::exec::{Outcome, Run, send_finished};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::mpsc;
use tokio::time::sleep_until;
use vigil_proto::agent::v1::{ExecEvent, Started, exec_event};

/// How long output is still read after the exit status arrived.
const DRAIN_GRACE: Duration = Duration::from_secs(1);
/// The signal reported for a command the agent stopped (as for a killed process group).
pub const KILLED: i32 = 9;

/// One thing a remote command produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Stdout(Vec<u8>),
    Stderr(Vec<u8>),
    /// The command ended: its exit code, `None` when the platform did not say.
    Exit(Option<i32>),
}

/// Forward everything read from `reader` as pieces of at most `CHUNK_BYTES`, made by
/// `wrap`; stops at the end, on a read error or when the pump is gone.
pub async fn forward(
    mut reader: impl AsyncRead + Unpin,
    wrap: fn(Vec<u8>) -> Piece,
    tx: mpsc::Sender<Piece>,
) -> std::io::Result<()> {
    let mut buf = vec![0u8; crate::exec::CHUNK_BYTES];
    loop {
        let n = reader.read(&mut buf).await?;
        if n == 0 || tx.send(wrap(buf[..n].to_vec())).await.is_err() {
            return Ok(());
        }
    }
}

/// Send `Started`, forward pieces until the command ended and its output was drained (or
/// the timeout, cancel, output cap or a closed link stopped it), then send `Finished`.
///
/// Returns the outcome and whether the pump stopped the command early (the caller must
/// then drop the connection). A stopped command is reported as killed by signal 9 unless
/// `cut_exit` gives the exit code to report when only the output cap stopped it.
pub async fn pump(
    run: &Run<'_>,
    started: Instant,
    mut pieces: mpsc::Receiver<Piece>,
    cut_exit: Option<i32>,
) -> (Outcome, bool) {
    let event = |kind| ExecEvent {
        request_id: run.request_id.to_owned(),
        kind: Some(kind),
    };
    let mut link_open = run
        .events
        .send(event(exec_event::Kind::Started(Started {})))
        .await
        .is_ok();
    let deadline = tokio::time::Instant::from_std(started + run.limits.timeout);
    let mut out = Outcome::default();
    let mut stopped = !link_open;
    let mut exit: Option<Option<i32>> = None;
    let mut drain_until: Option<tokio::time::Instant> = None;
    while !stopped {
        let grace = drain_until.unwrap_or(deadline);
        tokio::select! {
            _ = run.cancel.cancelled(), if exit.is_none() => {
                out.cancelled = true;
                stopped = true;
            }
            _ = sleep_until(deadline), if exit.is_none() => {
                out.timed_out = true;
                stopped = true;
            }
            _ = sleep_until(grace), if drain_until.is_some() => break,
            piece = pieces.recv() => match piece {
                None => break,
                Some(Piece::Exit(code)) => {
                    exit = Some(code);
                    drain_until = Some(tokio::time::Instant::now() + DRAIN_GRACE);
                }
                Some(Piece::Stdout(bytes)) => {
                    stopped = !send_output(run, &mut out, &mut link_open, deadline, bytes, exec_event::Kind::StdoutChunk).await;
                }
                Some(Piece::Stderr(bytes)) => {
                    stopped = !send_output(run, &mut out, &mut link_open, deadline, bytes, exec_event::Kind::StderrChunk).await;
                }
            },
        }
    }
    out.duration = started.elapsed();
    match exit {
        Some(code) => out.exit_code = code,
        None if stopped
            && out.truncated
            && !out.cancelled
            && !out.timed_out
            && cut_exit.is_some() =>
        {
            out.exit_code = cut_exit;
        }
        None if stopped => out.signal = Some(KILLED),
        None => {}
    }
    if link_open {
        send_finished(run.request_id, run.events, &out).await;
    }
    (out, stopped && exit.is_none())
}

/// Send one chunk within the output cap; `false` when the command must stop (the cap was
/// reached, or the chunk could not be sent before the cancel, the deadline or a closed link).
async fn send_output(
    run: &Run<'_>,
    out: &mut Outcome,
    link_open: &mut bool,
    deadline: tokio::time::Instant,
    mut bytes: Vec<u8>,
    kind: fn(Vec<u8>) -> exec_event::Kind,
) -> bool {
    let room = run.limits.output_cap.saturating_sub(out.output_bytes);
    let mut keep_going = true;
    if bytes.len() as u64 > room {
        bytes.truncate(usize::try_from(room).unwrap_or(usize::MAX));
        out.truncated = true;
        keep_going = false;
    }
    if bytes.is_empty() {
        return keep_going;
    }
    out.output_bytes += bytes.len() as u64;
    let event = ExecEvent {
        request_id: run.request_id.to_owned(),
        kind: Some(kind(bytes)),
    };
    // Biased: output that is ready to go is sent even when the cancel just came.
    let sent = tokio::select! {
        biased;
        r = run.events.send(event) => r.is_ok(),
        _ = run.cancel.cancelled() => false,
        _ = sleep_until(deadline) => false,
    };
    if !sent {
        *link_open = !run.events.is_closed();
        out.cancelled |= run.cancel.is_cancelled();
        out.timed_out |= !out.cancelled && *link_open;
        return false;
    }
    keep_going
}
