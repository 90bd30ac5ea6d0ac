//! One simulated agent: its stream to the gateway, opened with the real agent's TLS dialer
//! and tonic channel, then hello, facts, inventory, heartbeats and canned answers until the
//! stream ends; then the agent's own [`Backoff`] and again, until shutdown. At most
//! `concurrency` streams are being opened at once (dial, handshake, hello, ack), so a
//! thousand identities do not knock on the gateway in the same millisecond.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinHandle;
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use tonic::Streaming;
use tracing::{Instrument, debug, debug_span, warn};
use vigil_agent::link::session::End;
use vigil_agent::link::{Backoff, ControllerUrl, tls};
use vigil_proto::agent::v1::agent_link_client::AgentLinkClient;
use vigil_proto::agent::v1::{
    AgentMessage, ControllerMessage, Heartbeat, Hello, HelloAck, agent_message, controller_message,
};

use super::enroll::VERSION;
use super::progress::Progress;
use super::state::LiveIdentity;
use super::{exec, inventory};

/// How long opening a stream may take, through the HelloAck.
const OPEN_TIMEOUT: Duration = Duration::from_secs(30);
/// The heartbeat when the HelloAck names none.
const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(10);
/// Room in a stream's outbound queue.
const OUTBOUND: usize = 32;

/// What every simulated agent shares.
#[derive(Debug)]
pub struct Fleet {
    /// The gateways; agent `i` dials gateway `i` first and moves to the next on each
    /// reconnect, as a real agent given several endpoints does.
    urls: Vec<ControllerUrl>,
    progress: Arc<Progress>,
    opening: Semaphore,
    heartbeat: Option<Duration>,
    shutdown: CancellationToken,
    started: Instant,
}

impl Fleet {
    /// Agents of the gateways at `urls` (at least one), opening at most `concurrency`
    /// streams at once.
    pub fn new(
        urls: Vec<ControllerUrl>,
        progress: Arc<Progress>,
        concurrency: usize,
        heartbeat: Option<Duration>,
        shutdown: CancellationToken,
    ) -> Fleet {
        Fleet {
            urls,
            progress,
            opening: Semaphore::new(concurrency.max(1)),
            heartbeat,
            shutdown,
            started: Instant::now(),
        }
    }
}

/// Keeps `identity` (the `index`th) up until shutdown (or a final goodbye).
pub async fn run_agent(fleet: Arc<Fleet>, identity: LiveIdentity, index: usize) {
    let span = debug_span!("agent", agent = %identity.agent_id, host = %identity.hostname);
    let mut backoff = Backoff::new();
    let mut next = index;
    loop {
        let mut up: Option<Instant> = None;
        let url = &fleet.urls[next % fleet.urls.len()];
        next = next.wrapping_add(1);
        let end = stream(&fleet, url, &identity, &mut up)
            .instrument(span.clone())
            .await;
        if up.is_some() {
            fleet.progress.down();
        }
        let reason = match end {
            Ok(End::Shutdown) => return,
            Ok(End::Goodbye {
                reason,
                retry: false,
            }) => {
                warn!(parent: &span, %reason, "the controller said goodbye for good; this identity stops");
                return;
            }
            Ok(End::Goodbye { reason, .. }) => format!("goodbye: {reason}"),
            Ok(End::Closed(reason)) => reason,
            Err(error) => error.to_string(),
        };
        fleet.progress.fail(&reason);
        let lived = up.map_or(Duration::ZERO, |t| t.elapsed());
        backoff.after_stream(lived);
        let delay = backoff.next_delay();
        debug!(parent: &span, error = %reason, retry_in_ms = delay.as_millis() as u64, "link down");
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = fleet.shutdown.cancelled() => return,
        }
    }
}

fn hello(identity: &LiveIdentity) -> AgentMessage {
    AgentMessage {
        kind: Some(agent_message::Kind::Hello(Hello {
            agent_id: identity.agent_id.clone(),
            version: VERSION.to_owned(),
            hostname: identity.hostname.clone(),
            os: "linux".to_owned(),
            arch: std::env::consts::ARCH.to_owned(),
            capabilities: vec!["host".to_owned()],
            read_only: false,
        })),
    }
}

/// Dials, says hello and waits for the ack, under one of the fleet's opening permits.
async fn open(
    url: &ControllerUrl,
    identity: &LiveIdentity,
) -> vigil_agent::Result<
    Result<
        (
            mpsc::Sender<AgentMessage>,
            Streaming<ControllerMessage>,
            HelloAck,
        ),
        End,
    >,
> {
    let (out, out_rx) = mpsc::channel::<AgentMessage>(OUTBOUND);
    let _ = out.try_send(hello(identity));
    let connect = async {
        let stream = tls::dial(url, Arc::clone(&identity.tls)).await?;
        let channel = tls::channel(url, stream).await?;
        let mut inbound = AgentLinkClient::new(channel)
            .connect(ReceiverStream::new(out_rx))
            .await
            .map_err(|s| {
                protocol(format!(
                    "the controller refused the stream: {}",
                    s.message()
                ))
            })?
            .into_inner();
        let first = inbound
            .message()
            .await
            .map_err(|s| protocol(format!("the stream failed before the ack: {}", s.message())))?;
        match first.and_then(|m| m.kind) {
            Some(controller_message::Kind::HelloAck(ack)) => Ok(Ok((inbound, ack))),
            Some(controller_message::Kind::Goodbye(bye)) => Ok(Err(End::Goodbye {
                reason: bye.reason,
                retry: bye.retry,
            })),
            other => Err(protocol(format!("expected a HelloAck, got {other:?}"))),
        }
    };
    let opened = tokio::time::timeout(OPEN_TIMEOUT, connect)
        .await
        .map_err(|_| protocol("no HelloAck within 30 s".into()))??;
    Ok(opened.map(|(inbound, ack)| (out, inbound, ack)))
}

fn protocol(message: String) -> vigil_agent::Error {
    vigil_agent::Error::Protocol(message)
}

/// One stream's life. `up` is set once the controller acknowledged the hello.
async fn stream(
    fleet: &Fleet,
    url: &ControllerUrl,
    identity: &LiveIdentity,
    up: &mut Option<Instant>,
) -> vigil_agent::Result<End> {
    let opened = {
        let _permit = tokio::select! {
            permit = fleet.opening.acquire() => permit,
            () = fleet.shutdown.cancelled() => return Ok(End::Shutdown),
        };
        tokio::select! {
            opened = open(url, identity) => opened?,
            () = fleet.shutdown.cancelled() => return Ok(End::Shutdown),
        }
    };
    let (out, mut inbound, ack) = match opened {
        Ok(opened) => opened,
        Err(end) => return Ok(end),
    };
    *up = Some(Instant::now());
    fleet.progress.up();
    let uptime = fleet.started.elapsed().as_secs();
    let facts = inventory::host_facts(&identity.hostname, uptime);
    let update = inventory::full_update(&identity.agent_id, &identity.hostname);
    for kind in [
        agent_message::Kind::Facts(facts),
        agent_message::Kind::Inventory(update),
    ] {
        if out.send(AgentMessage { kind: Some(kind) }).await.is_err() {
            return Ok(End::Closed("the stream closed after the ack".into()));
        }
    }
    let period = match (fleet.heartbeat, ack.heartbeat_interval_s) {
        (Some(period), _) => period,
        (None, 0) => DEFAULT_HEARTBEAT,
        (None, s) => Duration::from_secs(s.into()),
    };
    // A random phase, so thousands of agents do not beat in step.
    let phase =
        Duration::from_millis(getrandom::u64().unwrap_or(0) % period.as_millis().max(1) as u64);
    let mut heartbeat = tokio::time::interval_at(tokio::time::Instant::now() + phase, period);
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut commands = Commands::default();
    let mut seq = 0u64;
    let end = loop {
        tokio::select! {
            () = fleet.shutdown.cancelled() => break End::Shutdown,
            _ = heartbeat.tick() => {
                seq += 1;
                let beat = Heartbeat { seq, unix_ms: unix_ms() };
                let message = AgentMessage { kind: Some(agent_message::Kind::Heartbeat(beat)) };
                if out.try_send(message).is_err() {
                    debug!("the link is congested; heartbeat skipped");
                }
            }
            message = inbound.message() => match message {
                Ok(Some(message)) => {
                    if let Some(end) = commands.handle(message, identity, &out).await {
                        break end;
                    }
                }
                Ok(None) => break End::Closed("the controller ended the stream".into()),
                Err(status) => break End::Closed(format!("stream error: {:?}: {}", status.code(), status.message())),
            },
        }
    };
    commands.abort_all();
    Ok(end)
}

fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The commands of one stream that are still "running" (only `sleep N` ones linger).
#[derive(Debug, Default)]
struct Commands {
    slow: HashMap<String, (JoinHandle<()>, Instant)>,
}

impl Commands {
    /// Answers one controller message; `Some` ends the stream.
    async fn handle(
        &mut self,
        message: ControllerMessage,
        identity: &LiveIdentity,
        out: &mpsc::Sender<AgentMessage>,
    ) -> Option<End> {
        match message.kind {
            Some(controller_message::Kind::ExecRequest(request)) => {
                let plan = exec::plan(&request);
                let slow = matches!(plan, exec::Plan::Run { delay, .. } if !delay.is_zero());
                let hostname = identity.hostname.clone();
                let id = request.request_id;
                let task = tokio::spawn({
                    let (id, out) = (id.clone(), out.clone());
                    async move { exec::play(plan, id, &hostname, out).await }
                });
                if slow {
                    self.slow.retain(|_, (task, _)| !task.is_finished());
                    self.slow.insert(id, (task, Instant::now()));
                }
            }
            Some(controller_message::Kind::Cancel(cancel)) => {
                if let Some((task, started)) = self.slow.remove(&cancel.request_id)
                    && !task.is_finished()
                {
                    task.abort();
                    let _ = out.send(exec::cancelled(&cancel.request_id, started)).await;
                }
            }
            Some(controller_message::Kind::Goodbye(bye)) => {
                return Some(End::Goodbye {
                    reason: bye.reason,
                    retry: bye.retry,
                });
            }
            Some(other) => debug!(?other, "ignored"),
            None => {}
        }
        None
    }

    fn abort_all(&mut self) {
        for (_, (task, _)) in self.slow.drain() {
            task.abort();
        }
    }
}
