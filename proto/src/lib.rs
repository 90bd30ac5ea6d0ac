//! `vigil-proto` holds the protobuf messages and the gRPC service of the agent link, the one
//! bidirectional stream each host agent keeps open to the controller. The definitions live
//! in `proto/agent.proto`; `build.rs` compiles them with protox and tonic-prost-build, so no
//! system `protoc` is needed. Start at [`agent::v1::AgentMessage`] (agent to controller)
//! and [`agent::v1::ControllerMessage`] (controller to agent). Conversions between these
//! wire types and the domain types of `vigil-shared` are in [`convert`], used by both the
//! controller and the agent.

pub mod codec;
pub mod convert;

/// The `vigil.agent.*` protobuf packages.
pub mod agent {
    /// Version 1 of the agent link (`vigil.agent.v1`), generated from `proto/agent.proto`.
    ///
    /// Lints are relaxed for this module only: the code is generated, not written here.
    #[allow(
        missing_docs,
        missing_debug_implementations,
        clippy::all,
        clippy::pedantic,
        clippy::unwrap_used,
        clippy::expect_used
    )]
    pub mod v1 {
        tonic::include_proto!("vigil.agent.v1");
    }
}

/// The `vigil.chat.*` protobuf packages.
pub mod chat {
    /// Version 1 of the gRPC chat service (`vigil.chat.v1`), generated from
    /// `proto/chat.proto`: `Ask`, one turn with the events of the SSE chat stream.
    #[allow(
        missing_docs,
        missing_debug_implementations,
        clippy::all,
        clippy::pedantic,
        clippy::unwrap_used,
        clippy::expect_used
    )]
    pub mod v1 {
        tonic::include_proto!("vigil.chat.v1");
    }
}

/// The `vigil.cluster.*` protobuf packages.
pub mod cluster {
    /// Version 1 of the link between controller replicas (`vigil.cluster.v1`), generated
    /// from `proto/cluster.proto`: `Exec`, a command forwarded to the replica holding the
    /// agent's stream.
    #[allow(
        missing_docs,
        missing_debug_implementations,
        clippy::all,
        clippy::pedantic,
        clippy::unwrap_used,
        clippy::expect_used
    )]
    pub mod v1 {
        tonic::include_proto!("vigil.cluster.v1");
    }
}

#[cfg(test)]
mod tests {
    use super::agent::v1::{
        ControllerMessage, ExecEvent, ExecMode, ExecRequest, Finished, Grant, PodTarget, Target,
        controller_message, exec_event, finished, target,
    };
    use prost::Message;

    fn pod_target() -> Target {
        Target {
            kind: Some(target::Kind::Pod(PodTarget {
                namespace: "default".into(),
                name: "web-0".into(),
                container: "nginx".into(),
            })),
        }
    }

    #[test]
    fn exec_request_round_trips_through_prost() {
        let request = ExecRequest {
            request_id: "req-1".into(),
            target: Some(pod_target()),
            command: "systemctl restart nginx".into(),
            mode: ExecMode::Write as i32,
            grant: Some(Grant {
                approval_id: "appr-1".into(),
                agent_id: "0b6f3a52-0000-4000-8000-000000000001".into(),
                target: Some(pod_target()),
                command: b"systemctl restart nginx".to_vec(),
                issued_at_unix: 1_700_000_000,
                expires_at_unix: 1_700_000_120,
                nonce: vec![7; 16],
                signature: vec![1; 64],
            }),
            timeout_s: 30,
            output_cap_bytes: 1 << 20,
        };
        let message = ControllerMessage {
            kind: Some(controller_message::Kind::ExecRequest(request.clone())),
        };

        let bytes = message.encode_to_vec();
        let decoded = ControllerMessage::decode(bytes.as_slice()).unwrap();

        assert_eq!(decoded, message);
        let Some(controller_message::Kind::ExecRequest(got)) = decoded.kind else {
            panic!("expected an ExecRequest, got {decoded:?}");
        };
        assert_eq!(got.mode(), ExecMode::Write);
        assert_eq!(got, request);
    }

    #[test]
    fn unknown_mode_decodes_as_unspecified() {
        let request = ExecRequest {
            mode: 42,
            ..ExecRequest::default()
        };
        let decoded = ExecRequest::decode(request.encode_to_vec().as_slice()).unwrap();
        assert_eq!(decoded.mode(), ExecMode::Unspecified);
    }

    #[test]
    fn finished_event_keeps_signal_and_truncation() {
        let event = ExecEvent {
            request_id: "req-2".into(),
            kind: Some(exec_event::Kind::Finished(Finished {
                status: Some(finished::Status::Signal(9)),
                duration_ms: 30_000,
                truncated: true,
            })),
        };
        let decoded = ExecEvent::decode(event.encode_to_vec().as_slice()).unwrap();
        assert_eq!(decoded, event);
    }
}
