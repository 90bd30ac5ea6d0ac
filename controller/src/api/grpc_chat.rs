//! The gRPC chat service (`vigil.chat.v1.Chat`): `Ask` runs one turn, exactly as `POST
//! /api/ai/chat`, and streams the same events (name and JSON data). Served with the
//! standard gRPC health service on the HTTP listener (HTTP/2 with prior knowledge, or
//! over TLS when the API serves TLS); the caller's Vigil API token goes in the
//! `authorization: Bearer …` metadata.

use std::pin::Pin;

use futures_util::{Stream, StreamExt};
use tokio_stream::wrappers::UnboundedReceiverStream;
use tonic::server::NamedService;
use tonic::{Request, Response, Status};
use vigil_proto::chat::v1::chat_server::{Chat, ChatServer};
use vigil_proto::chat::v1::{AskRequest, ChatEvent};

use crate::Error;
use crate::access::Access;
use crate::approvals::ControlLevel;
use crate::assistant::{Assistant, ChatBody};

/// The `Chat` service.
#[derive(Debug, Clone)]
pub struct ChatService {
    assistant: Assistant,
    access: Access,
}

impl ChatService {
    /// The gRPC face of the chat service; callers are checked by `access`.
    pub fn new(assistant: Assistant, access: Access) -> Self {
        ChatService { assistant, access }
    }
}

/// The routes of the gRPC chat and health services, to merge into the HTTP router (which
/// keeps its own fallback).
pub async fn routes(assistant: Assistant, access: Access) -> axum::Router {
    let (reporter, health) = tonic_health::server::health_reporter();
    reporter.set_serving::<ChatServer<ChatService>>().await;
    let chat = ChatServer::new(ChatService::new(assistant, access));
    axum::Router::new()
        .route_service(&grpc_path(&chat), grpc_body(chat))
        .route_service(&grpc_path(&health), grpc_body(health))
}

fn grpc_path<S: NamedService>(_: &S) -> String {
    format!("/{}/{{*rest}}", S::NAME)
}

/// A gRPC service that takes axum's request bodies.
fn grpc_body<S>(
    service: S,
) -> impl tower::Service<
    axum::http::Request<axum::body::Body>,
    Response = S::Response,
    Error = S::Error,
    Future = S::Future,
> + Clone
+ Send
+ Sync
+ 'static
where
    S: tower::Service<axum::http::Request<tonic::body::Body>> + Clone + Send + Sync + 'static,
{
    tower::ServiceExt::map_request(service, |req: axum::http::Request<axum::body::Body>| {
        req.map(tonic::body::Body::new)
    })
}

type EventStream = Pin<Box<dyn Stream<Item = Result<ChatEvent, Status>> + Send>>;

#[tonic::async_trait]
impl Chat for ChatService {
    type AskStream = EventStream;

    async fn ask(&self, request: Request<AskRequest>) -> Result<Response<EventStream>, Status> {
        let token = request
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .ok_or_else(|| {
                Status::unauthenticated("send a Vigil API token as `authorization: Bearer …`")
            })?
            .to_owned();
        let caller = self
            .access
            .authenticate(&token)
            .await
            .map_err(Status::from)?;
        let ask = request.into_inner();
        let control_level = match ask.control_level.trim() {
            "" => None,
            text => Some(text.parse::<ControlLevel>().map_err(Status::from)?),
        };
        let body = ChatBody {
            session_id: Some(ask.session_id).filter(|s| !s.trim().is_empty()),
            message: ask.message,
            mentions: ask.mentions,
            control_level,
        };
        let events = self
            .assistant
            .start_turn(caller, body)
            .await
            .map_err(|e: Error| Status::from(e))?;
        let stream = UnboundedReceiverStream::new(events).map(|event| {
            Ok(ChatEvent {
                event: event.name().to_owned(),
                data_json: event.data().to_string(),
            })
        });
        Ok(Response::new(Box::pin(stream)))
    }
}
