//! `vigil-controller` is the central half of Vigil. Host agents dial into its gateway over
//! mutual TLS; people and tools reach it over an HTTP API; it classifies every command
//! before an agent sees it. Later issues add the assistant loop, approvals and audit.
//!
//! Where to start reading:
//! - [`server::start`] wires everything together for `vigil-controller serve`, from a
//!   validated [`config::Config`].
//! - [`pki`]: the CA, the gateway certificate, agent certificates from CSRs, the grant key
//!   and join tokens; [`data_dir`] names the files they live in.
//! - [`store`]: the database (SQLite now, portable SQL for PostgreSQL later).
//! - [`gateway`]: one TLS listener with a configuration chosen per ClientHello, the
//!   revocation-aware client verifier, enrollment, the agent streams and [`gateway::Dispatcher`],
//!   which sends commands and routes their events back.
//! - [`agents`]: listing and revoking agents; [`api`]: the axum HTTP API.
//! - [`cli`]: the command line, one module per subcommand.
//!
//! Errors are one enum, [`Error`], mapped to HTTP and gRPC statuses in one place.

pub mod agents;
pub mod api;
pub mod approvals;
pub mod assistant;
pub mod audit;
pub mod cli;
pub mod clock;
pub mod config;
pub mod data_dir;
mod error;
pub mod exec;
pub mod gateway;
pub mod hide_registry;
pub mod http_tls;
pub mod inventory;
pub mod llm;
pub mod local_agent;
pub mod metrics;
pub mod pki;
pub mod policy_cli;
pub mod roles;
pub mod server;
pub mod store;
pub mod tools;
pub mod web;

pub use error::{ApiErrorBody, Error, Result};
