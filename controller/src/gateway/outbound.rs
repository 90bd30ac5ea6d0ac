//! The response stream of `AgentLink.Connect`: the session's outbound queue, ending once
//! the session is closed and everything queued before (a goodbye, an error) was sent.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::sync::mpsc;
use tokio_stream::Stream;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};
use tonic::Status;
use vigil_proto::agent::v1::ControllerMessage;

use crate::agents::sessions::Outgoing;

/// Messages to one agent, until its session closes.
#[derive(Debug)]
pub struct OutboundStream {
    rx: mpsc::Receiver<Outgoing>,
    closed: Pin<Box<WaitForCancellationFutureOwned>>,
}

impl OutboundStream {
    /// The stream of `rx`, ending when `closed` is cancelled and `rx` has nothing ready.
    pub fn new(rx: mpsc::Receiver<Outgoing>, closed: CancellationToken) -> Self {
        OutboundStream {
            rx,
            closed: Box::pin(closed.cancelled_owned()),
        }
    }
}

impl Stream for OutboundStream {
    type Item = Result<ControllerMessage, Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Poll::Ready(item) = self.rx.poll_recv(cx) {
            return Poll::Ready(item.map(|message| *message));
        }
        if self.closed.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_stream::StreamExt;
    use vigil_proto::agent::v1::{Goodbye, controller_message};

    #[tokio::test]
    async fn queued_messages_are_sent_before_the_stream_ends() {
        let (tx, rx) = mpsc::channel(4);
        let token = CancellationToken::new();
        let mut stream = OutboundStream::new(rx, token.clone());
        let goodbye = ControllerMessage {
            kind: Some(controller_message::Kind::Goodbye(Goodbye::default())),
        };
        tx.send(Box::new(Ok(goodbye.clone()))).await.unwrap();
        token.cancel();
        assert_eq!(stream.next().await.unwrap().unwrap(), goodbye);
        assert!(stream.next().await.is_none());
    }
}
