//! From an accepted HTTP response to an [`EventStream`]: server-sent events are parsed
//! (`eventsource-stream`), each `data:` payload goes to the protocol's [`Decoder`], and the
//! idle timeout and early-end check apply to both protocols alike.

use std::collections::VecDeque;
use std::time::Duration;

use eventsource_stream::Eventsource;
use futures_util::{Stream, StreamExt};
use reqwest::Response;
use tracing::debug;

use super::{EventStream, LlmError, StreamEvent};

/// Turns the `data:` payloads of one protocol into [`StreamEvent`]s.
pub trait Decoder: Send + 'static {
    /// Decodes one `data:` payload.
    fn feed(&mut self, data: &str) -> Result<Vec<StreamEvent>, LlmError>;
    /// Whether the protocol's end marker was seen (`[DONE]`, `message_stop`).
    fn is_done(&self) -> bool;
    /// Decodes a list of payloads, as a server would stream them (for tests and tools).
    fn feed_all<'a>(
        &mut self,
        payloads: impl IntoIterator<Item = &'a str>,
    ) -> Result<Vec<StreamEvent>, LlmError>
    where
        Self: Sized,
    {
        let mut events = Vec::new();
        for data in payloads {
            events.extend(self.feed(data)?);
        }
        Ok(events)
    }
}

type Frames = std::pin::Pin<Box<dyn Stream<Item = Result<String, LlmError>> + Send>>;

struct Pump<D> {
    frames: Frames,
    decoder: D,
    ready: VecDeque<StreamEvent>,
    idle: Duration,
    ended: bool,
}

/// The events of `response`'s body, decoded by `decoder`; silence longer than `idle`
/// between two chunks is [`LlmError::Timeout`], an end without the end marker is
/// [`LlmError::Protocol`].
pub fn events(response: Response, decoder: impl Decoder, idle: Duration) -> EventStream {
    let frames = response
        .bytes_stream()
        .eventsource()
        .map(|item| match item {
            Ok(event) => Ok(event.data),
            Err(error) => Err(LlmError::Network(format!(
                "reading the model stream: {error}"
            ))),
        });
    decode(Box::pin(frames), decoder, idle)
}

/// [`events`] over any stream of `data:` payloads.
pub(crate) fn decode(frames: Frames, decoder: impl Decoder, idle: Duration) -> EventStream {
    let pump = Pump {
        frames,
        decoder,
        ready: VecDeque::new(),
        idle,
        ended: false,
    };
    Box::pin(futures_util::stream::unfold(pump, |mut pump| async move {
        let item = pump.next().await?;
        Some((item, pump))
    }))
}

impl<D: Decoder> Pump<D> {
    async fn next(&mut self) -> Option<Result<StreamEvent, LlmError>> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(Ok(event));
            }
            if self.ended {
                return None;
            }
            match self.pull().await {
                Ok(events) => self.ready.extend(events),
                Err(error) => {
                    self.ended = true;
                    debug!(%error, "model stream failed");
                    return Some(Err(error));
                }
            }
        }
    }

    async fn pull(&mut self) -> Result<Vec<StreamEvent>, LlmError> {
        let frame = tokio::time::timeout(self.idle, self.frames.next())
            .await
            .map_err(|_| {
                LlmError::Timeout(format!(
                    "the model stream was silent for {} s",
                    self.idle.as_secs_f32()
                ))
            })?;
        match frame {
            None => Err(LlmError::Protocol(
                "model stream ended early, before its end marker".into(),
            )),
            Some(Err(error)) => Err(error),
            Some(Ok(data)) if data.trim().is_empty() => Ok(Vec::new()),
            Some(Ok(data)) => {
                let events = self.decoder.feed(&data)?;
                self.ended = self.decoder.is_done();
                Ok(events)
            }
        }
    }
}

/// Parses one JSON payload, naming the protocol's part in the error.
pub(crate) fn parse<T: serde::de::DeserializeOwned>(what: &str, data: &str) -> Result<T, LlmError> {
    serde_json::from_str(data).map_err(|e| {
        LlmError::Protocol(format!(
            "bad {what} JSON ({e}): {}",
            super::truncate(data, 200)
        ))
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::llm::openai::OpenAiDecoder;

    fn frames(payloads: &[&str]) -> Frames {
        let items: Vec<Result<String, LlmError>> =
            payloads.iter().map(|p| Ok((*p).to_owned())).collect();
        Box::pin(futures_util::stream::iter(items))
    }

    #[tokio::test]
    async fn a_stream_without_its_end_marker_is_an_error() {
        let chunk = r#"{"choices":[{"delta":{"content":"hi"}}]}"#;
        let events: Vec<_> = decode(
            frames(&[chunk]),
            OpenAiDecoder::default(),
            Duration::from_secs(5),
        )
        .collect()
        .await;
        assert_eq!(events[0], Ok(StreamEvent::TextDelta("hi".into())));
        let Err(LlmError::Protocol(message)) = &events[1] else {
            panic!("{events:?}");
        };
        assert!(message.contains("ended early"), "{message}");
        assert_eq!(events.len(), 2);
    }

    #[tokio::test]
    async fn silence_is_a_timeout_and_events_after_the_end_marker_are_not_read() {
        let silent = Box::pin(futures_util::stream::pending());
        let events: Vec<_> = decode(silent, OpenAiDecoder::default(), Duration::from_millis(50))
            .collect()
            .await;
        assert!(
            matches!(events[..], [Err(LlmError::Timeout(_))]),
            "{events:?}"
        );
        let done = frames(&["[DONE]", "{not read"]);
        let events: Vec<_> = decode(done, OpenAiDecoder::default(), Duration::from_secs(5))
            .collect()
            .await;
        assert_eq!(events, [Ok(StreamEvent::Finished { stop_reason: None })]);
    }
}
