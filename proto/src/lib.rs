//! `vigil-proto`: generated protobuf and gRPC types for the agent link.
