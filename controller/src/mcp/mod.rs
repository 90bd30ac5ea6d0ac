//! Vigil as a Model Context Protocol server (docs/mcp.md), over the official SDK (`rmcp`):
//! `POST /mcp` (streamable HTTP, [`http`]) behind the API's bearer tokens and an Origin
//! check, and `vigil-controller mcp` (stdio, [`crate::cli::mcp`]) forwarding to it.
//!
//! The tools are the assistant's own (docs/design.md §9.1), listed with annotations from
//! their class and narrowed to reads for a viewer ([`catalog`]); every call runs through
//! the same gates as a chat tool call, with gate state per MCP session or per call, and a
//! write becomes an approval a person decides ([`calls`]). The inventory is offered as
//! resources ([`resources`]); [`handler`] ties them to the protocol.
//!
//! The other way round, [`external`] connects the MCP servers an operator runs and offers
//! their tools to Vigil's own assistant.

pub mod calls;
pub mod catalog;
pub mod external;
pub mod handler;
pub mod http;
pub mod resources;

pub use http::{McpSettings, routes};

#[cfg(test)]
mod props;
