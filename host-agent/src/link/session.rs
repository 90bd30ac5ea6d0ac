//! One stream's life: dial with the agent's certificate, hello, facts, heartbeats,
//! renewal, and the commands the controller sends, until the stream ends.

use super::Runtime;
use super::dispatch::Dispatcher;
use super::renew::{Validity, check_issued, new_key_and_csr};
use super::tls::{self, ControllerUrl};
use crate::error::{Error, Result};
use crate::state::{Credentials, now_unix};
use crate::{VERSION, inventory};
use rcgen::KeyPair;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::mpsc;
use tokio::time::{MissedTickBehavior, sleep_until};
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use tonic::Streaming;
use tracing::{Instrument, info, warn};
use vigil_proto::agent::v1::agent_link_client::AgentLinkClient;
use vigil_proto::agent::v1::{
    AgentMessage, ControllerMessage, ExecEvent, Heartbeat, Hello, HelloAck, RenewRequest,
    RenewResponse, agent_message, controller_message,
};

/// Heartbeat interval when the controller's ack says 0.
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(10);
/// How long to wait for the HelloAck.
pub const ACK_TIMEOUT: Duration = Duration::from_secs(30);
/// When a renewal failed, how long until the next try.
pub const RENEW_RETRY: Duration = Duration::from_secs(3600);
const OUTBOUND_CAPACITY: usize = 256;

/// Why a stream ended without an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// The agent is shutting down.
    Shutdown,
    /// The controller said goodbye.
    Goodbye { reason: String, retry: bool },
    /// The stream closed or broke.
    Closed(String),
}

/// Run one stream. `connected` is set once the controller has acknowledged the hello.
pub async fn run_stream(
    rt: &Runtime,
    creds: &Credentials,
    url: &str,
    shutdown: &CancellationToken,
    connected: &mut Option<Instant>,
) -> Result<End> {
    let url: ControllerUrl = url.parse()?;
    let config = tls::link_config(&creds.ca_pem, &creds.cert_pem, &creds.key_pem)?;
    let validity = Validity::of_pem(&creds.cert_pem)?;
    if validity.not_after < now_unix() {
        warn!("the agent's certificate has expired; run `vigil-agent join` again");
    }
    let (out, out_rx) = mpsc::channel::<AgentMessage>(OUTBOUND_CAPACITY);
    send(&out, agent_message::Kind::Hello(hello(rt, creds))).await;
    let open = async {
        let stream = tls::dial(&url, Arc::new(config)).await?;
        let channel = tls::channel(&url, stream).await?;
        AgentLinkClient::new(channel)
            .connect(ReceiverStream::new(out_rx))
            .await
            .map_err(|s| grpc_error("the controller refused the stream", &s))
    };
    let open = async {
        tokio::time::timeout(ACK_TIMEOUT, open).await.map_err(|_| {
            Error::Protocol("the controller did not open the stream within 30 s".into())
        })?
    };
    let mut inbound = tokio::select! {
        opened = open => opened?.into_inner(),
        _ = shutdown.cancelled() => return Ok(End::Shutdown),
    };
    let ack = match wait_for_ack(&mut inbound, shutdown).await? {
        Ok(ack) => ack,
        Err(end) => return Ok(end),
    };
    *connected = Some(Instant::now());
    info!(agent = %creds.agent_id, controller_version = %ack.controller_version, "connected");
    rt.set_status(true, None);
    send(&out, agent_message::Kind::Facts(rt.host_facts())).await;
    let reporter = {
        let discovery = Arc::clone(&rt.discovery);
        let out = out.clone();
        tokio::spawn(async move { discovery.report(out).await }.in_current_span())
    };

    let period = match (rt.config.heartbeat_override, ack.heartbeat_interval_s) {
        (Some(period), _) => period,
        (None, 0) => DEFAULT_HEARTBEAT,
        (None, s) => Duration::from_secs(s.into()),
    };
    let mut heartbeat = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    heartbeat.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut seq = 0u64;
    let mut renewal = Renewal::new(validity.renew_at());

    let (events, events_rx) = mpsc::channel::<ExecEvent>(OUTBOUND_CAPACITY);
    let forwarder = tokio::spawn(forward_events(events_rx, out.clone()));
    let mut commands = Dispatcher::new(Arc::clone(&rt.guard), Arc::clone(&rt.executor), events);
    let end = loop {
        tokio::select! {
            _ = shutdown.cancelled() => break End::Shutdown,
            _ = heartbeat.tick() => {
                seq += 1;
                let beat = Heartbeat { seq, unix_ms: unix_ms() };
                let message = AgentMessage { kind: Some(agent_message::Kind::Heartbeat(beat)) };
                if out.try_send(message).is_err() {
                    warn!("the link is congested; heartbeat skipped");
                }
            }
            _ = sleep_until(renewal.due), if renewal.pending.is_none() => {
                match renewal.start() {
                    Ok(csr_pem) => {
                        info!("certificate is two thirds through its life; asking for a new one");
                        send(&out, agent_message::Kind::RenewRequest(RenewRequest { csr_pem })).await;
                    }
                    Err(error) => warn!(%error, "could not make a renewal request"),
                }
            }
            Some(()) = commands.next_finished() => {}
            message = inbound.message() => match message {
                Ok(Some(message)) => {
                    if let Some(end) = handle(rt, &out, message, &mut commands, &mut renewal).await {
                        break end;
                    }
                }
                Ok(None) => break End::Closed("the controller closed the stream".into()),
                Err(status) => break End::Closed(tls::error_chain(&status)),
            },
        }
    };
    let running = commands.running();
    if running > 0 {
        info!(running, "stream ended; killing running commands");
    }
    reporter.abort();
    commands.shutdown().await;
    forwarder.abort();
    Ok(end)
}

/// Handle one controller message; `Some` ends the stream.
async fn handle(
    rt: &Runtime,
    out: &mpsc::Sender<AgentMessage>,
    message: ControllerMessage,
    commands: &mut Dispatcher,
    renewal: &mut Renewal,
) -> Option<End> {
    match message.kind {
        Some(controller_message::Kind::ExecRequest(request)) => commands.exec(request).await,
        Some(controller_message::Kind::Cancel(cancel)) => commands.cancel(&cancel.request_id),
        Some(controller_message::Kind::RenewResponse(response)) => {
            renewal.finish(rt, response);
        }
        Some(controller_message::Kind::Goodbye(bye)) => {
            return Some(End::Goodbye {
                reason: bye.reason,
                retry: bye.retry,
            });
        }
        Some(controller_message::Kind::SandboxPolicy(policy)) => {
            // Applied before the next message is read: every request the controller sent
            // after the policy runs under it.
            if rt.apply_sandbox_policy(&policy.hide) {
                send(out, agent_message::Kind::Facts(rt.host_facts())).await;
            }
        }
        Some(controller_message::Kind::HelloAck(_)) => warn!("ignoring a second HelloAck"),
        None => warn!("ignoring an empty controller message"),
    }
    None
}

/// Wait for the HelloAck; `Err(End)` when the controller said goodbye instead.
async fn wait_for_ack(
    inbound: &mut Streaming<ControllerMessage>,
    shutdown: &CancellationToken,
) -> Result<Result<HelloAck, End>> {
    let first = tokio::select! {
        first = tokio::time::timeout(ACK_TIMEOUT, inbound.message()) => first,
        _ = shutdown.cancelled() => return Ok(Err(End::Shutdown)),
    };
    let first = first
        .map_err(|_| Error::Protocol("no HelloAck within 30 s".into()))?
        .map_err(|s| grpc_error("the controller refused the stream", &s))?;
    match first.and_then(|m| m.kind) {
        Some(controller_message::Kind::HelloAck(ack)) => Ok(Ok(ack)),
        Some(controller_message::Kind::Goodbye(bye)) => Ok(Err(End::Goodbye {
            reason: bye.reason,
            retry: bye.retry,
        })),
        None => Ok(Err(End::Closed(
            "the controller closed the stream before its ack".into(),
        ))),
        Some(other) => Err(Error::Protocol(format!(
            "expected a HelloAck first, got {other:?}"
        ))),
    }
}

/// The renewal of this stream's certificate.
#[derive(Debug)]
struct Renewal {
    due: tokio::time::Instant,
    pending: Option<KeyPair>,
}

impl Renewal {
    fn new(renew_at_unix: i64) -> Self {
        let wait = u64::try_from(renew_at_unix - now_unix()).unwrap_or(0);
        Renewal {
            due: tokio::time::Instant::now() + Duration::from_secs(wait),
            pending: None,
        }
    }

    fn retry_later(&mut self) {
        self.pending = None;
        self.due = tokio::time::Instant::now() + RENEW_RETRY;
    }

    /// A new key and its CSR; the key waits for the answer.
    fn start(&mut self) -> Result<String> {
        match new_key_and_csr() {
            Ok((key, csr)) => {
                self.pending = Some(key);
                Ok(csr)
            }
            Err(e) => {
                self.retry_later();
                Err(e)
            }
        }
    }

    fn finish(&mut self, rt: &Runtime, response: RenewResponse) {
        let Some(key) = self.pending.take() else {
            warn!("ignoring a RenewResponse nobody asked for");
            return;
        };
        let stored = if !response.error.is_empty() {
            Err(Error::Protocol(format!(
                "the controller refused: {}",
                response.error
            )))
        } else {
            check_issued(&response.certificate_pem, rt.agent_id, &key).and_then(|()| {
                rt.state
                    .write_renewal(&key.serialize_pem(), &response.certificate_pem)
            })
        };
        match stored {
            Ok(()) => {
                info!("certificate renewed; the next connection uses it");
                // Nothing more to renew on this stream.
                self.due = tokio::time::Instant::now() + Duration::from_secs(86_400 * 365);
            }
            Err(error) => {
                warn!(%error, "certificate renewal failed; retrying in an hour");
                self.retry_later();
            }
        }
    }
}

fn hello(rt: &Runtime, creds: &Credentials) -> Hello {
    Hello {
        agent_id: creds.agent_id.to_string(),
        version: VERSION.to_owned(),
        hostname: inventory::hostname(),
        os: std::env::consts::OS.to_owned(),
        arch: std::env::consts::ARCH.to_owned(),
        capabilities: rt.platform.capabilities.clone(),
        read_only: rt.guard.read_only(),
    }
}

async fn send(out: &mpsc::Sender<AgentMessage>, kind: agent_message::Kind) {
    // A closed channel means the stream is gone; the main loop notices on its own.
    let _ = out.send(AgentMessage { kind: Some(kind) }).await;
}

async fn forward_events(mut events: mpsc::Receiver<ExecEvent>, out: mpsc::Sender<AgentMessage>) {
    while let Some(event) = events.recv().await {
        let message = AgentMessage {
            kind: Some(agent_message::Kind::ExecEvent(event)),
        };
        if out.send(message).await.is_err() {
            return;
        }
    }
}

fn grpc_error(context: &'static str, status: &tonic::Status) -> Error {
    Error::Grpc {
        context,
        code: status.code(),
        message: tls::error_chain(status),
    }
}

fn unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
