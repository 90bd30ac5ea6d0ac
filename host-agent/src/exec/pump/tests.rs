//! The pump under paused time: no real sleeping, every deadline exact.

use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::time::Instant;
use vigil_proto::agent::v1::exec_event::Kind;

/// A kill action that counts its calls, remembers why and when, and can close the
/// command's output (as a killed process closes its pipes).
#[derive(Debug, Default)]
struct Probe {
    calls: Arc<AtomicUsize>,
    stops: Arc<Mutex<Vec<(Stop, Instant)>>>,
    fails: Option<String>,
    /// The command's last sender, dropped by the kill.
    tx: Option<mpsc::Sender<Piece>>,
}

impl Kill for Probe {
    fn kill(&mut self, why: Stop) -> BoxFuture<'_, Result<bool, ExecError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut stops) = self.stops.lock() {
            stops.push((why, Instant::now()));
        }
        let result = match &self.fails {
            Some(error) => Err(ExecError::NotStopped(error.clone())),
            None => {
                self.tx = None;
                Ok(true)
            }
        };
        Box::pin(async move { result })
    }
}

fn limits(timeout_s: u64, output_cap: u64) -> Limits {
    Limits {
        timeout: Duration::from_secs(timeout_s),
        output_cap,
    }
}

/// Run the pump over `pieces` (already queued; `close` drops the sender after them) and
/// collect every event.
async fn pump(
    limits: Limits,
    cancel: CancellationToken,
    pieces: Vec<Piece>,
    close: bool,
    probe: &mut Probe,
) -> (Outcome, Vec<Kind>) {
    let (tx, rx) = mpsc::channel(64);
    for piece in pieces {
        tx.try_send(piece).unwrap();
    }
    if !close {
        probe.tx = Some(tx);
    }
    pump_rx(limits, cancel, rx, probe).await
}

async fn pump_rx(
    limits: Limits,
    cancel: CancellationToken,
    rx: mpsc::Receiver<Piece>,
    probe: &mut Probe,
) -> (Outcome, Vec<Kind>) {
    let (events, mut received) = mpsc::channel(64);
    let outcome = Pump::new("req", &events, limits, cancel)
        .run(Instant::now(), rx, probe)
        .await;
    drop(events);
    let mut kinds = Vec::new();
    while let Some(event) = received.recv().await {
        assert_eq!(event.request_id, "req");
        kinds.extend(event.kind);
    }
    (outcome, kinds)
}

fn finished(kinds: &[Kind]) -> Finished {
    match kinds.last() {
        Some(Kind::Finished(f)) => *f,
        other => panic!("last event is not Finished: {other:?}"),
    }
}

fn stdout(kinds: &[Kind]) -> Vec<u8> {
    kinds
        .iter()
        .filter_map(|k| match k {
            Kind::StdoutChunk(b) => Some(b.as_slice()),
            _ => None,
        })
        .flatten()
        .copied()
        .collect()
}

#[tokio::test(start_paused = true)]
async fn output_before_the_end_is_delivered_in_order_and_nothing_is_killed() {
    let mut probe = Probe::default();
    let pieces = vec![
        Piece::Stdout(b"one ".to_vec()),
        Piece::Stderr(b"two ".to_vec()),
        Piece::Stdout(b"three".to_vec()),
        Piece::Exit(Exit::code(3)),
    ];
    let (out, kinds) = pump(
        limits(30, 100),
        CancellationToken::new(),
        pieces,
        true,
        &mut probe,
    )
    .await;
    assert_eq!(
        kinds[..4],
        [
            Kind::Started(vigil_proto::agent::v1::Started {}),
            Kind::StdoutChunk(b"one ".to_vec()),
            Kind::StderrChunk(b"two ".to_vec()),
            Kind::StdoutChunk(b"three".to_vec()),
        ]
    );
    let done = finished(&kinds);
    assert_eq!(done.status, Some(finished::Status::ExitCode(3)));
    assert!(!done.truncated);
    assert_eq!(probe.calls.load(Ordering::SeqCst), 0);
    assert_eq!(
        (out.exit_code, out.signal, out.output_bytes),
        (Some(3), None, 13)
    );
    assert!(!out.timed_out && !out.cancelled && out.kill_error.is_none());
}

#[tokio::test(start_paused = true)]
async fn the_cap_truncates_and_kills_exactly_once() {
    let mut probe = Probe::default();
    let pieces = vec![
        Piece::Stdout(b"abc".to_vec()),
        Piece::Stderr(b"defg".to_vec()),
        Piece::Stdout(b"hij".to_vec()),
        Piece::Note("a note still goes out".to_owned()),
    ];
    let (out, kinds) = pump(
        limits(30, 5),
        CancellationToken::new(),
        pieces,
        false,
        &mut probe,
    )
    .await;
    assert_eq!(stdout(&kinds), b"abc");
    assert!(kinds.contains(&Kind::StderrChunk(b"de".to_vec())));
    assert!(kinds.contains(&Kind::StderrChunk(
        b"vigil-agent: a note still goes out\n".to_vec()
    )));
    assert_eq!(probe.calls.load(Ordering::SeqCst), 1);
    assert_eq!(probe.stops.lock().unwrap()[0].0, Stop::Cap);
    let done = finished(&kinds);
    assert!(done.truncated);
    assert_eq!(done.status, Some(finished::Status::Signal(KILLED)));
    assert_eq!(out.output_bytes, 5);
    assert!(out.truncated && !out.timed_out && !out.cancelled);
}

#[tokio::test(start_paused = true)]
async fn big_output_is_sent_in_chunks_of_at_most_16_kib() {
    let mut probe = Probe::default();
    let pieces = vec![
        Piece::Stdout(vec![b'x'; 40_000]),
        Piece::Exit(Exit::code(0)),
    ];
    let (_, kinds) = pump(
        limits(30, 1 << 20),
        CancellationToken::new(),
        pieces,
        true,
        &mut probe,
    )
    .await;
    let sizes: Vec<usize> = kinds
        .iter()
        .filter_map(|k| match k {
            Kind::StdoutChunk(b) => Some(b.len()),
            _ => None,
        })
        .collect();
    assert_eq!(sizes, [CHUNK_BYTES, CHUNK_BYTES, 40_000 - 2 * CHUNK_BYTES]);
}

#[tokio::test(start_paused = true)]
async fn the_timeout_kills_once_at_the_deadline() {
    let mut probe = Probe::default();
    let (tx, rx) = mpsc::channel(4);
    probe.tx = Some(tx.clone());
    let start = Instant::now();
    // Output just before the deadline is still delivered.
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(29)).await;
        let _ = tx.send(Piece::Stdout(b"late".to_vec())).await;
    });
    let (out, kinds) = pump_rx(limits(30, 100), CancellationToken::new(), rx, &mut probe).await;
    assert_eq!(stdout(&kinds), b"late");
    assert_eq!(probe.calls.load(Ordering::SeqCst), 1);
    let (why, at) = probe.stops.lock().unwrap()[0];
    assert_eq!((why, at - start), (Stop::Timeout, Duration::from_secs(30)));
    assert!(out.timed_out && !out.cancelled);
    assert_eq!(out.signal, Some(KILLED));
    assert_eq!(out.duration, Duration::from_secs(30));
    assert_eq!(finished(&kinds).duration_ms, 30_000);
}

#[tokio::test(start_paused = true)]
async fn cancel_kills_once_even_when_the_command_ignores_it() {
    // The kill does not end the output: the pump still stops after its drain.
    let mut probe = Probe::default();
    let (tx, rx) = mpsc::channel(4);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let start = Instant::now();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(5)).await;
        trigger.cancel();
        let _ = tx.send(Piece::Stdout(b"after".to_vec())).await;
        tokio::time::sleep(Duration::from_secs(3600)).await;
        drop(tx);
    });
    let (out, kinds) = pump_rx(limits(30, 100), cancel, rx, &mut probe).await;
    assert_eq!(probe.calls.load(Ordering::SeqCst), 1);
    let (why, at) = probe.stops.lock().unwrap()[0];
    assert_eq!((why, at - start), (Stop::Cancel, Duration::from_secs(5)));
    assert!(out.cancelled && !out.timed_out);
    assert_eq!(out.duration, Duration::from_secs(5) + DRAIN_GRACE);
    assert_eq!(
        finished(&kinds).status,
        Some(finished::Status::Signal(KILLED))
    );
}

#[tokio::test(start_paused = true)]
async fn a_failed_kill_is_reported() {
    let mut probe = Probe {
        fails: Some("EPERM".to_owned()),
        ..Probe::default()
    };
    let (out, kinds) = pump(
        limits(2, 100),
        CancellationToken::new(),
        Vec::new(),
        false,
        &mut probe,
    )
    .await;
    assert_eq!(probe.calls.load(Ordering::SeqCst), 1);
    assert_eq!(out.kill_error.as_deref(), Some("EPERM"));
    assert!(out.timed_out);
    assert_eq!((out.exit_code, out.signal), (None, None));
    let note = kinds.iter().any(|k| {
        matches!(k, Kind::StderrChunk(b) if String::from_utf8_lossy(b).contains("could not stop the command (EPERM)"))
    });
    assert!(note, "{kinds:?}");
    assert_eq!(finished(&kinds).status, None);
}

#[tokio::test(start_paused = true)]
async fn a_closed_link_kills_at_once() {
    let mut probe = Probe::default();
    let (tx, rx) = mpsc::channel(4);
    probe.tx = Some(tx);
    let (events, received) = mpsc::channel(4);
    drop(received);
    let start = Instant::now();
    let out = Pump::new("req", &events, limits(30, 100), CancellationToken::new())
        .run(start, rx, &mut probe)
        .await;
    assert_eq!(probe.calls.load(Ordering::SeqCst), 1);
    assert_eq!(probe.stops.lock().unwrap()[0], (Stop::Link, start));
    assert_eq!(out.signal, Some(KILLED));
}

#[tokio::test(start_paused = true)]
async fn a_cut_read_reports_its_exit_code() {
    let mut probe = Probe::default();
    let (tx, rx) = mpsc::channel(4);
    tx.try_send(Piece::Stdout(b"0123456789".to_vec())).unwrap();
    probe.tx = Some(tx);
    let (events, mut received) = mpsc::channel(8);
    let mut pump = Pump::new("req", &events, limits(30, 4), CancellationToken::new());
    pump.cut_exit = Some(0);
    let out = pump.run(Instant::now(), rx, &mut probe).await;
    assert_eq!(
        (out.exit_code, out.signal, out.truncated),
        (Some(0), None, true)
    );
    assert_eq!(probe.calls.load(Ordering::SeqCst), 1);
    received.close();
}

#[tokio::test(start_paused = true)]
async fn a_cap_reached_after_the_end_kills_nothing() {
    let mut probe = Probe::default();
    let pieces = vec![
        Piece::Exit(Exit::code(0)),
        Piece::Stdout(b"0123456789".to_vec()),
    ];
    let (out, kinds) = pump(
        limits(30, 4),
        CancellationToken::new(),
        pieces,
        true,
        &mut probe,
    )
    .await;
    assert_eq!(probe.calls.load(Ordering::SeqCst), 0);
    assert_eq!(stdout(&kinds), b"0123");
    assert_eq!((out.exit_code, out.truncated), (Some(0), true));
}
