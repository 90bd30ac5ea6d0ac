//! The scripted model: the only fake in the suites. A real HTTP server on 127.0.0.1 that
//! speaks the real streaming protocols, `POST /v1/chat/completions` (OpenAI-compatible) or
//! `POST /v1/messages` (Anthropic Messages), and answers each request with the next
//! [`Reply`] a test queued, or with what a function of the request body returns.
//!
//! ```ignore
//! let model = ScriptedModel::start(Protocol::OpenAi).await;
//! model.push(Reply::Text("hello".into()));
//! // point the controller at model.base_url() …
//! assert_eq!(model.requests()[0]["model"], "test-model");
//! ```
//!
//! Frames are paced ([`ScriptedModel::set_frame_delay`], 2 ms by default) and each
//! request's time is recorded ([`ScriptedModel::durations`]), so benchmarks can subtract
//! the model's time from a turn's.

mod anthropic;
mod openai;

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::Value;

/// The wire protocol the server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `POST /v1/chat/completions`, OpenAI-compatible streaming.
    OpenAi,
    /// `POST /v1/messages`, Anthropic Messages streaming.
    Anthropic,
}

/// One scripted answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Text streamed in several small deltas.
    Text(String),
    /// Tool calls (name, arguments) with generated ids; each call's serialized arguments
    /// are split across several chunks, and OpenAI calls are interleaved by index.
    ToolCalls(Vec<(String, Value)>),
    /// One tool call whose arguments text is sent verbatim (for example broken JSON).
    RawToolCall {
        /// The tool's name.
        name: String,
        /// The arguments text.
        arguments: String,
    },
    /// Text, then tool calls, in one answer.
    TextThenToolCalls(String, Vec<(String, Value)>),
    /// An HTTP error: status, optional `Retry-After` seconds, body.
    Status {
        /// The HTTP status code.
        code: u16,
        /// `Retry-After`, in seconds.
        retry_after: Option<u64>,
        /// The response body.
        body: String,
    },
    /// Some text deltas, then the connection closes without the end marker.
    DieMidStream(String),
    /// Waits, then answers.
    Delay(Duration, Box<Reply>),
}

type Responder = Arc<dyn Fn(&Value) -> Reply + Send + Sync>;

struct Shared {
    protocol: Protocol,
    queue: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<Value>>,
    responder: Option<Responder>,
    next_id: AtomicU64,
    /// Per request, in arrival order: the time from its arrival to its last frame.
    durations: Mutex<Vec<Option<Duration>>>,
    /// The pause before each frame, in microseconds.
    frame_delay_us: AtomicU64,
}

/// The default pause before each streamed frame.
const FRAME_DELAY: Duration = Duration::from_millis(2);

/// Records one request's duration when dropped: when its response body has ended (or the
/// connection was cut).
struct Timing {
    shared: Arc<Shared>,
    index: usize,
    started: Instant,
}

impl Drop for Timing {
    fn drop(&mut self) {
        let elapsed = self.started.elapsed();
        if let Some(slot) = self.shared.durations.lock().unwrap().get_mut(self.index) {
            *slot = Some(elapsed);
        }
    }
}

/// A running scripted model server; it stops when dropped.
pub struct ScriptedModel {
    base_url: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScriptedModel")
            .field("protocol", &self.shared.protocol)
            .field("base_url", &self.base_url)
            .field("requests", &self.request_count())
            .finish()
    }
}

impl ScriptedModel {
    /// Starts a server that answers from the queue ([`ScriptedModel::push`]).
    pub async fn start(protocol: Protocol) -> ScriptedModel {
        Self::serve(protocol, None).await
    }

    /// Starts a server that answers from the queue and, when it is empty, with
    /// `respond(request body)`: the model reacts to what it is sent (tool results, …).
    pub async fn start_with(
        protocol: Protocol,
        respond: impl Fn(&Value) -> Reply + Send + Sync + 'static,
    ) -> ScriptedModel {
        Self::serve(protocol, Some(Arc::new(respond))).await
    }

    async fn serve(protocol: Protocol, responder: Option<Responder>) -> ScriptedModel {
        let shared = Arc::new(Shared {
            protocol,
            queue: Mutex::new(VecDeque::new()),
            requests: Mutex::new(Vec::new()),
            responder,
            next_id: AtomicU64::new(1),
            durations: Mutex::new(Vec::new()),
            frame_delay_us: AtomicU64::new(FRAME_DELAY.as_micros() as u64),
        });
        let path = match protocol {
            Protocol::OpenAi => "/v1/chat/completions",
            Protocol::Anthropic => "/v1/messages",
        };
        let router = Router::new()
            .route(path, post(answer))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the scripted model");
        let addr = listener.local_addr().expect("scripted model address");
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        ScriptedModel {
            base_url: format!("http://{addr}/v1"),
            shared,
            task,
        }
    }

    /// The API root to configure (`http://127.0.0.1:PORT/v1`).
    pub fn base_url(&self) -> String {
        self.base_url.clone()
    }

    /// Queues the answer to a coming request.
    pub fn push(&self, reply: Reply) {
        self.shared.queue.lock().unwrap().push_back(reply);
    }

    /// Drops the replies still queued (what an earlier scenario did not use).
    pub fn clear(&self) {
        self.shared.queue.lock().unwrap().clear();
    }

    /// Every request body received, in order (a body that is not JSON is kept as a string).
    pub fn requests(&self) -> Vec<Value> {
        self.shared.requests.lock().unwrap().clone()
    }

    /// How many requests arrived.
    pub fn request_count(&self) -> usize {
        self.shared.requests.lock().unwrap().len()
    }

    /// Sets the pause before each streamed frame (2 ms by default; zero answers at once).
    pub fn set_frame_delay(&self, delay: Duration) {
        let micros = u64::try_from(delay.as_micros()).unwrap_or(u64::MAX);
        self.shared.frame_delay_us.store(micros, Ordering::Relaxed);
    }

    /// Each request's time in the server, in arrival order: from its body arriving to its
    /// response's end (`None` while it is still answering). A benchmark subtracts these
    /// to get the time spent outside the model.
    pub fn durations(&self) -> Vec<Option<Duration>> {
        self.shared.durations.lock().unwrap().clone()
    }
}

impl Drop for ScriptedModel {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let started = Instant::now();
    let timing = {
        let mut durations = shared.durations.lock().unwrap();
        durations.push(None);
        Timing {
            shared: shared.clone(),
            index: durations.len() - 1,
            started,
        }
    };
    let request = serde_json::from_slice(&body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
    shared.requests.lock().unwrap().push(request.clone());
    let queued = shared.queue.lock().unwrap().pop_front();
    let reply = match (queued, &shared.responder) {
        (Some(reply), _) => reply,
        (None, Some(respond)) => respond(&request),
        (None, None) => Reply::Status {
            code: 500,
            retry_after: None,
            body: "scripted model: no reply queued".into(),
        },
    };
    respond(&shared, &request, reply, timing).await
}

async fn respond(shared: &Shared, request: &Value, mut reply: Reply, timing: Timing) -> Response {
    while let Reply::Delay(delay, inner) = reply {
        tokio::time::sleep(delay).await;
        reply = *inner;
    }
    let script = match reply {
        Reply::Status {
            code,
            retry_after,
            body,
        } => return status(code, retry_after, body),
        Reply::Text(text) => Script::answer(text, Vec::new()),
        Reply::ToolCalls(calls) => Script::answer(String::new(), serialize(calls)),
        Reply::TextThenToolCalls(text, calls) => Script::answer(text, serialize(calls)),
        Reply::RawToolCall { name, arguments } => {
            Script::answer(String::new(), vec![(name, arguments)])
        }
        Reply::DieMidStream(text) => Script {
            die: true,
            ..Script::answer(text, Vec::new())
        },
        Reply::Delay(..) => unreachable!("delays were waited above"),
    };
    let ids = || format!("{:04}", shared.next_id.fetch_add(1, Ordering::Relaxed));
    let input_tokens = (request.to_string().len() as u64 / 4).max(1);
    let frames = match shared.protocol {
        Protocol::OpenAi => openai::frames(&script, input_tokens, ids),
        Protocol::Anthropic => anthropic::frames(&script, input_tokens, ids),
    };
    let delay = Duration::from_micros(shared.frame_delay_us.load(Ordering::Relaxed));
    stream(frames, script.die, delay, timing)
}

/// What to stream: text, then tool calls with their arguments text.
#[derive(Debug)]
struct Script {
    text: String,
    calls: Vec<(String, String)>,
    die: bool,
}

impl Script {
    fn answer(text: String, calls: Vec<(String, String)>) -> Script {
        Script {
            text,
            calls,
            die: false,
        }
    }

    /// Output tokens to report: about one per four characters.
    fn output_tokens(&self) -> u64 {
        let chars = self.text.len() + self.calls.iter().map(|c| c.1.len()).sum::<usize>();
        chars as u64 / 4 + 1
    }
}

fn serialize(calls: Vec<(String, Value)>) -> Vec<(String, String)> {
    calls
        .into_iter()
        .map(|(name, args)| (name, args.to_string()))
        .collect()
}

/// `text` cut into `n` pieces (at least one, none empty unless `text` is), on char bounds.
fn split(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    let size = chars.len().div_ceil(n.max(1));
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// Text deltas: pieces of at most 4 characters.
fn deltas(text: &str) -> Vec<String> {
    split(text, text.chars().count().div_ceil(4))
        .into_iter()
        .filter(|piece| !piece.is_empty())
        .collect()
}

fn status(code: u16, retry_after: Option<u64>, body: String) -> Response {
    let code = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (code, body).into_response();
    if let Some(seconds) = retry_after {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

/// An SSE response that sends each frame as its own chunk, `delay` after the previous one;
/// with `die`, the connection is cut after the last one instead of ending the body. The
/// request's `timing` is recorded when the body ends.
fn stream(frames: Vec<String>, die: bool, delay: Duration, timing: Timing) -> Response {
    let state = (frames.into_iter(), die, timing);
    let chunks = futures_util::stream::unfold(state, move |(mut frames, die, timing)| async move {
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        match frames.next() {
            Some(frame) => Some((Ok(Bytes::from(frame)), (frames, die, timing))),
            None if die => Some((
                Err(std::io::Error::other("scripted model: dying mid-stream")),
                (frames, false, timing),
            )),
            // The state, and with it the timing, is dropped here.
            None => None,
        }
    });
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(chunks))
        .expect("SSE response")
}
