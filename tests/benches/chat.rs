//! Assistant benchmarks with the release binaries (build them first: `make bench` does):
//! one controller pointed at the scripted model (answering at once: no pause between
//! frames) and 10 real agents on this machine.
//!
//! 1. The loop's own time per turn, sequential turns: each turn's wall time from the POST
//!    to `done`, minus the time the model server spent on the turn's requests, minus the
//!    read's time (its `tool_end` event's `duration_ms`). A text-only turn, and a
//!    three-iteration turn (`query search`, `read exec uptime` on the host, text).
//! 2. 50 concurrent sessions, each running turns of one read on one of the 10 hosts
//!    (round robin) and a text answer: turns per second and the turns' latency.
//!
//! Environment: `VIGIL_BENCH_TURNS` (default 200, turns of each kind in 1),
//! `VIGIL_BENCH_CLIENTS` (default 50) and `VIGIL_BENCH_CLIENT_TURNS` (default 20, turns per
//! client in 2).

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use serde_json::{Value, json};
use vigil_tests::model_server::{Protocol, Reply, ScriptedModel};
use vigil_tests::stats::summary;
use vigil_tests::{Agent, AgentOptions, Controller, ControllerOptions, wait_until};

const AGENTS: usize = 10;
const CONNECT: Duration = Duration::from_secs(30);
/// Hang guard for one turn (not a timing assertion).
const TURN_LIMIT: Duration = Duration::from_secs(60);

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One SSE event of a turn and when it arrived.
struct Event {
    name: String,
    data: Value,
    at: Instant,
}

/// A finished turn: when it was posted and its events up to `done`.
struct Turn {
    posted: Instant,
    events: Vec<Event>,
}

impl Turn {
    /// From the POST to the `done` event.
    fn wall(&self) -> Duration {
        self.events.last().expect("done").at - self.posted
    }

    /// The `duration_ms` of the `tool_end` events of the tool `name`, summed: the
    /// controller's own measure (whole milliseconds). The events' arrival times cannot
    /// be used: `tool_start` often arrives in the same read as `tool_end`.
    fn tool_time(&self, name: &str) -> Duration {
        let mut total = Duration::ZERO;
        for end in self
            .events
            .iter()
            .filter(|e| e.name == "tool_end" && e.data["name"] == name)
        {
            assert_eq!(end.data["ok"], true, "{name} failed: {}", end.data);
            total += Duration::from_millis(end.data["duration_ms"].as_u64().expect("duration_ms"));
        }
        total
    }

    /// The error codes of the tool calls that failed.
    fn failed_tools(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e.name == "tool_end" && e.data["ok"] != true)
            .map(|e| e.data["error_code"].as_str().unwrap_or("?").to_owned())
            .collect()
    }

    fn done(&self) -> &Value {
        &self.events.last().expect("done").data
    }
}

/// A client of the chat API.
#[derive(Clone)]
struct Chat {
    client: reqwest::Client,
    url: String,
    token: String,
}

impl Chat {
    /// Runs one turn: `Ok` with its events, or `Err(status)` when it was refused.
    async fn turn(&self, body: &Value) -> Result<Turn, u16> {
        let posted = Instant::now();
        let response = self
            .client
            .post(&self.url)
            .bearer_auth(&self.token)
            .json(body)
            .send()
            .await
            .expect("POST /api/ai/chat");
        if response.status() != 200 {
            return Err(response.status().as_u16());
        }
        let mut stream = response.bytes_stream().eventsource();
        let mut events = Vec::new();
        let read = async {
            while let Some(event) = stream.next().await {
                let event = event.expect("SSE");
                let at = Instant::now();
                let done = event.event == "done";
                events.push(Event {
                    name: event.event,
                    data: serde_json::from_str(&event.data).unwrap_or(Value::Null),
                    at,
                });
                if done {
                    break;
                }
            }
        };
        tokio::time::timeout(TURN_LIMIT, read)
            .await
            .expect("the turn ended");
        // Untimed: read the body to its end, so the connection goes back to the pool.
        let _ = tokio::time::timeout(Duration::from_secs(1), stream.count()).await;
        assert_eq!(events.last().map(|e| e.name.as_str()), Some("done"));
        if let Some(error) = events.iter().find(|e| e.name == "error") {
            panic!("the turn failed: {}", error.data);
        }
        Ok(Turn { posted, events })
    }

    /// Runs one turn, retrying while the session's previous turn is still closing (409).
    async fn turn_retrying(&self, body: &Value) -> Turn {
        loop {
            match self.turn(body).await {
                Ok(turn) => return turn,
                Err(409) => tokio::time::sleep(Duration::from_millis(1)).await,
                Err(status) => panic!("chat refused: {status}"),
            }
        }
    }
}

/// The model of part 2: a user message naming `host:<id>` gets a read on that host; any
/// other request (the read's result) gets the answer.
fn react(request: &Value) -> Reply {
    let last = request["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or(Value::Null);
    if last["role"] != "user" {
        return Reply::Text("The host is up.".into());
    }
    let text = last["content"].to_string();
    let host: String = text
        .find("host:")
        .map(|at| {
            text[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == ':' || *c == '-')
                .collect()
        })
        .expect("a host in the message");
    Reply::ToolCalls(vec![(
        "read".into(),
        json!({"action": "exec", "resource_id": host, "command": "uptime"}),
    )])
}

/// The model time of the requests that arrived since `from`, waiting for the last one to end.
async fn model_time(model: &ScriptedModel, from: usize) -> (Duration, usize) {
    loop {
        let durations = model.durations();
        let new = &durations[from..];
        if new.iter().all(Option::is_some) {
            return (new.iter().flatten().sum(), durations.len());
        }
        tokio::task::yield_now().await;
    }
}

/// Part 1: sequential turns; prints the loop's time per turn.
async fn overhead(chat: &Chat, model: &ScriptedModel, host: &str, runs: usize) {
    let text_turn = || model.push(Reply::Text("The host is up.".into()));
    let read_turn = || {
        model.push(Reply::ToolCalls(vec![(
            "query".into(),
            json!({"action": "search", "query": host}),
        )]));
        model.push(Reply::ToolCalls(vec![(
            "read".into(),
            json!({"action": "exec", "resource_id": host, "command": "uptime"}),
        )]));
        model.push(Reply::Text("The host is up.".into()));
    };
    let body = json!({"message": format!("is {host} up?")});
    for _ in 0..20 {
        text_turn();
        chat.turn(&body).await.expect("warm-up");
        read_turn();
        chat.turn(&body).await.expect("warm-up");
    }
    let mut seen = model.durations().len();
    for (kind, push, iterations) in [
        ("text-only turn", &text_turn as &dyn Fn(), 1),
        (
            "3-iteration turn (query search, read exec uptime, text)",
            &read_turn,
            3,
        ),
    ] {
        let (mut walls, mut models, mut reads, mut queries, mut loops) =
            (vec![], vec![], vec![], vec![], vec![]);
        for _ in 0..runs {
            push();
            let turn = chat.turn(&body).await.expect("turn");
            let (model_spent, now) = model_time(model, seen).await;
            assert_eq!(now - seen, iterations, "model requests in the turn");
            seen = now;
            assert_eq!(turn.done()["turns"], iterations);
            let read = turn.tool_time("read");
            walls.push(turn.wall());
            models.push(model_spent);
            reads.push(read);
            queries.push(turn.tool_time("query"));
            loops.push(turn.wall().saturating_sub(model_spent + read));
        }
        println!("{kind}, {runs} turns:");
        println!(
            "  loop's own time (wall - model - read): {}",
            summary(&mut loops)
        );
        println!("  wall, POST to done: {}", summary(&mut walls));
        println!("  model server time: {}", summary(&mut models));
        if iterations > 1 {
            println!("  read, tool_end duration_ms: {}", summary(&mut reads));
            println!(
                "  query search, tool_end duration_ms (in the loop's time): {}",
                summary(&mut queries)
            );
        }
    }
}

/// Part 2: `clients` sessions at once, `turns` turns each; prints throughput and latency.
async fn concurrent(chat: &Chat, hosts: &[String], clients: usize, turns: usize) {
    let hosts = Arc::new(hosts.to_vec());
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|client| {
            let chat = chat.clone();
            let hosts = hosts.clone();
            tokio::spawn(async move {
                let mut session: Option<String> = None;
                let mut latencies = Vec::with_capacity(turns);
                let mut refused = Vec::new();
                for i in 0..turns {
                    // Round robin, staggered: 5 of the 50 clients start on each host.
                    let host = &hosts[(client + i) % hosts.len()];
                    let mut body = json!({"message": format!("is {host} up?")});
                    if let Some(id) = &session {
                        body["session_id"] = json!(id);
                    }
                    let turn = chat.turn_retrying(&body).await;
                    assert_eq!(turn.done()["tool_calls"], 1);
                    refused.extend(turn.failed_tools());
                    session = turn.done()["session_id"].as_str().map(str::to_owned);
                    latencies.push(turn.wall());
                }
                (latencies, refused)
            })
        })
        .collect();
    let mut latencies = Vec::with_capacity(clients * turns);
    let mut refused = Vec::new();
    for task in tasks {
        let (mine, codes) = task.await.expect("client");
        latencies.extend(mine);
        refused.extend(codes);
    }
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "{clients} concurrent sessions × {turns} turns (read on one of {} hosts, then text): \
         {} turns in {elapsed:.1} s, {:.0} turns/s",
        hosts.len(),
        latencies.len(),
        latencies.len() as f64 / elapsed
    );
    println!("  turn latency, POST to done: {}", summary(&mut latencies));
    println!("  reads that failed: {} {refused:?}", refused.len());
}

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return; // `cargo test --benches` only checks that this builds
    }
    let runs = env_num("VIGIL_BENCH_TURNS", 200) as usize;
    let clients = env_num("VIGIL_BENCH_CLIENTS", 50) as usize;
    let client_turns = env_num("VIGIL_BENCH_CLIENT_TURNS", 20) as usize;

    let model = ScriptedModel::start_with(Protocol::OpenAi, react).await;
    model.set_frame_delay(Duration::ZERO);
    let ctrl = Controller::start(ControllerOptions {
        extra_args: [
            "--llm-provider",
            "openai",
            "--llm-base-url",
            &model.base_url(),
            "--llm-model",
            "scripted",
        ]
        .map(str::to_owned)
        .to_vec(),
        ..Default::default()
    })
    .await;
    let mut agents = Vec::with_capacity(AGENTS);
    let mut hosts = Vec::with_capacity(AGENTS);
    for _ in 0..AGENTS {
        let agent = Agent::join(&ctrl, AgentOptions::default()).await;
        hosts.push(format!("host:{}", agent.state.id));
        agents.push(agent);
    }
    for (agent, host) in agents.iter().zip(&hosts) {
        let id = &agent.state.id;
        assert!(
            wait_until(CONNECT, || ctrl.api.connected(id)).await,
            "agent {id} did not connect"
        );
        assert!(
            wait_until(CONNECT, || async {
                ctrl.api.resource(host).await.is_some()
            })
            .await,
            "agent {id} never reported its host"
        );
    }
    let chat = Chat {
        client: reqwest::Client::new(),
        url: format!("{}/api/ai/chat", ctrl.api.base()),
        token: ctrl.api.token().to_owned(),
    };

    overhead(&chat, &model, &hosts[0], runs).await;
    concurrent(&chat, &hosts, clients, client_turns).await;
}
