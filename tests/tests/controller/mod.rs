//! The controller in process and its built binary, against fake agents over real mutual
//! TLS and real HTTP, on SQLite and PostgreSQL. (These were the controller crate's own
//! integration tests; they live here because they use this crate's support, and a
//! dev-dependency on it made the controller's unit tests link all of it.)
//!
//! - `agent_link`: the AgentLink stream (hello, dispatch, cancellation, revocation,
//!   heartbeats, renewal).
//! - `cli`, `policy_cli`: the `vigil-controller` binary's subcommands.
//! - `gateway_tls`: the gateway's TLS layer and enrollment.
//! - `http_api`: the HTTP API's refusals.
//! - `inventory_api`: `GET /api/resources`.
//! - `registry`: the agent registry against its database.
//! - `state_api`: roles, approvals, audit, readiness and metrics.

mod agent_link;
mod cli;
mod gateway_tls;
mod http_api;
mod inventory_api;
mod policy_cli;
mod registry;
mod state_api;
