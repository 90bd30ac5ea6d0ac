//! `vigil-controller` is the central half of Vigil. Host agents dial into its gateway over
//! mutual TLS; people and tools reach it over an HTTP API (and a gRPC chat service); it
//! classifies every command before an agent sees it, turns the model's tool calls into
//! gated reads and approved writes, and records everything in a hash-chained audit log.
//! The overview is `docs/design.md`.
//!
//! Where to start reading:
//! - [`server::start`] wires everything together for `vigil-controller serve`, from a
//!   validated [`config::Config`] (flags, `VIGIL_*` variables, the TOML file).
//! - Agents: [`gateway`] is one TLS listener with a configuration chosen per ClientHello,
//!   the revocation-aware client verifier, enrollment, the agent streams, each agent's
//!   queue and [`gateway::Dispatcher`], which sends commands and routes their events back;
//!   [`agents`] is the in-memory registry of enrolled agents (batched writes, revocation);
//!   [`inventory`] merges their reports into one resource graph with routing chains.
//! - Commands: [`exec`] is the one exec service (route, dispatch, stream, audit, fan-out)
//!   that the API, the assistant's tools and approved writes all use; [`approvals`] is the
//!   write path (pending approvals, decisions, grant signing, running a write once).
//! - The assistant: [`assistant`] runs one chat turn through its gates, [`tools`] is the
//!   model-facing tool contract, [`llm`] the model clients (OpenAI-compatible, Anthropic).
//! - Watching unasked: [`patrol`] runs the built-in checks on a schedule through the exec
//!   service, [`findings`] records what they and Alertmanager's alerts find (and opens
//!   investigations), [`notify`] tells the channels through an outbox in the store.
//! - Edges: [`api`] is the axum HTTP API, [`web`] the embedded web page, [`cli`] the
//!   command line (one module per subcommand; [`policy_cli`] is the output of `policy
//!   check`), [`local_agent`] the agent `--local-agent` supervises.
//! - State and keys: [`store`] is the database (SQLite or PostgreSQL, one set of
//!   migrations), [`audit`] the hash chain, [`pki`] the CA, certificates, grant key and
//!   join tokens, [`data_dir`] the files they live in, [`http_tls`] TLS on the HTTP API,
//!   [`hide_registry`] what an agent on the same host must hide from reads.
//! - Small shared pieces: [`roles`] (viewer < operator < admin), [`metrics`]
//!   (Prometheus), [`clock`] (wall-clock helpers for the edges; logic takes `now`).
//!
//! Errors are one enum, [`Error`], mapped to HTTP and gRPC statuses in one place.

pub mod access;
pub mod agents;
pub mod api;
pub mod approvals;
pub mod assistant;
pub mod audit;
pub mod cli;
pub mod clock;
pub mod cluster;
pub mod config;
pub mod data_dir;
mod error;
pub mod exec;
pub mod findings;
pub mod gateway;
pub mod hide_registry;
pub mod http_tls;
pub mod inventory;
pub mod llm;
pub mod local_agent;
pub mod mcp;
pub mod metrics;
pub mod notify;
pub mod patrol;
pub mod pki;
pub mod policy_cli;
pub mod roles;
pub mod server;
pub mod store;
pub mod tools;
pub mod web;

pub use error::{ApiErrorBody, Error, Result};
