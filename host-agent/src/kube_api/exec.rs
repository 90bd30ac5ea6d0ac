//! Pod exec over the API's websocket (`v5.channel.k8s.io`, else `v4.channel.k8s.io`):
//! every binary message starts with its channel, 1 stdout, 2 stderr, 3 the final
//! `Status` as JSON (4 resize and 255 close are not used: no TTY, no stdin).

use super::client::{Client, Io, api_error_from, segment, with_query};
use super::types::Status;
use super::{Error, Result};
use hyper::StatusCode;
use hyper::header::{AUTHORIZATION, HeaderValue, SEC_WEBSOCKET_PROTOCOL};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{self, Message};

/// The subprotocols offered, newest first.
pub const PROTOCOLS: &str = "v5.channel.k8s.io, v4.channel.k8s.io";
/// Largest websocket message accepted.
const MAX_MESSAGE_BYTES: usize = 4 << 20;

/// An open exec stream.
pub type ExecSocket = WebSocketStream<Box<dyn Io>>;

/// What one message of an exec stream carries.
#[derive(Debug)]
pub enum Frame {
    Stdout(Vec<u8>),
    Stderr(Vec<u8>),
    /// How the command ended.
    Status(Status),
    /// Anything else (empty, text, other channels, ping): ignored.
    Other,
}

/// Decode one websocket message.
pub fn decode(message: Message) -> Frame {
    let Message::Binary(data) = message else {
        return Frame::Other;
    };
    match data.split_first() {
        Some((1, rest)) if !rest.is_empty() => Frame::Stdout(rest.to_vec()),
        Some((2, rest)) if !rest.is_empty() => Frame::Stderr(rest.to_vec()),
        Some((3, rest)) if !rest.is_empty() => {
            Frame::Status(serde_json::from_slice(rest).unwrap_or_else(|e| Status {
                message: Some(format!("the exec status is not valid JSON: {e}")),
                ..Status::default()
            }))
        }
        _ => Frame::Other,
    }
}

impl Client {
    /// Start `argv` in `namespace/pod` (`container`, else the pod's default), stdout and
    /// stderr attached, no stdin, no TTY.
    pub async fn exec(
        &self,
        namespace: &str,
        pod: &str,
        container: Option<&str>,
        argv: &[&str],
    ) -> Result<ExecSocket> {
        let mut query: Vec<(&str, &str)> = argv.iter().map(|a| ("command", *a)).collect();
        if let Some(c) = container {
            query.push(("container", c));
        }
        query.extend([("stdout", "true"), ("stderr", "true")]);
        let path = format!(
            "/api/v1/namespaces/{}/pods/{}/exec",
            segment(namespace),
            segment(pod)
        );
        let scheme = if self.is_tls() { "wss" } else { "ws" };
        let url = format!(
            "{scheme}://{}{}",
            self.authority(),
            self.full_path(&with_query(&path, &query))
        );
        let mut request = url.into_client_request().map_err(ws_error)?;
        let headers = request.headers_mut();
        headers.insert(SEC_WEBSOCKET_PROTOCOL, HeaderValue::from_static(PROTOCOLS));
        if let Some(auth) = self.authorization()? {
            headers.insert(AUTHORIZATION, auth);
        }
        let io = self.connect().await?;
        let config = WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE_BYTES))
            .max_frame_size(Some(MAX_MESSAGE_BYTES));
        let (socket, _) = tokio_tungstenite::client_async_with_config(request, io, Some(config))
            .await
            .map_err(ws_error)?;
        Ok(socket)
    }
}

/// A websocket error; a refused upgrade carries the API's answer.
fn ws_error(e: tungstenite::Error) -> Error {
    match e {
        tungstenite::Error::Http(response) => {
            let code = StatusCode::from_u16(response.status().as_u16())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let body = response.body().as_deref().unwrap_or_default();
            Error::Api(api_error_from(code, body))
        }
        other => Error::WebSocket(Box::new(other)),
    }
}
