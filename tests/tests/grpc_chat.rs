//! The gRPC chat service on the controller's HTTP listener: `Ask` streams a turn's events
//! (the same names and JSON data as the SSE chat), refuses a missing or wrong token, and
//! the standard health service answers SERVING.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::time::Duration;

use serde_json::json;
use tonic::transport::Channel;
use vigil_proto::chat::v1::AskRequest;
use vigil_proto::chat::v1::chat_client::ChatClient;
use vigil_tests::chat::{ChatEvent, ChatHost, scripted_llm_args};
use vigil_tests::model_server::{Protocol, Reply, ScriptedModel};

fn ask(message: &str, token: Option<&str>) -> tonic::Request<AskRequest> {
    let mut request = tonic::Request::new(AskRequest {
        message: message.into(),
        ..Default::default()
    });
    if let Some(token) = token {
        request
            .metadata_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
    }
    request
}

#[tokio::test(flavor = "multi_thread")]
async fn ask_streams_the_turns_events_and_health_is_serving() {
    let model = ScriptedModel::start(Protocol::OpenAi).await;
    let ChatHost {
        ctrl,
        host,
        agent: _agent,
    } = ChatHost::start(scripted_llm_args(&model, Protocol::OpenAi)).await;
    model.push(Reply::ToolCalls(vec![(
        "read".into(),
        json!({"action": "exec", "resource_id": host, "command": "uptime"}),
    )]));
    model.push(Reply::Text("It is up.".into()));

    let channel = Channel::from_shared(ctrl.api.base().to_owned())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = ChatClient::new(channel.clone());
    let mut stream = client
        .ask(ask("is the host up?", Some(ctrl.api.token())))
        .await
        .unwrap()
        .into_inner();
    // The gRPC stream carries the same events as the SSE one: each decodes with the one
    // definition of the contract.
    let mut events: Vec<ChatEvent> = Vec::new();
    while let Some(event) = tokio::time::timeout(Duration::from_secs(60), stream.message())
        .await
        .unwrap()
        .unwrap()
    {
        events.push(ChatEvent::decode(&event.event, &event.data_json).unwrap());
    }
    let names: Vec<&str> = events.iter().map(ChatEvent::name).collect();
    assert_eq!(names.first(), Some(&"session"), "{names:?}");
    assert_eq!(names.last(), Some(&"done"), "{names:?}");
    assert!(
        names.contains(&"tool_start") && names.contains(&"tool_output"),
        "{names:?}"
    );
    let end = events.iter().find_map(|e| match e {
        ChatEvent::ToolEnd { name, ok, .. } => Some((name.as_str(), *ok)),
        _ => None,
    });
    assert_eq!(end, Some(("read", true)));
    assert_eq!(vigil_tests::chat::answer(&events), "It is up.");

    for token in [None, Some("vat_wrong")] {
        let status = client.ask(ask("hi", token)).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::Unauthenticated, "{status:?}");
    }
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
    let serving = health
        .check(tonic_health::pb::HealthCheckRequest {
            service: "vigil.chat.v1.Chat".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        serving.status,
        tonic_health::pb::health_check_response::ServingStatus::Serving as i32
    );
}
