//! The wire shapes of a request become domain types through `vigil_proto::convert`, the
//! one place both the agent and the controller use.

pub use vigil_proto::convert::{
    grant_from_proto, grant_to_proto, target_from_proto, target_to_proto,
};
