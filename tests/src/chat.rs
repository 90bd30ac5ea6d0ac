//! Chat turns over the real HTTP API: [`Api::chat`] posts a message and collects the
//! turn's server-sent events in the background, so a test can wait for one (an approval),
//! act, and then read the rest up to `done`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use serde_json::Value;

use crate::api::{Api, SseEvent};
pub use vigil_controller::assistant::events::ChatEvent;

/// The events of one chat turn, as they arrive.
#[derive(Debug)]
pub struct ChatStream {
    events: Arc<Mutex<Vec<SseEvent>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Api {
    /// `POST /api/ai/chat` with `body`: the event stream, or the refusal `(status, body)`.
    pub async fn chat(&self, body: &Value) -> Result<ChatStream, (u16, Value)> {
        let response = reqwest::Client::new()
            .post(format!("{}/api/ai/chat", self.base()))
            .bearer_auth(self.token())
            .json(body)
            .send()
            .await
            .expect("POST /api/ai/chat");
        let status = response.status().as_u16();
        if status != 200 {
            return Err((status, response.json().await.unwrap_or(Value::Null)));
        }
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = events.clone();
        let task = tokio::spawn(async move {
            let mut stream = response.bytes_stream().eventsource();
            while let Some(Ok(event)) = stream.next().await {
                let done = event.event == "done";
                sink.lock().unwrap().push(SseEvent::now(event));
                if done {
                    break;
                }
            }
        });
        Ok(ChatStream { events, task })
    }
}

impl ChatStream {
    /// The events so far.
    pub fn events(&self) -> Vec<SseEvent> {
        self.events.lock().unwrap().clone()
    }

    /// Waits (at most `limit`, a hang guard) for the first event named `name`; its data.
    pub async fn wait_for(&self, name: &str, limit: Duration) -> Value {
        let start = Instant::now();
        loop {
            if let Some(event) = self.events().into_iter().find(|e| e.event == name) {
                return serde_json::from_str(&event.data).expect("event data is JSON");
            }
            assert!(
                start.elapsed() < limit,
                "no {name:?} event within {limit:?}; events: {:#?}",
                self.events()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits for `done` (at most `limit`) and returns every event, each decoded with the
    /// controller's own [`ChatEvent`] (a known event that does not fit the contract fails
    /// the test).
    pub async fn finish(self, limit: Duration) -> Vec<ChatEvent> {
        let ended = tokio::time::timeout(limit, self.task).await;
        let events = self.events.lock().unwrap().clone();
        assert!(
            ended.is_ok(),
            "the turn did not end within {limit:?}; events: {events:#?}"
        );
        let events: Vec<ChatEvent> = events
            .iter()
            .map(|e| {
                ChatEvent::decode(&e.event, &e.data)
                    .unwrap_or_else(|why| panic!("{why}; events: {events:#?}"))
            })
            .collect();
        assert!(
            matches!(events.last(), Some(ChatEvent::Done { .. })),
            "{events:#?}"
        );
        events
    }
}

/// The data of every event named `name`.
pub fn named(events: &[ChatEvent], name: &str) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e.name() == name)
        .map(ChatEvent::data)
        .collect()
}

/// The visible answer: `content` deltas, restarted at each `content_replaced`.
pub fn answer(events: &[ChatEvent]) -> String {
    let mut text = String::new();
    for event in events {
        match event {
            ChatEvent::Content { text: delta } => text.push_str(delta),
            ChatEvent::ContentReplaced { text: all, .. } => text.clone_from(all),
            _ => {}
        }
    }
    text
}

/// A controller with one agent on this machine, connected and with its host reported.
#[derive(Debug)]
pub struct ChatHost {
    pub ctrl: crate::Controller,
    pub agent: crate::Agent,
    /// The agent's host resource id (`host:<agent>`).
    pub host: String,
}

impl ChatHost {
    /// Starts a controller with `extra_args` and joins an agent.
    pub async fn start(extra_args: Vec<String>) -> ChatHost {
        let limit = Duration::from_secs(30);
        let ctrl = crate::Controller::start(crate::ControllerOptions {
            extra_args,
            ..Default::default()
        })
        .await;
        let agent = crate::Agent::join(&ctrl, crate::AgentOptions::default()).await;
        let id = agent.state.id.clone();
        let connected = crate::wait_until(limit, || ctrl.api.connected(&id)).await;
        assert!(connected, "agent never connected\n{}", agent.log());
        let host = format!("host:{id}");
        let reported =
            crate::wait_until(limit, || async { ctrl.api.resource(&host).await.is_some() }).await;
        assert!(reported, "the agent never reported its host");
        ChatHost { ctrl, agent, host }
    }

    /// The agent's host name as the inventory reports it.
    pub async fn hostname(&self) -> String {
        let resource = self
            .ctrl
            .api
            .resource(&self.host)
            .await
            .expect("host resource");
        resource["name"].as_str().expect("name").to_owned()
    }
}

/// The `serve` flags that point a controller at `model`.
pub fn scripted_llm_args(
    model: &crate::model_server::ScriptedModel,
    protocol: crate::model_server::Protocol,
) -> Vec<String> {
    let provider = match protocol {
        crate::model_server::Protocol::OpenAi => "openai",
        crate::model_server::Protocol::Anthropic => "anthropic",
    };
    [
        "--llm-provider",
        provider,
        "--llm-base-url",
        &model.base_url(),
        "--llm-model",
        "scripted",
    ]
    .map(String::from)
    .to_vec()
}
