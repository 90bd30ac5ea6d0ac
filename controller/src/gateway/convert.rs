//! Conversions between the domain types of `vigil-shared` and the protobuf wire types live
//! in `vigil_proto::convert`, shared with the agent.

pub use vigil_proto::convert::target_to_proto;
